"""Budget curves and the Theorem 3 check on constructed data."""

from __future__ import annotations

import math

import pytest
from scipy.stats import beta, boschloo_exact, fisher_exact
from statsmodels.stats.proportion import proportion_confint

from gtt_rows import trial
from turinglab.analysis.gtt import TrialPolicy
from turinglab.analysis.gtt_budget import budget_curve, theorem3_check


def clopper_pearson(k: int, n: int) -> tuple[float, float]:
    low = 0.0 if k == 0 else beta.ppf(0.025, k, n - k + 1)
    high = 1.0 if k == n else beta.ppf(0.975, k + 1, n - k)
    return low, high


def turns_rows() -> list[dict]:
    rows = []
    # Budget 1: B accepts A's imitation 3 times of 4 (fooled 3), C once of 2; targets all right.
    rows += [trial("A", "B", False, v, "gtt-turns", 1) for v in (1, 1, 1, 0)]
    rows += [trial("A", "C", False, v, "gtt-turns", 1) for v in (1, 0)]
    rows += [trial("A", "B", True, 1, "gtt-turns", 1) for _ in range(4)]
    # Budget 4: never fooled; one target branch wrong; one silent impostor trial.
    rows += [trial("A", "B", False, 0, "gtt-turns", 4) for _ in range(3)]
    rows += [trial("A", "B", False, None, "gtt-turns", 4)]
    rows += [trial("A", "B", True, v, "gtt-turns", 4) for v in (1, 0)]
    rows += [trial("B", "B", False, 1, "gtt-turns", 1)]  # self-pair: left out by default
    rows += [trial("A", "B", False, 1, "gtt", None)]  # another variant: ignored
    return rows


def test_pooled_budget_curve_by_hand() -> None:
    curve = budget_curve(turns_rows())
    assert curve["budget"].tolist() == [1, 4]
    one, four = curve.iloc[0], curve.iloc[1]
    assert (one["actor"], one["n_actor"], one["fooled"]) == ("*", 6, 4)
    assert one["fooling"] == pytest.approx(4 / 6)
    assert (one["fooling_low"], one["fooling_high"]) == pytest.approx(clopper_pearson(4, 6))
    assert (one["n"], one["successes"]) == (10, 6)
    assert (one["p_low"], one["p_high"]) == pytest.approx(clopper_pearson(6, 10))
    # Budget 4 under "wrong": the silent trial is B failing, so A fooled B once of 4.
    assert (four["n_actor"], four["fooled"], four["n"], four["successes"]) == (4, 1, 6, 4)
    assert curve.attrs["policy"] == TrialPolicy()
    excluded = budget_curve(turns_rows(), missing="exclude").iloc[1]
    assert (excluded["n_actor"], excluded["fooled"]) == (3, 0)
    assert excluded["fooling_high"] == pytest.approx(1 - 0.025 ** (1 / 3))


def test_per_pair_budget_curve_and_self_pairs() -> None:
    curve = budget_curve(turns_rows(), per_pair=True)
    pairs = list(zip(curve["actor"], curve["distinguisher"], curve["budget"], strict=True))
    assert pairs == [("A", "B", 1), ("A", "B", 4), ("A", "C", 1)]
    ac = curve.iloc[2]
    assert (ac["n_actor"], ac["fooled"], ac["n"]) == (2, 1, 2)
    with_self = budget_curve(turns_rows(), per_pair=True, include_self_pairs=True)
    assert ("B", "B") in set(zip(with_self["actor"], with_self["distinguisher"], strict=True))


def test_budget_curve_input_errors() -> None:
    with pytest.raises(ValueError, match="variant"):
        budget_curve(turns_rows(), "gtt")
    with pytest.raises(ValueError, match="no budget"):
        budget_curve([trial("A", "B", True, 1, "gttq-queries", None)], "gttq-queries")
    empty = budget_curve([], "gttq-queries")
    assert empty.empty and "fooling" in empty.columns


def pair_rows(actor, dist, variant, successes, n) -> list[dict]:
    """n trials split evenly between branches, the first `successes` of them right."""
    rows = []
    for i in range(n):
        x_is_target = i % 2 == 0
        right = i < successes
        verdict = int(x_is_target == right)
        rows.append(trial(actor, dist, x_is_target, verdict, variant))
    return rows


def theorem3_rows() -> list[dict]:
    return [
        *pair_rows("A", "B", "gtt", 16, 20),  # d̂ = 0.3
        *pair_rows("A", "B", "gttq", 8, 20),  # d̂^q = −0.1: querying helped A
        *pair_rows("B", "A", "gtt", 10, 20),  # d̂ = 0
        *pair_rows("B", "A", "gttq", 15, 20),  # d̂^q = 0.25: querying hurt B
        *pair_rows("C", "A", "gtt", 0, 20),  # d̂ = −0.5
        *pair_rows("C", "A", "gttq", 20, 20),  # d̂^q = 0.5: a clear violation
        *pair_rows("A", "C", "gtt", 5, 10),  # no gttq data: not compared
    ]


def newcombe(k1: int, n1: int, k2: int, n2: int) -> tuple[float, float]:
    """Newcombe's hybrid score interval for p1 − p2 built from Wilson intervals."""
    p1, p2 = k1 / n1, k2 / n2
    l1, u1 = proportion_confint(k1, n1, method="wilson")
    l2, u2 = proportion_confint(k2, n2, method="wilson")
    diff = p1 - p2
    return diff - math.hypot(p1 - l1, u2 - p2), diff + math.hypot(u1 - p1, p2 - l2)


def test_theorem3_by_hand_and_against_scipy() -> None:
    check = theorem3_check(theorem3_rows(), eps2=0.1)
    effects = {(e.actor, e.distinguisher): e for e in check.pairs}
    assert set(effects) == {("A", "B"), ("B", "A"), ("C", "A")}
    ab = effects[("A", "B")]
    assert (ab.n, ab.successes, ab.n_q, ab.successes_q) == (20, 16, 20, 8)
    assert (ab.d_hat, ab.d_hat_q, ab.diff) == pytest.approx((0.3, -0.1, -0.4))
    assert ab.diff_ci == pytest.approx(newcombe(8, 20, 16, 20))
    table = [[8, 16], [12, 4]]  # columns: gttq sample, gtt sample
    assert ab.p_helps == pytest.approx(boschloo_exact(table, alternative="less").pvalue)
    assert ab.p_hurts == pytest.approx(boschloo_exact(table, alternative="greater").pvalue)
    assert ab.p_helps < 0.05 and not ab.violates
    ba = effects[("B", "A")]
    assert ba.diff == pytest.approx(0.25) and ba.violates  # 0.25 > ½ε₂ = 0.05
    assert not ba.violates_significantly  # n = 20 cannot rule out Δ ≤ 0.05
    ca = effects[("C", "A")]
    assert ca.violates and ca.violates_significantly and ca.p_hurts < 1e-6
    assert [(e.actor, e.distinguisher) for e in check.violations] == [("B", "A"), ("C", "A")]
    assert check.test == "boschloo" and check.policy == TrialPolicy()
    # A large tolerance ε₂ forgives the moderate violation.
    assert not {
        (e.actor, e.distinguisher): e for e in theorem3_check(theorem3_rows(), eps2=0.6).pairs
    }[("B", "A")].violates


def test_theorem3_fisher_option() -> None:
    check = theorem3_check(theorem3_rows(), test="fisher")
    ab = {(e.actor, e.distinguisher): e for e in check.pairs}[("A", "B")]
    assert ab.p_helps == pytest.approx(fisher_exact([[8, 12], [16, 4]], alternative="less").pvalue)
    assert ab.p_two_sided == pytest.approx(fisher_exact([[8, 12], [16, 4]]).pvalue)
    with pytest.raises(ValueError, match="test"):
        theorem3_check(theorem3_rows(), test="t")  # type: ignore[arg-type]
