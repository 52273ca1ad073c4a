"""Confidence distributions and calibration on a hand-made table."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from scipy.stats import beta

from turinglab.human.confidence import calibration_bins, calibration_summary, confidence_summary
from turinglab.human.schema import validate_study


def table() -> pd.DataFrame:
    """Two-party games of witness GPT: (confidence, judged_human). Correct = judged AI."""
    games = [
        (10, True),
        (15, False),
        (50, False),
        (55, False),
        (90, False),
        (100, True),
        (None, True),
    ]
    rows = [
        {
            "game": f"g{j}",
            "interrogator": f"i{j}",
            "witness": "GPT",
            "witness_type": "ai",
            "judged_human": judged,
            "confidence": conf,
        }
        for j, (conf, judged) in enumerate(games)
    ]
    return validate_study(pd.DataFrame(rows))


def test_summary_by_verdict() -> None:
    summary = confidence_summary(table()).set_index("verdict")
    judged_ai = summary.loc["judged AI"]
    assert judged_ai["n"] == 4 and judged_ai["mean"] == pytest.approx((15 + 50 + 55 + 90) / 4)
    assert judged_ai["median"] == pytest.approx(52.5)
    judged_human = summary.loc["judged human"]  # the missing confidence is left out
    assert judged_human["n"] == 2 and judged_human["sd"] == pytest.approx(math.sqrt(4050))


def test_bins_accuracy_and_exact_ci() -> None:
    bins = calibration_bins(table()).set_index("bin")
    assert list(bins.index) == ["0–20", "20–40", "40–60", "60–80", "80–100"]
    assert (bins.loc["0–20", "n"], bins.loc["0–20", "correct"]) == (2, 1)
    assert bins.loc["40–60", "accuracy"] == 1.0
    assert bins.loc["20–40", "n"] == 0 and math.isnan(bins.loc["20–40", "accuracy"])
    # 100 goes in the last bin: 90 correct, 100 wrong
    assert (bins.loc["80–100", "n"], bins.loc["80–100", "correct"]) == (2, 1)
    assert bins.loc["0–20", "ci_low"] == pytest.approx(beta.ppf(0.025, 1, 2))
    assert bins.loc["0–20", "ci_high"] == pytest.approx(beta.ppf(0.975, 2, 1))


def test_brier_ece_overconfidence_by_hand() -> None:
    (c,) = calibration_summary(table())
    implied = [0.55, 0.575, 0.75, 0.775, 0.95, 1.0]
    correct = [0, 1, 1, 1, 1, 0]
    assert c.n == 6 and c.accuracy == pytest.approx(4 / 6)
    assert c.brier == pytest.approx(
        sum((p - y) ** 2 for p, y in zip(implied, correct, strict=True)) / 6
    )
    assert c.overconfidence == pytest.approx(sum(implied) / 6 - 4 / 6)
    # bins: 0–20 → acc ½, mean p 0.5625; 40–60 → acc 1, mean p 0.7625; 80–100 → ½, 0.975
    ece = (2 * abs(0.5 - 0.5625) + 2 * abs(1 - 0.7625) + 2 * abs(0.5 - 0.975)) / 6
    assert c.ece == pytest.approx(ece)
