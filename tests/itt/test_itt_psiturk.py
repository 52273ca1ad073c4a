"""The paper's released judgements: a psiTurk export of the kreimanlab conversation-judging task
(the first two Prolific participants of data/released/, which transcribes them) imported
and scored, against counts made by hand from the transcription."""

from __future__ import annotations

import csv
import json
import os
import tempfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from turinglab.cli import app
from turinglab.itt.psiturk import import_psiturk

RELEASED = Path(__file__).parents[2] / "data" / "released" / "new_results_prolific_first8.csv"


def _first_two_participants() -> Path:
    """The header and the first two participants' rows of the released sample (one row
    each), written once per test process."""
    path = Path(tempfile.gettempdir()) / f"psiturk-sample-{os.getpid()}.csv"
    if not path.exists():
        lines = RELEASED.read_text(encoding="utf-8").splitlines(keepends=True)
        path.write_text("".join(lines[:3]), encoding="utf-8")
    return path


SAMPLE = _first_two_participants()
runner = CliRunner()


def test_import_counts_by_hand() -> None:
    got = import_psiturk(SAMPLE)
    # 2 participants × 31 TEST trials, 3 catch trials each; 2 speakers per scored trial
    assert len(got.trials) == 62 and len(got.judgements) == 2 * 56
    counts = got.facts["counts"]
    assert counts["catch trials (excluded)"] == 6
    assert counts["catch trials answered right"] == 5  # 301 ✓ 302 ✗ 304 ✓ ; 302 ✓ 301 ✓ 304 ✓
    assert counts["rows marked mode=debug (kept)"] == 2
    assert got.facts["true_labels"] == {"AIAI": 16, "HH": 16, "HAI": 11, "AIH": 13}
    first = got.judgements[0]  # conv245 cut to 21: truth AIAI, answered AIH → A said M, B H
    assert (first.item, first.source, first.model, first.label) == (
        "conv245@21#1:A", "machine", "AI", "M",
    )  # fmt: skip
    assert (got.judgements[1].label, first.unit, first.length, first.rt) == (
        "H",
        "conv245",
        21,
        140.944,
    )
    assert first.demographics["education"] == "high school"


def test_score_of_the_import_by_hand(tmp_path: Path) -> None:
    out = tmp_path / "paper"
    done = runner.invoke(
        app, ["itt", "import", str(SAMPLE), "--format", "psiturk", "--out", str(out)]
    )
    assert done.exit_code == 0, done.output
    with (out / "trials.csv").open(newline="") as fh:
        assert sum(1 for r in csv.DictReader(fh) if r["catch"] == "1") == 6
    assert json.loads((out / "study.json").read_text())["kind"] == "psiturk-import"
    scored = runner.invoke(
        app, ["itt", "score", str(out / "judgements.csv"), "--json", "--replicates", "200"]
    )
    assert scored.exit_code == 0, scored.output
    result = json.loads(scored.stdout)
    people = result["per_judge_type"]["human"]
    # by hand: humans called H 26 of 56 times, machines called M 30 of 56 times
    assert people["counts"] == {"hh": 26, "hm": 30, "mh": 26, "mm": 30}
    assert people["p_H_given_H"] == round(26 / 56, 4) and people["p_M_given_M"] == round(30 / 56, 4)
    assert people["detectability"] == 0.5
    lo, hi = people["detectability_ci"]
    assert lo < 0.5 < hi and people["judges"] == 2
    three = result["per_judge_type_and_length"]["human"]["3"]
    assert three["counts"] == {"hh": 6, "hm": 2, "mh": 3, "mm": 1}
    four = result["four_way"]["human judges"]
    assert four["trials"] == 56
    assert four["counts"]["HH"] == {"HH": 4, "HAI": 1, "AIH": 7, "AIAI": 4}
    assert four["counts"]["AIAI"] == {"HH": 5, "HAI": 1, "AIH": 3, "AIAI": 7}
    # 17 right = the participants' own tally (7 + 15) less their 5 right catch trials
    assert four["accuracy"] == round(17 / 56, 4)
    table = runner.invoke(app, ["itt", "score", str(out / "judgements.csv"), "--replicates", "100"])
    assert "4-way confusion, human judges (56 trials" in " ".join(table.output.split())
    assert set(result["four_way_per_length"]["human judges"]) == {
        "3",
        "6",
        "9",
        "12",
        "15",
        "18",
        "21",
        "24",
    }


def test_response_time_and_qualification_rules(tmp_path: Path) -> None:
    quick = import_psiturk(SAMPLE, min_rt=20)
    # P1's trials 10 (18.4 s) and 31 (18.1 s); the 17.6 s one is a catch trial anyway
    assert quick.facts["counts"]["trials answered in 20 s or less (excluded)"] == 2
    assert len(quick.judgements) == 2 * 54
    slow = import_psiturk(SAMPLE, min_rt=150).facts["counts"]  # one judge left with trials
    assert (slow["participants"], slow["participants scored"]) == (2, 1)
    text = SAMPLE.read_text(encoding="utf-8").replace(
        '""topic_accuracy"": ""0.9355""', '""topic_accuracy"": ""0.5""', 1
    )
    weak = tmp_path / "weak.csv"
    weak.write_text(text, encoding="utf-8")
    kept = import_psiturk(weak, qualified_only=True)
    assert kept.facts["counts"]["participants below the topic-accuracy rule"] == 1
    assert {r.judge for r in kept.judgements} == {"debugtsMlv:debugQve4P"}
    assert len(import_psiturk(weak).judgements) == 112  # the rule is an option


def test_bad_exports_are_refused_in_one_line(tmp_path: Path) -> None:
    plain = tmp_path / "plain.csv"
    plain.write_text("a,b\n1,2\n")
    done = runner.invoke(app, ["itt", "import", str(plain), "--out", str(tmp_path / "o")])
    assert done.exit_code == 2
    assert (
        done.output.strip() == f"error: {plain}:1: no datastring column (is this a psiTurk export?)"
    )
    bad = tmp_path / "bad.csv"
    bad.write_text(
        SAMPLE.read_text(encoding="utf-8").replace(
            '""trueLabel"": ""AIAI""', '""trueLabel"": ""XX""', 1
        )
    )
    with pytest.raises(ValueError, match=r"bad.csv:2: column 'datastring': .*trueLabel 'XX'"):
        import_psiturk(bad)
    out = tmp_path / "again"
    assert runner.invoke(app, ["itt", "import", str(SAMPLE), "--out", str(out)]).exit_code == 0
    again = runner.invoke(app, ["itt", "import", str(SAMPLE), "--out", str(out)])
    assert again.exit_code == 2 and "already holds a study" in again.output


def test_score_min_rt_applies_the_response_time_rule(tmp_path: Path) -> None:
    out = tmp_path / "paper"
    assert runner.invoke(app, ["itt", "import", str(SAMPLE), "--out", str(out)]).exit_code == 0
    args = ["itt", "score", str(out / "judgements.csv"), "--json", "--replicates", "100"]
    done = runner.invoke(app, [*args, "--min-rt", "20"])
    assert done.exit_code == 0, done.output
    assert "--min-rt 20: 4 of 112 left out" in done.stderr
    assert json.loads(done.stdout)["overall"]["n"] == 108
    bare = tmp_path / "bare.csv"
    bare.write_text("judge,judge_type,item,source,model,label\np,human,i,human,,H\n")
    refused = runner.invoke(app, ["itt", "score", str(bare), "--min-rt", "3"])
    assert refused.exit_code == 2
    assert refused.output.strip() == "error: --min-rt: 1 judgements have no rt column value"


def test_the_four_way_confusion_has_cluster_bootstrap_intervals() -> None:
    from turinglab.itt.metrics import four_way

    got = four_way(import_psiturk(SAMPLE).judgements, replicates=300)
    assert got is not None
    lo, hi = got["accuracy_ci"]  # type: ignore[index]
    assert lo < round(17 / 56, 4) < hi
    for truth, row in got["rates_ci"].items():  # type: ignore[attr-defined]
        for answer, ci in row.items():
            rate = got["rates"][truth][answer]  # type: ignore[index]
            assert ci is not None and ci[0] <= rate <= ci[1]
    assert got["rates_ci"]["HH"]["HH"][1] < 1.0  # 4 of 16 H-H trials: not anything goes
