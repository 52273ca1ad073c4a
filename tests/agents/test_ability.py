"""Ability model: against statsmodels' GLM on an independently built design, an independent
penalised fit, coverage of the CIs on simulated data with known parameters, m = 2, separation."""

from __future__ import annotations

import math

import numpy as np
import pytest
import statsmodels.api as sm
from scipy import optimize

from turinglab.analysis.ability import (
    AbilityFit,
    Estimate,
    SeparationError,
    compare_with_turing_scores,
    fit_ability,
)
from turinglab.analysis.gtt import TuringScores, turing_scores
from turinglab.analysis.gtt_simulate import AbilityTruth, simulate_fixed

TRUTH4 = AbilityTruth(
    theta={"a": 0.8, "b": 0.0, "c": -0.3, "d": -0.5},
    phi={"a": 0.5, "b": -0.5, "c": 0.3, "d": -0.3},
    bias={"a": 0.2, "b": -0.4, "c": 0.0, "d": 0.5},
    c=1.0,
)


def reference_design(rows: list[dict], agents: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """One row per trial; columns θ_1..θ_{m−1}, φ_1..φ_{m−1} (effect coding: the last agent
    gets −1 in every column), b_1..b_m, c. Response: the judge said 1."""
    m = len(agents)
    cols, ys = [], []
    for r in rows:
        if r["verdict"] is None:
            continue
        x = np.zeros(2 * (m - 1) + m + 1)
        j = agents.index(r["distinguisher"])
        x[2 * (m - 1) + j] = 1
        if r["x_is_target"]:
            x[-1] = 1
        else:
            i = agents.index(r["actor"])
            if i < m - 1:
                x[i] += 1
            else:
                x[: m - 1] -= 1
            if j < m - 1:
                x[m - 1 + j] -= 1
            else:
                x[m - 1 : 2 * (m - 1)] += 1
        cols.append(x)
        ys.append(r["verdict"])
    return np.array(cols), np.array(ys, float)


def test_matches_statsmodels_glm() -> None:
    rows = simulate_fixed(TRUTH4.universe(), 30, seed=1)
    agents = ["a", "b", "c", "d"]
    x, y = reference_design(rows, agents)
    glm = sm.GLM(y, x, family=sm.families.Binomial()).fit()
    fit = fit_ability(rows)
    theta = [fit.theta[a].value for a in agents]
    phi = [fit.phi[a].value for a in agents]
    bias = [fit.bias[a].value for a in agents]
    np.testing.assert_allclose(theta[:3], glm.params[:3], atol=1e-6)
    np.testing.assert_allclose(phi[:3], glm.params[3:6], atol=1e-6)
    np.testing.assert_allclose(bias, glm.params[6:10], atol=1e-6)
    assert fit.c.value == pytest.approx(glm.params[10], abs=1e-6)
    assert sum(theta) == pytest.approx(0, abs=1e-9) and sum(phi) == pytest.approx(0, abs=1e-9)
    np.testing.assert_allclose([fit.theta[a].se for a in "abc"], glm.bse[:3], rtol=1e-5)
    np.testing.assert_allclose([fit.bias[a].se for a in agents], glm.bse[6:10], rtol=1e-5)
    # θ_d = −(θ_a + θ_b + θ_c): its SE from the GLM covariance of the free parameters.
    ones = np.zeros(11)
    ones[:3] = -1
    assert fit.theta["d"].se == pytest.approx(math.sqrt(ones @ glm.cov_params() @ ones), rel=1e-5)
    assert fit.log_likelihood == pytest.approx(glm.llf, abs=1e-6)
    est = fit.theta["a"]
    assert (est.low, est.high) == (
        pytest.approx(est.value - 1.959964 * est.se),
        pytest.approx(est.value + 1.959964 * est.se),
    )


def test_prior_matches_an_independent_penalised_fit() -> None:
    rows = simulate_fixed(TRUTH4.universe(), 10, seed=4)
    agents = ["a", "b", "c", "d"]
    x, y = reference_design(rows, agents)
    sd = 1.5

    def full(beta: np.ndarray) -> np.ndarray:  # (θ, φ, b, c) with the sum-to-zero constraints
        t, p = beta[:3], beta[3:6]
        return np.concatenate([t, [-t.sum()], p, [-p.sum()], beta[6:]])

    def neg_log_posterior(beta: np.ndarray) -> float:
        eta = x @ beta
        return float(
            -(y @ eta - np.logaddexp(0, eta).sum()) + full(beta) @ full(beta) / (2 * sd**2)
        )

    ref = optimize.minimize(neg_log_posterior, np.zeros(11), method="BFGS", options={"gtol": 1e-7})
    fit = fit_ability(rows, prior_sd=sd)
    got = [fit.theta[a].value for a in agents] + [fit.phi[a].value for a in agents]
    got += [fit.bias[a].value for a in agents] + [fit.c.value]
    np.testing.assert_allclose(got, full(ref.x), atol=1e-4)


def _coverage(values: list[bool]) -> float:
    return sum(values) / len(values)


def test_ci_coverage_over_100_simulated_data_sets() -> None:
    hits: dict[str, list[bool]] = {"theta": [], "phi": [], "bias": [], "c": []}
    errors = []
    for seed in range(100):
        fit = fit_ability(simulate_fixed(TRUTH4.universe(), 40, seed=seed))
        for kind in ("theta", "phi", "bias"):
            truth = getattr(TRUTH4, kind)
            for agent, est in getattr(fit, kind).items():
                hits[kind].append(est.low <= truth[agent] <= est.high)
                errors.append(est.value - truth[agent])
        hits["c"].append(fit.c.low <= TRUTH4.c <= fit.c.high)
    coverage = {k: _coverage(v) for k, v in hits.items()}
    print(coverage)  # shown with -s
    for kind in ("theta", "phi", "bias"):
        assert coverage[kind] >= 0.90, (kind, coverage)
    assert coverage["c"] >= 0.88
    assert abs(float(np.mean(errors))) < 0.05  # no systematic offset


def test_m2_with_self_pairs_recovers_the_truth() -> None:
    truth = AbilityTruth(
        theta={"x": 0.6, "y": -0.6}, phi={"x": -0.4, "y": 0.4}, bias={"x": 0.3, "y": -0.8}, c=1.2
    )
    rows = simulate_fixed(truth.universe(), 400, seed=7)  # cells (x,x), (x,y), (y,x), (y,y)
    fit = fit_ability(rows)
    assert fit.agents == ["x", "y"] and fit.n_trials == 1600
    for kind in ("theta", "phi", "bias"):
        for agent, est in getattr(fit, kind).items():
            assert abs(est.value - getattr(truth, kind)[agent]) < 3.5 * est.se, (kind, agent)
    assert fit.theta["x"].value == pytest.approx(-fit.theta["y"].value)
    assert fit.ranking("theta") == ["x", "y"] and fit.ranking("phi") == ["y", "x"]


def test_separation_needs_the_prior() -> None:
    # Judge "y" always answers 0: its bias has no finite MLE.
    truth = AbilityTruth(
        theta={"x": 0.0, "y": 0.0}, phi={"x": 0.0, "y": 0.0}, bias={"x": 0.0, "y": -40.0}, c=1.0
    )
    rows = simulate_fixed(truth.universe(), 20, seed=0)
    assert all(r["verdict"] == 0 for r in rows if r["distinguisher"] == "y")
    with pytest.raises(SeparationError, match="prior_sd"):
        fit_ability(rows)
    fit = fit_ability(rows, prior_sd=2.0)
    assert fit.bias["y"].value < -2.0 < fit.bias["x"].value
    assert all(math.isfinite(e.se) for e in fit.bias.values())


def test_missing_verdicts_are_excluded_by_default() -> None:
    rows = simulate_fixed(TRUTH4.universe(), 20, seed=3)
    extra = {**rows[0], "verdict": None, "correct": None, "status": "no-answer"}
    base, with_missing = fit_ability(rows), fit_ability([*rows, extra, extra])
    assert with_missing.n_excluded == 2 and with_missing.n_trials == base.n_trials
    assert with_missing.theta["a"].value == pytest.approx(base.theta["a"].value)
    as_wrong = fit_ability([*rows, extra], missing="wrong")
    assert as_wrong.n_trials == base.n_trials + 1


def _fit_with(theta: dict[str, float], phi: dict[str, float]) -> AbilityFit:
    est = {a: Estimate(v, 0.1, v - 0.2, v + 0.2) for a, v in theta.items()}
    pest = {a: Estimate(v, 0.1, v - 0.2, v + 0.2) for a, v in phi.items()}
    zero = Estimate(0.0, 0.1, -0.2, 0.2)
    return AbilityFit(list(theta), est, pest, dict.fromkeys(theta, zero), zero, 0.0, 0, 0,
                      "exclude", None, np.zeros((1, 1)))  # fmt: skip


def test_rank_agreement_by_hand() -> None:
    fit = _fit_with({"a": 3, "b": 2, "c": 1, "d": 0}, {"a": 0, "b": 1, "c": 2, "d": 3})
    scores = [
        TuringScores("a", 0.9, 0.1, 0.5, 3),
        TuringScores("b", 0.7, 0.2, 0.45, 3),
        TuringScores("c", 0.8, 0.3, 0.55, 3),  # one swap against θ: τ = (5 − 1)/6
        TuringScores("d", 0.1, 0.4, 0.25, 3),
        TuringScores("e", math.nan, 0.5, math.nan, 0),  # no fit, no F: left out
    ]
    agreement = compare_with_turing_scores(fit, scores)
    assert agreement.agents == ["a", "b", "c", "d"]
    assert agreement.tau_theta_fooling == pytest.approx(4 / 6)
    assert agreement.tau_phi_distinguishing == pytest.approx(1.0)
    with pytest.raises(ValueError, match="two agents"):
        compare_with_turing_scores(fit, scores[:1])


def test_simulated_ability_agrees_with_turing_scores() -> None:
    rows = simulate_fixed(TRUTH4.universe(), 200, seed=9)
    agreement = compare_with_turing_scores(fit_ability(rows), turing_scores(rows))
    assert agreement.tau_theta_fooling == pytest.approx(1.0)
    assert agreement.tau_phi_distinguishing >= 2 / 3


def test_bad_input() -> None:
    rows = simulate_fixed(TRUTH4.universe(), 4, seed=0)
    with pytest.raises(ValueError, match="no trials"):
        fit_ability([])
    only_acts = [r for r in rows if r["distinguisher"] != "d"]
    with pytest.raises(ValueError, match="'d' never judges"):
        fit_ability(only_acts)
    with pytest.raises(ValueError, match="variants"):
        fit_ability([*rows, {**rows[0], "variant": "gttq"}])
    with pytest.raises(ValueError, match="outside"):
        fit_ability(rows, agents=["a", "b"])
    with pytest.raises(ValueError, match="prior_sd"):
        fit_ability(rows, prior_sd=0.0)
