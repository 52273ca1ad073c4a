"""Win rates: hand-computed rates, exact CIs and tests, corrections, cluster bootstrap, and
recovery of known win rates from simulated studies."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from scipy.stats import beta, binom, hypergeom

from turinglab.human.schema import validate_study
from turinglab.human.simulate import marginal_win_rate, simulate_study
from turinglab.human.winrates import cluster_bootstrap_ci, win_rates, win_rates_frame


def three_party(witness: str, outcomes: list[tuple[str, bool]], start: int = 0) -> list[dict]:
    """Two rows per game; outcomes = (interrogator, AI judged human)."""
    rows = []
    for j, (interrogator, ai_won) in enumerate(outcomes):
        common = {"game": f"{witness}-{start + j}", "interrogator": interrogator}
        rows.append({**common, "witness": witness, "witness_type": "ai", "judged_human": ai_won})
        rows.append(
            {**common, "witness": "human", "witness_type": "human", "judged_human": not ai_won}
        )
    return rows


def tiny() -> pd.DataFrame:
    a = [(f"i{j}", j < 7) for j in range(10)]  # 7 of 10
    b = [(f"i{j}", j < 2) for j in range(10)]  # 2 of 10
    return validate_study(pd.DataFrame(three_party("A", a) + three_party("B", b)))


def clopper_pearson(k: int, n: int) -> tuple[float, float]:
    low = 0.0 if k == 0 else beta.ppf(0.025, k, n - k + 1)
    high = 1.0 if k == n else beta.ppf(0.975, k + 1, n - k)
    return float(low), float(high)


def test_rates_ci_and_tests_by_hand() -> None:
    results = {r.witness: r for r in win_rates(tiny(), n_boot=200)}
    a, b = results["A"], results["B"]
    assert (a.n, a.wins, a.win_rate) == (10, 7, 0.7)
    assert a.interrogator_accuracy == pytest.approx(0.3)
    assert (a.ci_low, a.ci_high) == pytest.approx(clopper_pearson(7, 10), abs=1e-6)
    # P(X ≥ 7 | n=10, ½) = (120 + 45 + 10 + 1)/1024
    assert a.p_greater == pytest.approx(176 / 1024)
    assert a.p_less == pytest.approx(binom.cdf(7, 10, 0.5))
    assert b.p_less == pytest.approx((1 + 10 + 45) / 1024)
    # Wald z of a logistic intercept: logit(0.7) / SE, SE = 1 / sqrt(n p̂ (1 − p̂))
    assert a.wald_z == pytest.approx(math.log(0.7 / 0.3) * math.sqrt(10 * 0.7 * 0.3))
    assert a.chance == 0.5 and a.format == "three-party" and a.n_interrogators == 10


def test_family_corrections_by_hand() -> None:
    results = {r.witness: r for r in win_rates(tiny(), n_boot=200)}
    pa, pb = results["A"].p_greater, results["B"].p_greater  # pa < pb
    assert results["A"].adjusted["greater_reverse_bonferroni"] == pytest.approx(pa / 2)
    assert results["B"].adjusted["greater_reverse_bonferroni"] == pytest.approx(pb / 2)
    assert results["A"].adjusted["greater_holm"] == pytest.approx(min(1, 2 * pa))
    assert results["B"].adjusted["greater_holm"] == pytest.approx(max(min(1, 2 * pa), pb))
    assert results["A"].adjusted["greater_fdr_bh"] == pytest.approx(min(2 * pa, pb))
    ql, qb = results["A"].p_less, results["B"].p_less
    assert results["B"].adjusted["less_reverse_bonferroni"] == pytest.approx(qb / 2)
    assert results["A"].adjusted["less_reverse_bonferroni"] == pytest.approx(ql / 2)
    frame = win_rates_frame(list(results.values()))
    assert {"p_greater_holm", "p_less_fdr_bh", "interrogator_accuracy"} <= set(frame.columns)


def test_reverse_bonferroni_caps_at_one() -> None:
    # three witnesses, all at p_less = 1 → p/3 stays below 1; single witness → p/1 = p ≤ 1
    outcomes = [(f"i{j}", True) for j in range(5)]
    df = validate_study(pd.DataFrame(three_party("A", outcomes)))
    (only,) = win_rates(df, n_boot=100)
    assert only.p_less == 1.0 and only.adjusted["less_reverse_bonferroni"] == 1.0


def test_two_party_against_human_rate_uses_fisher() -> None:
    rows = []
    for j in range(12):  # AI: 4 of 12 judged human
        rows.append(
            {
                "game": f"a{j}",
                "interrogator": f"i{j}",
                "witness": "GPT",
                "witness_type": "ai",
                "judged_human": j < 4,
                "format": "two-party",
            }
        )
    for j in range(10):  # humans: 8 of 10 judged human
        rows.append(
            {
                "game": f"h{j}",
                "interrogator": f"i{j}",
                "witness": "human",
                "witness_type": "human",
                "judged_human": j < 8,
                "format": "two-party",
            }
        )

    (r,) = win_rates(validate_study(pd.DataFrame(rows)), n_boot=100)
    assert r.human_rate == 0.8 and r.n_human == 10
    # Fisher, conditional on 12 judged-human in total out of 22, AI sample of 12:
    # "less" = P(X ≤ 4) with X ~ Hypergeom(M=22, n=12 successes, N=12 draws)
    assert r.p_less_vs_human == pytest.approx(hypergeom.cdf(4, 22, 12, 12))
    assert r.p_greater_vs_human == pytest.approx(hypergeom.sf(3, 22, 12, 12))


def test_bootstrap_resamples_interrogators_as_clusters() -> None:
    # two interrogators: one always fooled, one never. Clustered resamples give 0, ½ or 1,
    # so the 95% interval spans (nearly) [0, 1]; resampling games would give about ±0.22.
    outcomes = [("fooled", True)] * 10 + [("sharp", False)] * 10
    df = validate_study(pd.DataFrame(three_party("A", outcomes)))
    low, high = cluster_bootstrap_ci(df[df["witness_type"] == "ai"], n_boot=400, seed=1)
    assert low == 0.0 and high == 1.0


def test_bootstrap_is_seeded() -> None:
    df = simulate_study({"A": 0.6}, 30, 2, interrogator_sd=1.0, seed=4)
    ai = validate_study(df).query("witness_type == 'ai'")
    assert cluster_bootstrap_ci(ai, n_boot=300, seed=7) == cluster_bootstrap_ci(
        ai, n_boot=300, seed=7
    )


def test_simulated_rates_are_recovered() -> None:
    """Tolerance: each true rate inside its exact 95% CI and within 3 binomial SEs
    (seeded; 400 games per witness)."""
    truth = {"GPT-4.5-PERSONA": 0.73, "LLAMA-PERSONA": 0.56, "ELIZA": 0.23}
    df = validate_study(simulate_study(truth, 400, 3, interrogator_sd=0.0, seed=11))
    for r in win_rates(df, n_boot=300):
        p = truth[r.witness]
        assert r.n == 400
        assert r.ci_low <= p <= r.ci_high
        assert abs(r.win_rate - p) < 3 * math.sqrt(p * (1 - p) / r.n)


def test_simulated_marginal_rate_with_interrogator_effects() -> None:
    """With interrogator_sd = 1 the population rate is the marginal rate; it lies inside
    the cluster-bootstrap 95% CI (seeded; 600 games)."""
    df = validate_study(simulate_study({"A": 0.7}, 300, 2, interrogator_sd=1.0, seed=5))
    (r,) = win_rates(df, n_boot=500)
    target = marginal_win_rate(0.7, 1.0)
    assert target < 0.7  # the logit scale pulls the population rate towards ½
    assert r.boot_low <= target <= r.boot_high
