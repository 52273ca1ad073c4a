"""The study report says "undefined" where the data cannot give a value: a two-party study
with no human-witness games has no reference rate, so its pass criteria are undefined (not
"fail", and no empty set "∅"); a confidence group of one game has no SD (not "nan")."""

from __future__ import annotations

import re
from pathlib import Path

from turinglab.human.simulate import simulate_study
from turinglab.report.human_report import build_study_report


def test_values_the_data_cannot_give_read_undefined(tmp_path: Path) -> None:
    study = simulate_study({"ELIZA": 0.2, "SMOL": 0.4}, 12, 2, seed=3, format="two-party",
                           human_share=0.0, survey=False)  # fmt: skip
    assert (study["witness_type"] == "ai").all()
    # One ELIZA game judged human: its confidence group has one value, hence no SD.
    eliza = study[study["witness"] == "ELIZA"]
    judged = eliza[eliza["judged_human"] == 1].index
    study = study.drop(index=judged[1:])
    path = build_study_report(study, tmp_path)
    html = path.read_text(encoding="utf-8")
    cells = re.findall(r"<td[^>]*>(.*?)</td>", html, re.S)
    assert not [c for c in cells if c.strip().lower() in ("nan", "fail", "∅", "+nan", "-nan")]
    criteria = html[html.index("Pass criteria per AI witness") - 6000 :]
    assert "undefined" in criteria
    assert "undefined" in html[html.index("Confidence (0–100) by verdict") - 4000 :]
