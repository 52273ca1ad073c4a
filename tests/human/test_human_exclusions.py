"""Exclusion rules: whole games go, counts per rule are hand-checked."""

from __future__ import annotations

import math

import pandas as pd

from turinglab.human.exclusions import apply_exclusions
from turinglab.human.schema import validate_study


def game(gid: str, interrogator: str, ai_msgs: float, human_msgs: float, prior: object) -> list:
    common = {"game": gid, "interrogator": interrogator, "prior_participation": prior}
    return [
        {
            **common,
            "witness": "GPT",
            "witness_type": "ai",
            "judged_human": True,
            "interrogator_messages": ai_msgs,
        },
        {
            **common,
            "witness": "human",
            "witness_type": "human",
            "judged_human": False,
            "interrogator_messages": human_msgs,
        },
    ]


def table() -> pd.DataFrame:
    rows = [
        *game("g1", "i1", 3, 4, False),  # kept
        *game("g2", "i1", 1, 4, False),  # short on the AI side → dropped
        *game("g3", "i2", 5, 0, True),  # short and prior → dropped (counted under both rules)
        *game("g4", "i3", 2, 2, True),  # prior → dropped
        *game("g5", "i4", math.nan, 3, None),  # unknown counts/prior → kept, reported unknown
    ]
    return validate_study(pd.DataFrame(rows))


def test_counts_per_rule_and_kept_games() -> None:
    kept, report = apply_exclusions(table())
    assert sorted(kept["game"].unique()) == ["g1", "g5"]
    assert (report.games_before, report.rows_before) == (5, 10)
    assert (report.games_after, report.rows_after) == (2, 4)
    assert report.games_excluded == 3 and report.rows_excluded == 6
    by_rule = {r.rule: r for r in report.rules}
    assert (by_rule["prior_participation"].games, by_rule["prior_participation"].rows) == (2, 4)
    assert (by_rule["few_messages"].games, by_rule["few_messages"].rows) == (2, 4)
    assert by_rule["prior_participation"].games_unknown == 1
    assert by_rule["few_messages"].games_unknown == 1
    text = report.summary()
    assert "3 of 5 games" in text and "1 games unchecked" in text
    assert report.as_dict()["games_after"] == 2


def test_rule_options() -> None:
    kept, report = apply_exclusions(table(), exclude_prior=False, min_messages=3)
    # min 3: g1 (3,4) kept, g2 short, g3 short, g4 (2,2) short now, g5 kept
    assert sorted(kept["game"].unique()) == ["g1", "g5"]
    assert [r.rule for r in report.rules] == ["few_messages"]
    assert report.rules[0].games == 3


def test_nothing_to_exclude() -> None:
    df = validate_study(pd.DataFrame(game("g1", "i1", 2, 2, False)))
    kept, report = apply_exclusions(df)
    assert len(kept) == 2 and report.games_excluded == 0
