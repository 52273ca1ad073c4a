"""Giunti's degree of humanness: hand values, scipy's two-sample tests, a brute-force Koopman."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import brentq, minimize_scalar
from scipy.stats import binomtest, boschloo_exact, chi2, fisher_exact

from turinglab.analysis.humanness import (
    koopman_ratio_ci,
    three_party_humanness,
    two_party_humanness,
)


def test_three_party_hand_values() -> None:
    result = three_party_humanness(73, 100)
    assert result.rate == 0.73 and result.humanness == pytest.approx(1.46)
    assert result.p_value_vs_half == pytest.approx(binomtest(73, 100, 0.5).pvalue)
    for level in result.levels:
        low, high = level.rate_range
        assert level.humanness_range == pytest.approx((2 * low, 2 * high))
        # Compatible = the exact two-sided test does not reject (scipy), at 0.5 and at 0.3.
        assert level.absolute_criterion_compatible == (binomtest(73, 100, 0.5).pvalue > level.alpha)
        assert level.turing_benchmark_compatible == (binomtest(73, 100, 0.3).pvalue > level.alpha)
    assert [level.alpha for level in result.levels] == [0.05, 0.01]


def test_three_party_at_chance_passes_the_absolute_criterion() -> None:
    result = three_party_humanness(15, 30)
    assert result.humanness == pytest.approx(1.0)
    assert all(level.absolute_criterion_compatible for level in result.levels)
    assert not three_party_humanness(0, 30).levels[0].absolute_criterion_compatible


def test_three_party_turing_benchmark_boundary() -> None:
    # 9 of 30 (30%): exactly humanness 0.6, which is compatible with itself.
    result = three_party_humanness(9, 30)
    assert result.humanness == pytest.approx(0.6) and result.meets_turing_benchmark
    assert all(level.turing_benchmark_compatible for level in result.levels)


def test_two_party_matches_scipy_and_hand_ratio() -> None:
    result = two_party_humanness(54, 100, 67, 100)
    assert result.humanness == pytest.approx(0.54 / 0.67)
    table = [[54, 46], [67, 33]]
    assert result.fisher_p_two_sided == pytest.approx(fisher_exact(table)[1])
    assert result.boschloo_p_two_sided == pytest.approx(boschloo_exact(table).pvalue)
    for level in result.levels:
        low, high = level.machine_rate_range
        assert level.humanness_fixed_human_rate == pytest.approx((low / 0.67, high / 0.67))
        assert level.absolute_criterion_compatible == (result.fisher_p_two_sided > level.alpha)


def test_two_party_without_any_human_judged_human() -> None:
    result = two_party_humanness(3, 10, 0, 10)
    assert result.humanness is None and result.meets_turing_benchmark is None
    assert any("undefined" in note for note in result.notes)
    assert result.levels[0].humanness_koopman is None


def _koopman_brute(k1: int, n1: int, k2: int, n2: int, alpha: float) -> tuple[float, float]:
    """Koopman's score statistic with the restricted MLE found numerically, then inverted."""

    def statistic(ratio: float) -> float:
        def negative_loglik(p2: float) -> float:
            p1 = ratio * p2
            return -(
                k1 * math.log(p1)
                + (n1 - k1) * math.log(1 - p1)
                + k2 * math.log(p2)
                + (n2 - k2) * math.log(1 - p2)
            )

        fit = minimize_scalar(
            negative_loglik,
            bounds=(1e-12, min(1.0, 1 / ratio) - 1e-12),
            method="bounded",
            options={"xatol": 1e-14},
        )
        p2 = fit.x
        p1 = ratio * p2
        return (k1 - n1 * p1) ** 2 / (n1 * p1 * (1 - p1)) + (k2 - n2 * p2) ** 2 / (
            n2 * p2 * (1 - p2)
        )

    critical = chi2.isf(alpha, 1)
    estimate = (k1 / n1) / (k2 / n2)
    low = brentq(lambda r: statistic(r) - critical, estimate / 50, estimate)
    high = brentq(lambda r: statistic(r) - critical, estimate, estimate * 50)
    return low, high


@pytest.mark.parametrize("case", [(36, 40, 16, 80), (54, 100, 67, 100), (3, 10, 7, 10)])
def test_koopman_interval_matches_brute_force(case: tuple[int, int, int, int]) -> None:
    assert koopman_ratio_ci(*case, alpha=0.05) == pytest.approx(
        _koopman_brute(*case, 0.05), rel=1e-5
    )


def test_koopman_interval_edges() -> None:
    low, high = koopman_ratio_ci(0, 10, 5, 10)
    assert low == 0.0 and 0 < high < 1
    low, high = koopman_ratio_ci(5, 10, 0, 10)
    assert low > 1 and math.isinf(high)
    # Human always judged human (k2 = n2): still a proper interval around 0.3.
    low, high = koopman_ratio_ci(3, 10, 10, 10)
    assert 0 < low < 0.3 < high < 1
    assert np.isfinite([low, high]).all()


@pytest.mark.parametrize(
    ("args", "message"),
    [((5, 4), "cannot exceed"), ((-1, 4), "negative"), ((0, 0), "at least 1")],
)
def test_three_party_bad_input(args: tuple[int, int], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        three_party_humanness(*args)


def test_two_party_bad_input() -> None:
    with pytest.raises(ValueError, match="human_judged_human"):
        two_party_humanness(1, 4, 5, 4)
