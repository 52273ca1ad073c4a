"""turinglab.analysis.stats against hand calculations, scipy/statsmodels and published values."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
import statsmodels.api as sm
from scipy.stats import binom, binomtest, bootstrap, norm
from statsmodels.stats.inter_rater import cohens_kappa
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportion_confint

from turinglab.analysis import stats


def _cases(count: int, seed: int) -> list[tuple[int, int, float]]:
    rng = random.Random(seed)
    cases = []
    for _ in range(count):
        n = rng.randint(1, 150)
        cases.append((rng.randint(0, n), n, rng.choice([0.5, 0.25, 1 / 3, 0.9, rng.random()])))
    return cases


# --- exact test -------------------------------------------------------------------------------


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_exact_test_matches_scipy(alternative: str) -> None:
    for k, n, p in _cases(400, seed=1):
        expected = binomtest(k, n, p, alternative=alternative).pvalue
        assert stats.exact_binomial_test(k, n, p, alternative) == pytest.approx(
            expected, rel=1e-10, abs=1e-300
        )


def test_exact_test_hand_values() -> None:
    # 13 of 16 at ½: the counts as improbable are 0..3 and 13..16, 2·(1+16+120+560)/2^16.
    assert stats.exact_binomial_test(13, 16) == pytest.approx(2 * 697 / 65536, rel=1e-12)
    assert stats.exact_binomial_test(1, 10, alternative="less") == pytest.approx(11 / 1024)
    assert stats.exact_binomial_test(1, 10, alternative="greater") == pytest.approx(1023 / 1024)
    # R's ?binom.test example (Mendel's peas): binom.test(682, 925, p = 3/4) prints 0.3825.
    assert stats.exact_binomial_test(682, 925, 0.75) == pytest.approx(0.3825, abs=5e-5)
    # n = 1: Pr(X = 1) = 0.3 < Pr(X = 0) = 0.7, so only x = 1 counts.
    assert stats.exact_binomial_test(1, 1, 0.3) == pytest.approx(0.3)
    assert stats.exact_binomial_test(0, 1, 0.3) == pytest.approx(1.0)


def test_exact_test_counts_ties_within_tolerance() -> None:
    # At p = ½ the pmf is symmetric; 5 of 10 is the mode, so every count is as probable or less.
    assert stats.exact_binomial_test(5, 10) == pytest.approx(1.0)
    assert stats.exact_binomial_test(3, 10) == pytest.approx(2 * binom.cdf(3, 10, 0.5))


# --- Wald z of the logistic intercept ---------------------------------------------------------


@pytest.mark.parametrize(("k", "n", "chance"), [(73, 100, 0.5), (23, 100, 0.5), (7, 40, 0.3)])
def test_wald_matches_intercept_only_logistic_regression(k: int, n: int, chance: float) -> None:
    outcomes = np.r_[np.ones(k), np.zeros(n - k)]
    offset = np.full(n, math.log(chance / (1 - chance)))
    fit = sm.GLM(outcomes, np.ones((n, 1)), family=sm.families.Binomial(), offset=offset).fit(
        tol=1e-14
    )
    result = stats.wald_test(k, n, chance)
    assert result.z == pytest.approx(fit.tvalues[0], rel=1e-6)
    assert result.p_two_sided == pytest.approx(fit.pvalues[0], rel=1e-6)
    assert result.p_greater == pytest.approx(norm.sf(fit.tvalues[0]), rel=1e-6)
    assert result.p_less == pytest.approx(norm.cdf(fit.tvalues[0]), rel=1e-6)


def test_wald_hand_value() -> None:
    # 13/16: logit = ln(13/3); SE = 1/sqrt(16·13/16·3/16).
    expected = math.log(13 / 3) * math.sqrt(16 * (13 / 16) * (3 / 16))
    assert stats.wald_test(13, 16).z == pytest.approx(expected)


@pytest.mark.parametrize(("k", "n"), [(0, 10), (10, 10), (1, 1)])
def test_wald_undefined_at_the_boundary(k: int, n: int) -> None:
    result = stats.wald_test(k, n)
    assert result.z is None and result.p_two_sided is None and result.p_less is None
    assert result.note is not None and "undefined" in result.note


# --- intervals --------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["exact", "wilson"])
def test_clopper_pearson_and_wilson_match_scipy(method: str) -> None:
    ours = "clopper-pearson" if method == "exact" else "wilson"
    for k, n, _ in _cases(200, seed=2):
        for level in (0.95, 0.99, 0.8):
            expected = binomtest(k, n).proportion_ci(confidence_level=level, method=method)
            low, high = stats.binomial_ci(k, n, level, ours)  # type: ignore[arg-type]
            assert (low, high) == pytest.approx((expected.low, expected.high), abs=1e-12)


def test_jeffreys_matches_statsmodels_inside_and_is_clamped_at_the_edges() -> None:
    for k, n, _ in _cases(200, seed=3):
        low, high = stats.binomial_ci(k, n, 0.95, "jeffreys")
        ref_low, ref_high = proportion_confint(k, n, alpha=0.05, method="jeffreys")
        # Brown, Cai & DasGupta (2001): lower limit 0 at k = 0, upper 1 at k = n.
        assert low == (0.0 if k == 0 else pytest.approx(ref_low, abs=1e-12))
        assert high == (1.0 if k == n else pytest.approx(ref_high, abs=1e-12))


@pytest.mark.parametrize(
    ("k", "n", "expected", "decimals"),
    [
        # BlakerCI (Klaschka) reference manual, binom.blaker.limits examples.
        (3, 10, (0.08726443, 0.61941066), 8),
        (29, 99, (0.2097022, 0.3929079), 7),  # acceptance set has a gap; the hull is reported
        (59, 355, (0.1300807, 0.2090809), 7),  # ditto (the original grid algorithm misses it)
        # contingencytables (Fagerland, Lydersen & Laake) tests: Ligarden 13/16 and 1/100.
        (13, 16, (0.5656, 0.9469), 4),
        (1, 100, (0.0005, 0.0513), 4),
    ],
)
def test_blaker_matches_published_limits(
    k: int, n: int, expected: tuple[float, float], decimals: int
) -> None:
    low, high = stats.binomial_ci(k, n, 0.95, "blaker")
    assert (round(low, decimals), round(high, decimals)) == expected


def test_blaker_gap_is_real() -> None:
    # 29/99: the set is two intervals; check points inside and in the gap by brute force.
    parts = stats.blaker_set(29, 99, 0.05)
    assert len(parts) == 2
    gap_middle = (parts[0][1] + parts[1][0]) / 2
    assert _blaker_p_brute(29, 99, gap_middle) <= 0.05
    assert _blaker_p_brute(29, 99, (parts[1][0] + parts[1][1]) / 2) > 0.05


def _blaker_p_brute(k: int, n: int, p: float) -> float:
    """Blaker's acceptability by its definition, over the whole support."""
    xs = np.arange(n + 1)
    smaller_tail = np.minimum(binom.cdf(xs, n, p), binom.sf(xs - 1, n, p))
    pmf = binom.pmf(xs, n, p)
    return float(min(1.0, pmf[smaller_tail <= smaller_tail[k] * (1 + 1e-7)].sum()))


def _inside(parts: list[tuple[float, float]], p: float) -> bool:
    return any(low <= p <= high for low, high in parts)


def _distance(parts: list[tuple[float, float]], p: float) -> float:
    return min(min(abs(p - low), abs(p - high)) for low, high in parts)


def test_blaker_set_agrees_with_brute_force_acceptability_on_a_grid() -> None:
    grid = np.linspace(0.001, 0.999, 499)
    for n in (1, 2, 5, 12, 25):
        for k in range(n + 1):
            parts = stats.blaker_set(k, n, 0.05)
            cp_low, cp_high = stats.binomial_ci(k, n, 0.95, "clopper-pearson")
            assert cp_low <= parts[0][0] and parts[-1][1] <= cp_high  # Blaker (2000), Theorem 1
            for p in grid:
                if _distance(parts, p) > 1e-9:
                    assert (_blaker_p_brute(k, n, p) > 0.05) == _inside(parts, p), (k, n, p)


@pytest.mark.parametrize(
    ("k", "n", "expected"),
    [
        # Hand: n = 1, k = 1 → p-value p for p < ½ and 1 above, so the set is [α, 1].
        (1, 1, [(0.05, 1.0)]),
        # Hand: n = 2, k = 0 → p-value (1−p)² for p > ½ and ≥ ½ below: [0, 1 − √0.05].
        (0, 2, [(0.0, 1 - math.sqrt(0.05))]),
        # Hand: n = 2, k = 1 → p-value 1 − (1−p)² for p < ⅓: [1 − √0.95, √0.95].
        (1, 2, [(1 - math.sqrt(0.95), math.sqrt(0.95))]),
    ],
)
def test_compatible_p_hand_values(k: int, n: int, expected: list[tuple[float, float]]) -> None:
    parts = stats.compatible_p(k, n, 0.05)
    assert len(parts) == len(expected)
    for got, want in zip(parts, expected, strict=True):
        assert got == pytest.approx(want, abs=1e-12)


def test_sterne_matches_published_example() -> None:
    # exactci::binom.exact(2, 15, p = 0.4, tsmethod = "minlike") as printed in Yabuki (2021),
    # "ゼロからはじめるデータサイエンス入門", §4.4.1: p-value 0.03646, 95% CI 0.0242 to 0.3967.
    low, high = stats.binomial_ci(2, 15, 0.95, "sterne")
    assert (round(low, 4), round(high, 4)) == (0.0242, 0.3967)
    assert stats.exact_binomial_test(2, 15, 0.4) == pytest.approx(0.03646, abs=5e-6)


def test_compatible_p_agrees_with_scipy_binomtest_on_a_grid() -> None:
    grid = np.linspace(0.0005, 0.9995, 160)  # every 0.006: the edges have their own test
    for n in (1, 3, 10, 30, 31):
        for k in range(n + 1):
            parts = stats.compatible_p(k, n, 0.05)
            assert stats.binomial_ci(k, n, 0.95, "sterne") == pytest.approx(
                (parts[0][0], parts[-1][1])
            )
            for p in grid:
                if _distance(parts, p) > 1e-9:
                    significant = binomtest(k, n, p).pvalue <= 0.05
                    assert significant != _inside(parts, p), (k, n, p)


def test_compatible_p_has_gaps_where_the_test_is_not_monotone() -> None:
    parts = stats.compatible_p(1, 30, 0.05)
    assert len(parts) == 2
    gap_middle = (parts[0][1] + parts[1][0]) / 2
    assert binomtest(1, 30, gap_middle).pvalue <= 0.05
    assert binomtest(1, 30, (parts[1][0] + parts[1][1]) / 2).pvalue > 0.05
    # Endpoints are crossings or jumps of scipy's p-value across 0.05.
    for low, high in parts:
        if low > 0:
            assert binomtest(1, 30, low + 1e-9).pvalue > 0.05
            assert binomtest(1, 30, low - 1e-9).pvalue <= 0.05 + 1e-6
        assert binomtest(1, 30, high - 1e-9).pvalue > 0.05


def test_compatible_p_for_large_n_is_fast_and_close_to_wilson() -> None:
    low, high = stats.binomial_ci(33_333, 100_000, 0.95, "sterne")
    wilson = stats.binomial_ci(33_333, 100_000, 0.95, "wilson")
    assert (low, high) == pytest.approx(wilson, abs=2e-4)


# --- adjustment -------------------------------------------------------------------------------

P_FAMILY = [0.01, 0.04, 0.03, 0.005, 0.2, 0.04]


@pytest.mark.parametrize(
    ("ours", "theirs"), [("bonferroni", "bonferroni"), ("holm", "holm"), ("fdr_bh", "fdr_bh")]
)
def test_adjustment_matches_statsmodels(ours: str, theirs: str) -> None:
    expected = multipletests(P_FAMILY, method=theirs)[1]
    assert stats.adjust_pvalues(P_FAMILY, ours) == pytest.approx(list(expected))  # type: ignore[arg-type]


def test_reverse_bonferroni_divides_by_family_size() -> None:
    assert stats.adjust_pvalues([0.2, 0.06, 1.0], "reverse-bonferroni") == pytest.approx(
        [0.2 / 3, 0.02, 1 / 3]
    )
    assert stats.adjust_pvalues([], "holm") == []


@pytest.mark.parametrize(
    ("pvalues", "method"), [([0.1, 1.2], "holm"), ([float("nan")], "holm"), ([0.1], "sidak")]
)
def test_adjustment_rejects_bad_input(pvalues: list[float], method: str) -> None:
    with pytest.raises(ValueError):
        stats.adjust_pvalues(pvalues, method)  # type: ignore[arg-type]


# --- bootstrap --------------------------------------------------------------------------------


def test_bootstrap_is_seeded_and_agrees_with_scipy_percentile_bootstrap() -> None:
    data = np.random.default_rng(7).normal(10.0, 2.0, size=80)
    ours = stats.bootstrap_ci(data, np.mean, n_boot=4000, seed=1)
    assert ours == stats.bootstrap_ci(data, np.mean, n_boot=4000, seed=1)
    assert ours != stats.bootstrap_ci(data, np.mean, n_boot=4000, seed=2)
    theirs = bootstrap(
        (data,), np.mean, n_resamples=4000, method="percentile", rng=np.random.default_rng(3)
    ).confidence_interval
    # Two independent Monte Carlo runs of 4000 resamples: endpoints agree to ~0.05 (SE ≈ 0.22).
    assert ours == pytest.approx((theirs.low, theirs.high), abs=0.05)


def test_bootstrap_resamples_rows_as_units() -> None:
    rows = [{"wins": 1, "n": 2}] * 10 + [{"wins": 3, "n": 4}] * 10

    def pooled(sample: list[dict[str, int]]) -> float:
        return sum(r["wins"] for r in sample) / sum(r["n"] for r in sample)

    low, high = stats.bootstrap_ci(rows, pooled, n_boot=500, seed=0)
    assert 0.5 <= low <= 4 / 6 <= high <= 0.75


def test_bootstrap_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="empty"):
        stats.bootstrap_ci([], np.mean)
    with pytest.raises(ValueError, match="level"):
        stats.bootstrap_ci([1.0, 2.0], np.mean, level=1.5)
    with pytest.raises(ValueError, match="not finite"):
        stats.bootstrap_ci([1.0, 2.0], lambda x: float("nan"), n_boot=10)


# --- Cohen's kappa ----------------------------------------------------------------------------


def test_cohen_kappa_hand_example() -> None:
    # 50 items: yes/yes 20, yes/no 5, no/yes 10, no/no 15 → p_o = 0.7, p_e = 0.5, κ = 0.4.
    a = ["yes"] * 25 + ["no"] * 25
    b = ["yes"] * 20 + ["no"] * 5 + ["yes"] * 10 + ["no"] * 15
    assert stats.cohen_kappa(a, b) == pytest.approx(0.4)


def test_cohen_kappa_matches_statsmodels() -> None:
    rng = np.random.default_rng(5)
    a = rng.integers(0, 3, size=200)
    b = np.where(rng.random(200) < 0.6, a, rng.integers(0, 3, size=200))
    table = np.zeros((3, 3))
    for x, y in zip(a, b, strict=True):
        table[x, y] += 1
    assert stats.cohen_kappa(list(a), list(b)) == pytest.approx(cohens_kappa(table).kappa)


def test_cohen_kappa_edge_cases() -> None:
    assert stats.cohen_kappa([1, 0, 1], [1, 0, 1]) == pytest.approx(1.0)
    assert math.isnan(stats.cohen_kappa([1, 1], [1, 1]))
    with pytest.raises(ValueError, match="different numbers"):
        stats.cohen_kappa([1, 0], [1])
    with pytest.raises(ValueError, match="no items"):
        stats.cohen_kappa([], [])


# --- summary and validation -------------------------------------------------------------------


def test_binomial_summary_collects_the_pieces() -> None:
    summary = stats.binomial_summary(7, 40, chance=0.3, alpha=0.01)
    assert summary.p_two_sided == pytest.approx(binomtest(7, 40, 0.3).pvalue)
    assert summary.p_less == pytest.approx(binom.cdf(7, 40, 0.3))
    assert set(summary.ci) == set(stats.CI_METHODS)
    assert summary.ci["clopper-pearson"] == pytest.approx(
        tuple(binomtest(7, 40).proportion_ci(confidence_level=0.99))
    )
    data = summary.to_dict()
    assert data["compatible_p"] == list(summary.compatible_p)
    assert data["wald_z"] == summary.wald.z and data["level"] == pytest.approx(0.99)


@pytest.mark.parametrize(
    ("k", "n", "chance", "alpha", "message"),
    [
        (5, 4, 0.5, 0.05, "cannot exceed"),
        (-1, 4, 0.5, 0.05, "negative"),
        (0, 0, 0.5, 0.05, "at least 1"),
        (1, 4, 1.0, 0.05, "chance"),
        (1, 4, 0.0, 0.05, "chance"),
        (1, 4, 0.5, 1.0, "alpha"),
        (1.5, 4, 0.5, 0.05, "whole number"),
    ],
)
def test_bad_input_is_rejected(k: int, n: int, chance: float, alpha: float, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        stats.binomial_summary(k, n, chance=chance, alpha=alpha)


def test_unknown_interval_method_is_rejected() -> None:
    with pytest.raises(ValueError, match="method"):
        stats.binomial_ci(1, 4, method="agresti")  # type: ignore[arg-type]
