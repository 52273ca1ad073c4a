"""The paper's released conversation judgements (data/released/: the first six participants of
kreimanlab/TuringTest new_results_prolific.csv, transcribed) imported and scored, against counts
made by hand with pandas straight from the psiTurk JSON, not through Turing Lab's code:

    t = trialdata of every TEST trial; s = t[~t.isCatch]
    per speaker: HH→(H,H), HAI→(H,M), AIH→(M,H), AIAI→(M,M) for truth and answer;
    pd.crosstab(truth, said) → H: 77 H, 91 M;  M: 100 H, 68 M
    pd.crosstab(s.trueLabel, s.Aclass); (s.trueLabel == s.Aclass).sum() → 41
    len 3 → H 12/9, M 13/6;  len 24 → H 17/23, M 27/7;  s.hit.nunique() → 105
"""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from turinglab.cli import app

RELEASED = Path(__file__).parents[1] / "data" / "released" / "new_results_prolific_first6.csv"
runner = CliRunner()


def test_released_sample_imports_and_scores_as_counted_by_hand(tmp_path: Path) -> None:
    out = tmp_path / "paper"
    done = runner.invoke(
        app, ["itt", "import", str(RELEASED), "--format", "psiturk", "--out", str(out)]
    )
    assert done.exit_code == 0, done.output
    facts = json.loads((out / "study.json").read_text())
    counts = facts["counts"]
    # 6 × 31 TEST trials; 3 catch trials each, 16 of 18 answered right (P1 and P4 missed 302)
    assert counts["participants"] == 6 and counts["trials scored"] == 168
    assert counts["catch trials (excluded)"] == 18
    assert counts["catch trials answered right"] == 16
    assert facts["true_labels"] == {"AIAI": 48, "HH": 48, "HAI": 33, "AIH": 39}

    scored = runner.invoke(
        app, ["itt", "score", str(out / "judgements.csv"), "--json", "--replicates", "200"]
    )
    assert scored.exit_code == 0, scored.output
    result = json.loads(scored.stdout)
    people = result["per_judge_type"]["human"]
    assert people["counts"] == {"hh": 77, "hm": 91, "mh": 100, "mm": 68}
    assert people["p_H_given_H"] == round(77 / 168, 4)
    assert people["p_M_given_M"] == round(68 / 168, 4)
    assert people["detectability"] == round((77 / 168 + 68 / 168) / 2, 4)
    assert people["judges"] == 6 and people["units"] == 105
    by_length = result["per_judge_type_and_length"]["human"]
    assert by_length["3"]["counts"] == {"hh": 12, "hm": 9, "mh": 13, "mm": 6}
    assert by_length["24"]["counts"] == {"hh": 17, "hm": 23, "mh": 27, "mm": 7}
    four = result["four_way"]["human"]
    assert four["trials"] == 168
    assert four["counts"]["HH"] == {"HH": 11, "HAI": 6, "AIH": 17, "AIAI": 14}
    assert four["counts"]["HAI"] == {"HH": 7, "HAI": 10, "AIH": 10, "AIAI": 6}
    assert four["counts"]["AIH"] == {"HH": 8, "HAI": 12, "AIH": 7, "AIAI": 12}
    assert four["counts"]["AIAI"] == {"HH": 28, "HAI": 1, "AIH": 6, "AIAI": 13}
    # 41 right = the participants' own tallies (7+15+12+8+7+8 = 57) less 16 right catch trials
    assert four["accuracy"] == round(41 / 168, 4)
