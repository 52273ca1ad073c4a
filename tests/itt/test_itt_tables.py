"""The paper's tables from `itt score`, `itt import` and the report (issue 30, item 4): Figure
S3C bootstrap SDs and significance marks beside the 95% intervals, one per-model table per
judge (never pooled across judges), the Figure S4E split with intervals, wrong-topic trials
dropped as the paper does, counts of who is scored, and "undefined" where nothing is defined.

Hand counts on data/released (eight Prolific participants), made straight from the psiTurk JSON
with the csv and json modules, not through Turing Lab:
    wrong topics per participant (non-catch trials, the task's own topic key): 2 2 2 3 2 2 1 2
    = 16, so 224 − 16 = 208 trials scored; the key reproduces every recorded correct_topics
    (29 29 28 28 29 29 30 29 of 31, catch trials included);
    S4E: humans in HH called H 68/128 (28 conversations), in mixed 50/96 (50); machines in
    AIAI called M 36/128 (44), in mixed 41/96 (50)."""

from __future__ import annotations

import csv
import json
import math
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from turinglab.cli import app
from turinglab.itt.judgements import JudgementRow
from turinglab.itt.metrics import score, summarise

RELEASED = Path(__file__).parents[2] / "data" / "released" / "new_results_prolific_first8.csv"
runner = CliRunner()


def _rows(judge: str, judge_type: str, source: str, labels: str, model: str | None = None,
          prefix: str = "u", length: int | None = None) -> list[JudgementRow]:  # fmt: skip
    """One judgement per label, each response its own unit."""
    return [
        JudgementRow(
            judge=judge,
            judge_type=judge_type,  # type: ignore[arg-type]
            item=f"{prefix}{source}{model}{k}",
            source=source,  # type: ignore[arg-type]
            model=model,
            label=label,  # type: ignore[arg-type]
            task="conversation",
            length=length,
        )
        for k, label in enumerate(labels)
    ]


def test_s3c_sd_and_significance_by_hand() -> None:
    # 20 human and 20 machine responses, 15 of each judged right: detectability 0.75
    rows = _rows("svm", "ai", "human", "H" * 15 + "M" * 5)
    rows += _rows("svm", "ai", "machine", "M" * 15 + "H" * 5, "gpt")
    s = summarise(rows, replicates=2000)
    assert s["detectability"] == 0.75
    # by hand: SE of each arm sqrt(.75·.25/20) = 0.0968 (× sqrt(20/19), CR1); detectability
    # is their mean: 0.5·sqrt(2)·0.0968·1.026 = 0.0702
    assert s["sd"]["detectability"] == pytest.approx(0.0702, rel=0.12)
    assert s["sd"]["p_H_given_H"] == pytest.approx(0.0993, rel=0.12)
    assert s["significant"] is True and s["p_vs_chance"] < 0.01
    lo, hi = s["detectability_ci"]
    assert lo > 0.5 and hi < 1.0
    # the paper's code: 20 half-samples of 10 + 10 responses; by hand SD =
    # sqrt(2 · (.1875/10) · (10/19)) / 2 = 0.0702 — 20 replicates, so only roughly
    assert 0.035 < s["detectability_sd_paper"] < 0.11
    chance = _rows("svm", "ai", "human", "HM" * 10) + _rows("svm", "ai", "machine", "MH" * 10, "g")
    even = summarise(chance, replicates=500)
    assert even["detectability"] == 0.5 and even["significant"] is False
    assert even["p_vs_chance"] == 1.0
    # the interval is the inverted test: it excludes 0.5 exactly when p < 0.05
    for got in (s, even):
        lo, hi = got["detectability_ci"]
        assert (lo > 0.5 or hi < 0.5) == got["significant"]
    alone = summarise(_rows("svm", "ai", "human", "HHM"), replicates=200)
    assert alone["detectability"] is None
    assert (alone["p_vs_chance"], alone["significant"], alone["sd"]["detectability"]) == (
        None, None, None,
    )  # fmt: skip


def test_one_per_model_table_per_judge_never_pooled(tmp_path: Path) -> None:
    rows = _rows("p1", "human", "human", "HHHM") + _rows("p1", "human", "machine", "MMHH", "gpt")
    rows += _rows("p2", "human", "machine", "HHHH", "llama", prefix="v")
    rows += _rows("svm-minilm-sentence", "ai", "human", "HHHH")
    rows += _rows("svm-minilm-sentence", "ai", "machine", "MMMM", "gpt")
    rows += _rows("svm-minilm-side@6/seed0", "ai", "human", "HHMM", length=6)
    rows += _rows("svm-minilm-side@6/seed0", "ai", "machine", "HHHM", "gpt", length=6)
    got = score(rows, replicates=200)
    tables = got["per_judge_model"]
    assert set(tables) == {"human judges", "svm-minilm-sentence", "svm-minilm-side"}
    people = tables["human judges"]["conversation"]
    assert set(people) == {"gpt", "llama"}
    # each model against all the people's human responses: 3 of 4 called H
    assert people["gpt"]["counts"] == {"hh": 3, "hm": 1, "mh": 2, "mm": 2}
    assert people["llama"]["counts"] == {"hh": 3, "hm": 1, "mh": 4, "mm": 0}
    assert people["gpt"]["judges"] == 1 and people["llama"]["judges"] == 2
    sentence = tables["svm-minilm-sentence"]["conversation"]["gpt"]
    side = tables["svm-minilm-side"]["conversation"]["gpt"]
    # pooled, the two AI judges were one "ai" row with judges 2 and hh 6 of 8
    assert sentence["counts"] == {"hh": 4, "hm": 0, "mh": 0, "mm": 4} and sentence["judges"] == 1
    assert side["counts"] == {"hh": 2, "hm": 2, "mh": 3, "mm": 1} and side["judges"] == 1
    assert set(got["per_model"]["gpt"]) == set(tables)
    path = tmp_path / "j.csv"
    from turinglab.itt.judgements import save_judgements

    save_judgements(path, rows)
    printed = runner.invoke(app, ["itt", "score", str(path), "--replicates", "200"])
    assert printed.exit_code == 0, printed.output
    text = " ".join(printed.output.split())
    for judge in tables:
        assert f"Per model, {judge}" in text
    assert "Per judge type" not in text and "all judges" not in text
    # llama's judges: p2 saw no human response, so no interval and an undefined test
    assert re.search(r"│ llama │ 8 │ 8 │ 2 │ 0\.750 no interval │ .* │ \? │ undefined │", text)
    assert re.search(r"│ human judges │ 12 │ 12 │ 2 │", text)  # counts as whole numbers


def test_wrong_topic_trials_are_dropped_as_the_paper_does(tmp_path: Path) -> None:
    out = tmp_path / "paper"
    done = runner.invoke(
        app, ["itt", "import", str(RELEASED), "--out", str(out), "--drop-wrong-topic"]
    )
    assert done.exit_code == 0, done.output
    counts = json.loads((out / "study.json").read_text())["counts"]
    assert counts["trials with the wrong topic (excluded)"] == 16
    assert counts["trials scored"] == 208
    assert counts["participants whose recorded topic tally the key reproduces"] == 8
    with (out / "trials.csv").open(newline="") as fh:
        trials = list(csv.DictReader(fh))
    wrong = [t for t in trials if t["topic_right"] == "0"]
    assert len(wrong) == 17  # 16 scored trials and one catch trial (P3's conv301, topic 4)
    first = [(t["trial"], t["conversation"], t["topic"]) for t in wrong[:2]]
    assert first == [("9", "conv130", "4"), ("13", "conv93", "4")]
    scored = runner.invoke(app, ["itt", "score", str(out / "judgements.csv"), "--json",
                                 "--replicates", "100"])  # fmt: skip
    assert json.loads(scored.stdout)["per_judge_family"]["human judges"]["n"] == 2 * 208
    plain = tmp_path / "plain"
    assert runner.invoke(app, ["itt", "import", str(RELEASED), "--out", str(plain)]).exit_code == 0
    with (plain / "trials.csv").open(newline="") as fh:
        assert {t["topic_right"] for t in csv.DictReader(fh)} == {""}  # not asked: not judged


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ('""correct_topics"": 29', '""correct_topics"": 31',
         "the task's topic key gives 29 right topics but the export records 31"),
        ("/static/dataset_new/conv245", "/static/other_set/conv245",
         "no topic key for conversation set dataset_new, other_set"),
    ],
)  # fmt: skip
def test_a_topic_key_that_cannot_be_trusted_is_refused_in_one_line(
    tmp_path: Path, old: str, new: str, message: str
) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text(RELEASED.read_text(encoding="utf-8").replace(old, new, 1), encoding="utf-8")
    done = runner.invoke(
        app, ["itt", "import", str(bad), "--out", str(tmp_path / "o"), "--drop-wrong-topic"]
    )
    assert done.exit_code == 2
    lines = done.output.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and "bad.csv:2" in lines[0], done.output
    assert not (tmp_path / "o").exists()


def test_s4e_split_with_intervals_on_the_released_sample(tmp_path: Path) -> None:
    out = tmp_path / "paper"
    assert runner.invoke(app, ["itt", "import", str(RELEASED), "--out", str(out)]).exit_code == 0
    done = runner.invoke(app, ["itt", "score", str(out / "judgements.csv"), "--json",
                               "--replicates", "400"])  # fmt: skip
    split = json.loads(done.stdout)["conversation_types"]["human judges"]
    by_hand = {"p(H|H) HH": (68, 128, 28), "p(H|H) mixed": (50, 96, 50),
               "p(AI|AI) AIAI": (36, 128, 44), "p(AI|AI) mixed": (41, 96, 50)}  # fmt: skip
    for name, (k, n, conversations) in by_hand.items():
        cell = split[name]
        assert (cell["n"], cell["units"], cell["judges"]) == (n, conversations, 8)
        assert cell["rate"] == pytest.approx(k / n)
        lo, hi = cell["ci"]
        assert lo < k / n < hi and 0.02 < cell["sd"] < 0.2
        # judges differ a lot (one answered "both human" 28 of 31 times): wider than binomial
        assert cell["sd"] > math.sqrt(k / n * (1 - k / n) / n)
    printed = runner.invoke(app, ["itt", "score", str(out / "judgements.csv"),
                                  "--replicates", "200"])  # fmt: skip
    text = " ".join(printed.output.split())
    assert "By conversation type (Figure S4E), human judges" in text
    assert re.search(r"p\(AI\|AI\) AIAI │ 128 │ 44 │ 0\.281 ± 0\.\d{3} \[0\.\d\d, 0\.\d\d\]", text)


def test_the_report_prints_marks_counts_and_undefined(tmp_path: Path) -> None:
    first_two = tmp_path / "two.csv"
    lines = RELEASED.read_text(encoding="utf-8").splitlines(keepends=True)
    first_two.write_text("".join(lines[:3]), encoding="utf-8")
    out = tmp_path / "paper"
    # 150 s: only the first participant has a slower trial, so one of two is scored
    done = runner.invoke(app, ["itt", "import", str(first_two), "--out", str(out),
                               "--min-rt", "150"])  # fmt: skip
    assert done.exit_code == 0, done.output
    report = tmp_path / "r"
    assert runner.invoke(app, ["report", str(out), "--out", str(report)]).exit_code == 0
    html = (report / "itt_report.html").read_text()
    assert re.search(r"people scored</\w+>\s*<\w+[^>]*>1<", html), "one person is scored"
    assert re.search(r"participants in the export</\w+>\s*<\w+[^>]*>2<", html)
    assert "Figure S3C" in html and "paper SD" in html
    assert not re.search(r">\d+\.0<", html)  # counts are whole numbers
    assert "–<" not in html and "undefined" in html  # one trial: undefined rates say so


def _study(tmp_path: Path, name: str, inference: dict[str, object]) -> Path:
    """A study folder judged by one AI judge ("svm") on 12 conversations, with the permutation
    inference `itt judge` stores in study.json."""
    folder = tmp_path / name
    folder.mkdir()
    lines = ["item,task,stimulus_id,source,agent,text,conversation,turn,speaker"]
    rows = []
    for c in range(12):
        source = "human" if c % 2 else "machine"
        agent = "p" if source == "human" else "gpt"
        lines.append(f"c{c}-0,conversation,c{c},{source},{agent},hi {c},c{c},0,A")
        label = "H" if (source == "human") == (c % 3 != 0) else "M"
        for seed in range(3):  # three CV seeds weigh 1/3 each: 6 responses sum to 5.999…
            model = "" if source == "human" else "gpt"
            rows.append(f"svm/seed{seed},ai,c{c}-0,{source},{model},{label}")
    (folder / "responses.csv").write_text("\n".join(lines) + "\n")
    (folder / "judgements.csv").write_text(
        "judge,judge_type,item,source,model,label\n" + "\n".join(rows) + "\n"
    )
    (folder / "study.json").write_text(json.dumps({"ai_judges": {"inference": inference}}))
    return folder


def test_the_report_uses_an_ai_judges_permutation_marks(tmp_path: Path) -> None:
    inference = {"svm": {"detectability_ci": [0.31, 0.97], "p_value": 0.41, "null_sd": 0.123,
                         "note": None}}  # fmt: skip
    html = {}
    for name, given in (("with", inference), ("without", {"other": inference["svm"]})):
        folder = _study(tmp_path, name, given)
        out = tmp_path / f"report-{folder.name}"
        done = runner.invoke(app, ["report", str(folder), "--out", str(out)])
        assert done.exit_code == 0, done.output
        html[folder.name] = (out / "itt_report.html").read_text()
    assert "± 0.12 [0.31, 0.97]" in html["with"] and "p = 0.41" in html["with"]
    # counts print whole: 6 human responses, not "6.0" or "6.00"
    assert re.search(r"<td[^>]*>6</td>", html["with"]) and not re.search(r">6\.0+<", html["with"])
    # with none for this judge, a trained judge has no honest interval: none drawn or printed
    assert "(no interval)" in html["without"] and "[0.31, 0.97]" not in html["without"]
