"""Logistic GLMM against published lme4 fits, direct numerical integration, statsmodels Logit
(when the random effects vanish) and simulations with known parameters."""

from __future__ import annotations

import numpy as np
import pytest
import statsmodels.api as sm
from scipy import integrate, optimize, special, stats

from turinglab.analysis.glmm import fit_logistic_glmm

# lme4's `cbpp` data (Lesnoff et al. 2004): herd, incidence, size, period — 56 rows, as shipped
# with lme4 (also vincentarelbundock/Rdatasets csv/lme4/cbpp.csv).
CBPP = np.array(
    [
        (1, 2, 14, 1),
        (1, 3, 12, 2),
        (1, 4, 9, 3),
        (1, 0, 5, 4),
        (2, 3, 22, 1),
        (2, 1, 18, 2),
        (2, 1, 21, 3),
        (3, 8, 22, 1),
        (3, 2, 16, 2),
        (3, 0, 16, 3),
        (3, 2, 20, 4),
        (4, 2, 10, 1),
        (4, 0, 10, 2),
        (4, 2, 9, 3),
        (4, 0, 6, 4),
        (5, 5, 18, 1),
        (5, 0, 25, 2),
        (5, 0, 24, 3),
        (5, 1, 4, 4),
        (6, 3, 17, 1),
        (6, 0, 17, 2),
        (6, 0, 18, 3),
        (6, 1, 20, 4),
        (7, 8, 16, 1),
        (7, 1, 10, 2),
        (7, 3, 9, 3),
        (7, 0, 5, 4),
        (8, 12, 34, 1),
        (9, 2, 9, 1),
        (9, 0, 6, 2),
        (9, 0, 8, 3),
        (9, 0, 6, 4),
        (10, 1, 22, 1),
        (10, 1, 22, 2),
        (10, 0, 18, 3),
        (10, 2, 22, 4),
        (11, 0, 25, 1),
        (11, 5, 27, 2),
        (11, 3, 22, 3),
        (11, 1, 22, 4),
        (12, 2, 10, 1),
        (12, 1, 8, 2),
        (12, 0, 6, 3),
        (12, 0, 5, 4),
        (13, 1, 21, 1),
        (13, 2, 24, 2),
        (13, 0, 19, 3),
        (13, 0, 23, 4),
        (14, 11, 19, 1),
        (14, 0, 2, 2),
        (14, 0, 3, 3),
        (14, 0, 2, 4),
        (15, 1, 19, 1),
        (15, 1, 15, 2),
        (15, 1, 15, 3),
        (15, 0, 15, 4),
    ]
)
HERD, INCIDENCE, SIZE, PERIOD = CBPP.T
CBPP_X = np.column_stack([np.ones(56)] + [np.equal(PERIOD, k).astype(float) for k in (2, 3, 4)])
NAMES = ["(Intercept)", "period2", "period3", "period4"]


def fit_cbpp(n_agq: int = 1):
    return fit_logistic_glmm(
        CBPP_X, INCIDENCE, {"herd": HERD}, trials=SIZE, coef_names=NAMES, n_agq=n_agq
    )


def test_cbpp_laplace_matches_published_lme4_output() -> None:
    """glmer(cbind(incidence, size - incidence) ~ period + (1 | herd), family = binomial), the
    example of lme4's ?cbpp / ?glmer. Printed lme4 output (e.g. reproduced in M. Nguyen, "A Guide
    on Data Analysis", §9.6.1, bookdown.org/mike/data_analysis): estimates −1.3983, −0.9919,
    −1.1282, −1.5797; SEs 0.2312, 0.3032, 0.3228, 0.4220; herd variance 0.4123 (SD 0.6421);
    AIC 194.1, logLik −92.0 (−92.03)."""
    fit = fit_cbpp()
    assert fit.method == "Laplace" and fit.converged
    assert fit.n_obs == 56 and fit.n_groups == {"herd": 15}
    np.testing.assert_allclose(fit.estimates, [-1.3983, -0.9919, -1.1282, -1.5797], atol=1e-3)
    assert fit.random_sd["herd"] == pytest.approx(0.6421, abs=1e-3)
    assert fit.random_sd["herd"] ** 2 == pytest.approx(0.4123, abs=2e-3)
    assert fit.log_likelihood == pytest.approx(-92.03, abs=0.01)
    assert round(fit.aic, 1) == 194.1
    # lme4 stops its optimiser slightly short and its finite-difference Hessian gives SEs about
    # 1% smaller than the exact joint-Laplace information; independent joint-Laplace fits report
    # 0.2325/0.3066/0.3266/0.4274 (we match those), so the SEs agree with lme4 to ~0.006.
    np.testing.assert_allclose(fit.std_errors, [0.2312, 0.3032, 0.3228, 0.4220], atol=0.006)
    z_lme4 = [-6.048, -3.272, -3.495, -3.743]
    np.testing.assert_allclose(fit.z_values, z_lme4, atol=0.06)


def test_cbpp_laplace_matches_other_packages_to_four_decimals() -> None:
    """lme4's tests/glmer-1.R records the same Laplace fit by glmmML and glmmADMB:
    −1.39853, −0.99234, −1.12867, −1.58031 (lme4 itself is checked against these at 4e-5)."""
    np.testing.assert_allclose(
        fit_cbpp().estimates, [-1.398532, -0.992337, -1.128670, -1.580310], atol=1e-4
    )


def test_cbpp_adaptive_quadrature_matches_lme4_nagq25() -> None:
    """lme4's tests/glmer-1.R: glmer(..., nAGQ = 25) gives fixef −1.399225, −0.991407,
    −1.127822, −1.579466 (checked there at tolerance 5e-4)."""
    fit = fit_cbpp(n_agq=25)
    assert fit.method == "AGQ(25)"
    np.testing.assert_allclose(
        fit.estimates, [-1.39922533, -0.99140729, -1.12782185, -1.57946627], atol=5e-4
    )


def _herd_loglik(beta: np.ndarray, sd: float, integral: str) -> float:
    """Marginal log-likelihood of the cbpp model, herd by herd, computed independently: by
    adaptive scipy quadrature ("quad") or by a one-dimensional Laplace approximation."""
    total = 0.0
    eta_fixed = CBPP_X @ beta
    for herd in np.unique(HERD):
        rows = np.equal(HERD, herd)
        y, m, eta0 = INCIDENCE[rows], SIZE[rows], eta_fixed[rows]
        log_binom = np.sum(
            special.gammaln(m + 1) - special.gammaln(y + 1) - special.gammaln(m - y + 1)
        )

        def log_integrand(b: float, y=y, m=m, eta0=eta0) -> float:
            eta = eta0 + b
            return float(np.sum(y * eta - m * np.logaddexp(0, eta))) + stats.norm.logpdf(b, 0, sd)

        mode = optimize.minimize_scalar(
            lambda b: -log_integrand(b), bounds=(-5, 5), method="bounded", options={"xatol": 1e-10}
        ).x
        peak = log_integrand(mode)
        if integral == "quad":
            value, _ = integrate.quad(
                lambda b, peak=peak: np.exp(log_integrand(b) - peak),
                -8,
                8,
                points=[mode],
                epsabs=1e-12,
                epsrel=1e-12,
            )
            total += log_binom + peak + np.log(value)
        else:
            p = special.expit(eta0 + mode)
            curvature = np.sum(m * p * (1 - p)) + 1 / sd**2
            total += log_binom + peak + 0.5 * np.log(2 * np.pi / curvature)
    return float(total)


def test_reported_loglik_equals_independent_integration() -> None:
    laplace = fit_cbpp(1)
    beta, sd = np.array(laplace.estimates), laplace.random_sd["herd"]
    assert laplace.log_likelihood == pytest.approx(_herd_loglik(beta, sd, "laplace"), abs=1e-6)
    agq = fit_cbpp(25)
    beta, sd = np.array(agq.estimates), agq.random_sd["herd"]
    assert agq.log_likelihood == pytest.approx(_herd_loglik(beta, sd, "quad"), abs=1e-6)


def test_crossed_laplace_equals_dense_computation() -> None:
    """The block (Schur-complement) algebra for crossed factors against a plain dense Laplace
    computation: û by scipy's BFGS, log det of the full I + ΛZᵀWZΛ by numpy."""
    X, y, groups = simulate_crossed(seed=3, n_i=25, n_m=5, per=4)
    fit = fit_logistic_glmm(X, y, groups)
    beta = np.array(fit.estimates)
    sd = np.array([fit.random_sd["interrogator"], fit.random_sd["model"]])
    n = len(y)
    Z = np.zeros((n, 30))
    Z[np.arange(n), groups["interrogator"]] = sd[0]
    Z[np.arange(n), 25 + groups["model"]] = sd[1]

    def neg_h(u: np.ndarray) -> float:
        eta = X @ beta + Z @ u
        return -float(np.sum(y * eta - np.logaddexp(0, eta)) - 0.5 * u @ u)

    def neg_grad(u: np.ndarray) -> np.ndarray:
        return -(Z.T @ (y - special.expit(X @ beta + Z @ u)) - u)

    u_hat = optimize.minimize(
        neg_h, np.zeros(30), jac=neg_grad, method="BFGS", options={"gtol": 1e-10}
    ).x
    p = special.expit(X @ beta + Z @ u_hat)
    hessian = np.eye(30) + Z.T @ (Z * (p * (1 - p))[:, None])
    dense = -neg_h(u_hat) - 0.5 * np.linalg.slogdet(hessian)[1]
    assert fit.log_likelihood == pytest.approx(dense, abs=1e-6)
    modes = fit.conditional_modes
    np.testing.assert_allclose(
        [modes["model"][str(k)] for k in range(5)], sd[1] * u_hat[25:], atol=1e-5
    )


def simulate_crossed(seed: int, beta=(-0.5, 0.8), sds=(0.8, 0.5), n_i=300, n_m=12, per=6):
    """Interrogators crossed with models, a binary covariate, 0/1 responses."""
    rng = np.random.default_rng(seed)
    inter = np.repeat(np.arange(n_i), per)
    model = rng.integers(0, n_m, size=len(inter))
    x = rng.integers(0, 2, size=len(inter)).astype(float)
    eta = (
        beta[0]
        + beta[1] * x
        + rng.normal(0, sds[0], n_i)[inter]
        + rng.normal(0, sds[1], n_m)[model]
    )
    y = (rng.random(len(eta)) < special.expit(eta)).astype(float)
    return np.column_stack([np.ones_like(x), x]), y, {"interrogator": inter, "model": model}


def test_crossed_random_intercepts_recover_known_parameters() -> None:
    """Tolerance: each β within 3 of its SEs; interrogator SD (300 groups) within 0.2 and model
    SD (12 groups, so its own SE is ≈ 0.13) within 0.3 of the truth."""
    X, y, groups = simulate_crossed(seed=7)
    fit = fit_logistic_glmm(X, y, groups, coef_names=["(Intercept)", "x"])
    assert fit.converged and fit.n_groups == {"interrogator": 300, "model": 12}
    for est, se, true in zip(fit.estimates, fit.std_errors, (-0.5, 0.8), strict=True):
        assert abs(est - true) < 3 * se
    assert fit.random_sd["interrogator"] == pytest.approx(0.8, abs=0.2)
    assert fit.random_sd["model"] == pytest.approx(0.5, abs=0.3)
    assert "Laplace" in fit.summary()


@pytest.mark.slow
def test_crossed_wald_interval_coverage() -> None:
    """30 fixed-seed replicates: the 95% Wald interval of the slope covers 0.8 in ≥ 24 of them
    (with true 95% coverage, fewer than 24 has probability < 0.1%)."""
    covered = 0
    for seed in range(100, 130):
        X, y, groups = simulate_crossed(seed)
        fit = fit_logistic_glmm(X, y, groups)
        covered += abs(fit.estimates[1] - 0.8) < 1.96 * fit.std_errors[1]
    assert covered >= 24


def test_identical_groups_give_zero_variance_and_the_plain_logit_fit() -> None:
    """Ten groups with identical data: the ML random-intercept SD is exactly 0, so the fit must
    equal an ordinary logistic regression (statsmodels Logit), standard errors included."""
    rng = np.random.default_rng(3)
    base_x = rng.normal(size=30)
    base_y = (rng.random(30) < special.expit(0.3 + base_x)).astype(float)
    x, y, g = np.tile(base_x, 10), np.tile(base_y, 10), np.repeat(np.arange(10), 30)
    X = sm.add_constant(x)
    fit = fit_logistic_glmm(X, y, {"g": g})
    logit = sm.Logit(y, X).fit(disp=0)
    assert fit.random_sd["g"] < 1e-3
    np.testing.assert_allclose(fit.estimates, logit.params, atol=1e-5)
    np.testing.assert_allclose(fit.std_errors, logit.bse, rtol=1e-3)
    assert fit.log_likelihood == pytest.approx(logit.llf, abs=1e-6)
    assert any("boundary" in m for m in fit.messages)


def test_no_true_random_effect_is_close_to_plain_logit() -> None:
    rng = np.random.default_rng(11)
    x = rng.normal(size=600)
    y = (rng.random(600) < special.expit(0.3 + x)).astype(float)
    groups = {"a": rng.integers(0, 30, 600), "b": rng.integers(0, 8, 600)}
    X = sm.add_constant(x)
    fit = fit_logistic_glmm(X, y, groups)
    logit = sm.Logit(y, X).fit(disp=0)
    assert max(fit.random_sd.values()) < 0.3
    np.testing.assert_allclose(fit.estimates, logit.params, atol=0.03)
    np.testing.assert_allclose(fit.std_errors, logit.bse, rtol=0.1)


def test_bad_input_is_rejected_with_a_reason() -> None:
    X = np.ones((4, 1))
    with pytest.raises(ValueError, match="trials"):
        fit_logistic_glmm(X, [0, 1, 3, 1], {"g": [1, 1, 2, 2]}, trials=[1, 1, 2, 1])
    with pytest.raises(ValueError, match="finite"):
        fit_logistic_glmm(X, [0, 1, np.nan, 1], {"g": [1, 1, 2, 2]})
    with pytest.raises(ValueError, match="rank-deficient"):
        fit_logistic_glmm(np.ones((4, 2)), [0, 1, 0, 1], {"g": [1, 1, 2, 2]})
    with pytest.raises(ValueError, match="exactly one grouping factor"):
        fit_logistic_glmm(X, [0, 1, 0, 1], {"g": [1, 1, 2, 2], "h": [1, 2, 1, 2]}, n_agq=5)
    with pytest.raises(ValueError, match="'g' has 3 labels"):
        fit_logistic_glmm(X, [0, 1, 0, 1], {"g": [1, 1, 2]})
    with pytest.raises(ValueError, match="grouping factor"):
        fit_logistic_glmm(X, [0, 1, 0, 1], {})
