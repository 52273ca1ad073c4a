"""Giunti's pass criteria against a brute-force compatible range computed with scipy."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binomtest, hypergeom

from turinglab.human.criteria import contains, format_intervals, pass_criteria
from turinglab.human.schema import validate_study


def brute_compatible(k: int, n: int, alpha: float) -> tuple[float, float]:
    """Smallest and largest p on a fine grid that the exact two-sided test does not reject."""
    grid = np.linspace(0.0005, 0.9995, 1999)
    kept = [p for p in grid if binomtest(k, n, p).pvalue > alpha]
    return min(kept), max(kept)


def three_party(k: int, n: int, witness: str = "GPT") -> pd.DataFrame:
    rows = []
    for j in range(n):
        common = {"game": f"{witness}{j}", "interrogator": f"i{j}"}
        rows.append({**common, "witness": witness, "witness_type": "ai", "judged_human": j < k})
        rows.append({**common, "witness": "human", "witness_type": "human", "judged_human": j >= k})
    return validate_study(pd.DataFrame(rows))


def test_three_party_ranges_and_humanness() -> None:
    (c,) = pass_criteria(three_party(15, 20))
    assert c.reference_rate == 0.5 and c.humanness == pytest.approx(1.5)
    for intervals, alpha in ((c.compatible_p_05, 0.05), (c.compatible_p_01, 0.01)):
        low, high = brute_compatible(15, 20, alpha)
        assert intervals[0][0] == pytest.approx(low, abs=1e-3)
        assert intervals[-1][1] == pytest.approx(high, abs=1e-3)
    assert c.humanness_range_05[0][0] == pytest.approx(c.compatible_p_05[0][0] / 0.5)
    # 15/20: exact two-sided p = 2·P(X ≥ 15) = 0.041 → rejects ½ at 5%, not at 1%
    assert c.absolute_p_two_sided == pytest.approx(binomtest(15, 20).pvalue)
    assert not c.absolute_pass_05 and c.absolute_pass_01
    assert c.relative_verdict == "above"  # the whole 5% range of h is ≥ 0.6


def test_chance_result_passes_absolute_criterion() -> None:
    (c,) = pass_criteria(three_party(10, 20))
    assert c.absolute_pass_05 and c.absolute_pass_01 and c.humanness == 1.0
    assert c.relative_verdict == "undecided"  # 5% range of h reaches below 0.6
    (low_c,) = pass_criteria(three_party(2, 40))
    assert low_c.relative_verdict == "below"


def test_two_party_uses_human_identification_rate() -> None:
    rows = []
    for j in range(30):  # AI judged human 18 of 30
        rows.append(
            {
                "game": f"a{j}",
                "interrogator": f"i{j}",
                "witness": "GPT",
                "witness_type": "ai",
                "judged_human": j < 18,
            }
        )
    for j in range(25):  # humans judged human 20 of 25 → r = 0.8
        rows.append(
            {
                "game": f"h{j}",
                "interrogator": f"i{j}",
                "witness": "human",
                "witness_type": "human",
                "judged_human": j < 20,
            }
        )

    (c,) = pass_criteria(validate_study(pd.DataFrame(rows)))
    assert c.format == "two-party" and c.reference_rate == 0.8 and c.n_reference == 25
    assert c.humanness == pytest.approx(0.6 / 0.8)
    low, high = brute_compatible(18, 30, 0.05)
    assert c.humanness_range_05[0][0] == pytest.approx(low / 0.8, abs=2e-3)
    assert c.humanness_range_05[-1][1] == pytest.approx(high / 0.8, abs=2e-3)
    # absolute criterion: Fisher's exact two-sided test, summed by hand over the hypergeometric
    # tables (38 judged human in all, 30 AI games of 55) no more probable than the observed one
    pmf = hypergeom(55, 38, 30).pmf
    observed = pmf(18)
    fisher_p = sum(pmf(x) for x in range(0, 31) if pmf(x) <= observed * (1 + 1e-7))
    assert c.absolute_p_two_sided == pytest.approx(fisher_p)
    assert c.absolute_pass_05 == (fisher_p > 0.05) and c.absolute_pass_01 == (fisher_p > 0.01)
    # Koopman interval of the ratio is wider than the fixed-rate one (it carries r's noise)
    (k_low, k_high), (f_low, f_high) = c.humanness_koopman_05[0], c.humanness_range_05[0]
    assert k_low < f_low and k_high > f_high
    assert c.relative_verdict == "undecided"  # 0.6 lies inside the Koopman interval


def test_two_party_without_humans_decides_nothing() -> None:
    rows = [
        {
            "game": f"a{j}",
            "interrogator": "i",
            "witness": "GPT",
            "witness_type": "ai",
            "judged_human": j < 3,
        }
        for j in range(6)
    ]
    (c,) = pass_criteria(validate_study(pd.DataFrame(rows)))
    assert c.relative_verdict == "undecided" and not c.absolute_pass_05
    assert math.isnan(c.humanness) and c.notes


def test_interval_helpers() -> None:
    assert contains([(0.1, 0.2), (0.4, 0.5)], 0.45) and not contains([(0.1, 0.2)], 0.3)
    assert format_intervals([(0.1, 0.2)], 2) == "[0.10, 0.20]" and format_intervals([]) == "∅"
