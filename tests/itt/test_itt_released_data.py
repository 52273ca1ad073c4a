"""The paper's released conversation judgements (data/released/: the first eight participants of
kreimanlab/TuringTest new_results_prolific.csv, transcribed) imported and scored, against counts
made by hand with pandas straight from the psiTurk JSON, not through Turing Lab's code:

    t = trialdata of every TEST trial; s = t[~t.isCatch]
    per speaker: HH→(H,H), HAI→(H,M), AIH→(M,H), AIAI→(M,M) for truth and answer;
    pd.crosstab(truth, said) → H: 118 H, 106 M;  M: 147 H, 77 M
    pd.crosstab(s.trueLabel, s.Aclass); (s.trueLabel == s.Aclass).sum() → 53
    len 3 → H 15/11, M 21/7;  len 24 → H 23/27, M 38/8;  s.hit.nunique() → 122
"""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from turinglab.cli import app

RELEASED = Path(__file__).parents[2] / "data" / "released" / "new_results_prolific_first8.csv"
runner = CliRunner()


def test_released_sample_imports_and_scores_as_counted_by_hand(tmp_path: Path) -> None:
    out = tmp_path / "paper"
    done = runner.invoke(
        app, ["itt", "import", str(RELEASED), "--format", "psiturk", "--out", str(out)]
    )
    assert done.exit_code == 0, done.output
    facts = json.loads((out / "study.json").read_text())
    counts = facts["counts"]
    # 8 × 31 TEST trials; 3 catch trials each, 21 of 24 right (P1, P4 missed 302, P7 301)
    assert counts["participants"] == 8 and counts["trials scored"] == 224
    assert counts["participants scored"] == 8
    assert counts["catch trials (excluded)"] == 24
    assert counts["catch trials answered right"] == 21
    assert facts["true_labels"] == {"AIAI": 64, "HH": 64, "HAI": 44, "AIH": 52}

    scored = runner.invoke(
        app, ["itt", "score", str(out / "judgements.csv"), "--json", "--replicates", "200"]
    )
    assert scored.exit_code == 0, scored.output
    result = json.loads(scored.stdout)
    people = result["per_judge_type"]["human"]
    assert people["counts"] == {"hh": 118, "hm": 106, "mh": 147, "mm": 77}
    assert people["p_H_given_H"] == round(118 / 224, 4)
    assert people["p_M_given_M"] == round(77 / 224, 4)
    assert people["detectability"] == round((118 / 224 + 77 / 224) / 2, 4)
    assert people["judges"] == 8 and people["units"] == 122
    by_length = result["per_judge_type_and_length"]["human"]
    assert by_length["3"]["counts"] == {"hh": 15, "hm": 11, "mh": 21, "mm": 7}
    assert by_length["24"]["counts"] == {"hh": 23, "hm": 27, "mh": 38, "mm": 8}
    four = result["four_way"]["human judges"]
    assert four["trials"] == 224
    assert four["counts"]["HH"] == {"HH": 20, "HAI": 10, "AIH": 18, "AIAI": 16}
    assert four["counts"]["HAI"] == {"HH": 15, "HAI": 11, "AIH": 10, "AIAI": 8}
    assert four["counts"]["AIH"] == {"HH": 16, "HAI": 14, "AIH": 8, "AIAI": 14}
    assert four["counts"]["AIAI"] == {"HH": 42, "HAI": 2, "AIH": 6, "AIAI": 14}
    # 53 right = the participants' own tallies (7+15+12+8+7+8+7+10 = 74) less 21 right catch
    assert four["accuracy"] == round(53 / 224, 4)
