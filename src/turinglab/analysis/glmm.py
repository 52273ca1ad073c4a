"""Logistic mixed-effects regression with random intercepts (a small `glmer` for binomial data).

Model: y_i ~ Binomial(m_i, logit⁻¹(η_i)), η_i = x_iβ + Σ_f σ_f u_{f, g_f(i)}, u ~ N(0, I).
Random intercepts are written in lme4's "spherical" form (b = σu), so one grouping factor or
several crossed ones (interrogator and model) share the same code.

Estimation maximises the Laplace approximation of the marginal likelihood, as lme4's
`glmer(nAGQ = 1)` does:

    log L(β, σ) ≈ log p(y | û) − ½‖û‖² − ½ log det(I + ΛZᵀWZΛ),

where û (the conditional mode) comes from an inner Newton–Raphson (PIRLS) and W = m p(1−p) at
û. With a single grouping factor the integral factorises by group and adaptive Gauss–Hermite
quadrature with k nodes per group (`n_agq = k`, lme4's nAGQ) is offered; k = 1 is the Laplace fit.

Linear algebra: the rows of the largest factor's block of ZᵀWZ never mix levels, so that block
is diagonal; only the levels of the *other* factors form a dense block (a Schur complement).
Dense work is therefore O(q_rest³) with q_rest = total levels minus those of the largest factor:
fine up to a few thousand such levels (e.g. 1,000 interrogators crossed with 50 models costs a
50×50 Cholesky per Newton step).

Outer optimisation: joint L-BFGS-B over (β, σ) with central-difference gradients. σ itself is
the parameter (as lme4's θ), not log σ, because the ML estimate of a variance component is often
exactly 0 — a point log σ cannot reach; the objective is even in σ, so |σ| is reported. Wald
standard errors come from the inverse of a central-difference Hessian of −log L in (β, σ) at the
optimum (lme4's default for glmer); a σ at the boundary (≈ 0) is held fixed for that step.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray
from scipy import linalg, optimize, sparse, special, stats

FloatArray = NDArray[np.float64]

# The largest factor (e.g. 50,000 interrogators) is handled in sparse/diagonal form at any size;
# the levels of the other factors form a dense block, Cholesky-factorised per Newton step. Past
# this many levels that block would cost gigabytes and minutes: refuse, saying so, rather than
# swap or stall (the stated fallback for fits this module does not scale to).
MAX_DENSE_LEVELS = 4000
_NEWTON_TOL = 1e-10  # on the Newton step for û; tight because the outer gradient is numerical
_BOUNDARY_SD = 1e-4  # a σ below this is treated as sitting on the boundary σ = 0


class GlmmTooLarge(ValueError):
    """The model's crossed factors have too many levels for the dense part of the fit."""


@dataclass(frozen=True)
class GlmmResult:
    """A fitted logistic GLMM. Every printed form states the approximation used (`method`)."""

    coef_names: tuple[str, ...]
    estimates: tuple[float, ...]
    std_errors: tuple[float, ...]
    z_values: tuple[float, ...]
    p_values: tuple[float, ...]  # two-sided, from the Wald z
    random_sd: dict[str, float]
    n_groups: dict[str, int]
    log_likelihood: float  # includes the binomial coefficients, as lme4's logLik does
    aic: float
    n_obs: int
    converged: bool
    method: str  # "Laplace" or "AGQ(k)"
    conditional_modes: dict[str, dict[str, float]] = field(repr=False)  # b̂ = σ û per level
    messages: tuple[str, ...] = ()

    def coefficient(self, name: str) -> dict[str, float]:
        i = self.coef_names.index(name)
        return {
            "estimate": self.estimates[i],
            "se": self.std_errors[i],
            "z": self.z_values[i],
            "p": self.p_values[i],
        }

    def summary(self) -> str:
        lines = [
            f"Logistic mixed model, maximum likelihood ({self.method} approximation)",
            f"n = {self.n_obs}; log-likelihood = {self.log_likelihood:.4f}; AIC = {self.aic:.2f}; "
            f"converged: {'yes' if self.converged else 'NO'}",
            "Random intercepts (SD): "
            + ", ".join(
                f"{f} {sd:.4f} ({self.n_groups[f]} groups)" for f, sd in self.random_sd.items()
            ),
            f"{'term':<24}{'estimate':>10}{'SE':>9}{'z':>8}{'p':>11}",
        ]
        for row in zip(
            self.coef_names,
            self.estimates,
            self.std_errors,
            self.z_values,
            self.p_values,
            strict=True,
        ):
            name, est, se, z, p = row
            lines.append(f"{name:<24}{est:>10.4f}{se:>9.4f}{z:>8.3f}{p:>11.3g}")
        lines += [f"note: {m}" for m in self.messages]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()


class _LogisticGlmm:
    """The likelihood pieces for fixed data; `u_start` warm-starts successive inner solves."""

    def __init__(
        self, X: FloatArray, y: FloatArray, trials: FloatArray, codes: list[NDArray[np.intp]]
    ) -> None:
        self.X, self.y, self.m = X, y, trials
        self.log_binom = float(
            np.sum(
                special.gammaln(trials + 1)
                - special.gammaln(y + 1)
                - special.gammaln(trials - y + 1)
            )
        )
        sizes = [int(c.max()) + 1 for c in codes]
        self.big = int(np.argmax(sizes))  # its block of ZᵀWZ is diagonal
        self.rest = [f for f in range(len(codes)) if f != self.big]
        n = len(y)
        self.big_codes, self.q_big = codes[self.big], sizes[self.big]
        self.z_big = sparse.csr_matrix(
            (np.ones(n), (np.arange(n), self.big_codes)), shape=(n, self.q_big)
        )
        offsets = np.cumsum([0] + [sizes[f] for f in self.rest])
        self.q_rest = int(offsets[-1])
        if self.q_rest > MAX_DENSE_LEVELS:
            raise GlmmTooLarge(
                f"the grouping factors other than the largest have {self.q_rest} levels in all; "
                f"this fit keeps their block dense and allows at most {MAX_DENSE_LEVELS} "
                f"(a {self.q_rest}×{self.q_rest} matrix is "
                f"{self.q_rest**2 * 8 / 2**30:.1f} GiB per Newton step). Group those levels "
                "more coarsely, or make the factor with the most levels the one that varies"
            )
        cols = [codes[f] + offsets[i] for i, f in enumerate(self.rest)]
        self.z_rest = (
            sparse.csr_matrix(
                (
                    np.ones(n * len(cols)),
                    (
                        np.repeat(np.arange(n), len(cols)),
                        np.column_stack(cols).ravel() if cols else [],
                    ),
                ),
                shape=(n, self.q_rest),
            )
            if cols
            else sparse.csr_matrix((n, 0))
        )
        self.rest_factor = np.concatenate(
            [np.full(sizes[f], f) for f in self.rest] or [np.zeros(0, dtype=int)]
        ).astype(int)
        self.u_start = np.zeros(self.q_big + self.q_rest)

    def _scales(self, sd: FloatArray) -> tuple[float, FloatArray]:
        return float(abs(sd[self.big])), np.abs(sd)[self.rest_factor]

    def _eta(self, beta: FloatArray, s_big: float, s_rest: FloatArray, u: FloatArray) -> FloatArray:
        u_big, u_rest = u[: self.q_big], u[self.q_big :]
        return self.X @ beta + s_big * u_big[self.big_codes] + self.z_rest @ (s_rest * u_rest)

    def _conditional_loglik(self, eta: FloatArray) -> float:
        return float(np.sum(self.y * eta - self.m * np.logaddexp(0.0, eta)))

    def _factor(self, w: FloatArray, s_big: float, s_rest: FloatArray) -> tuple[Any, ...]:
        """Blocks of H = I + ΛZᵀWZΛ: diagonal D, coupling B, and the Cholesky of S = C − BᵀD⁻¹B."""
        d = 1.0 + s_big**2 * np.bincount(self.big_codes, weights=w, minlength=self.q_big)
        if self.q_rest == 0:
            return d, None, None
        zw = self.z_rest.multiply(w[:, None]).tocsr()
        b = (self.z_big.T @ zw).toarray() * (s_big * s_rest)[None, :]
        c = (self.z_rest.T @ zw).toarray() * np.outer(s_rest, s_rest)
        c[np.diag_indices_from(c)] += 1.0
        schur = c - b.T @ (b / d[:, None])
        return d, b, linalg.cho_factor(schur, lower=True)

    @staticmethod
    def _solve(blocks: tuple[Any, ...], g: FloatArray) -> FloatArray:
        d, b, chol = blocks
        q_big = len(d)
        if b is None:
            return g / d
        g1, g2 = g[:q_big], g[q_big:]
        x2 = linalg.cho_solve(chol, g2 - b.T @ (g1 / d))
        return np.concatenate([(g1 - b @ x2) / d, x2])

    @staticmethod
    def _logdet(blocks: tuple[Any, ...]) -> float:
        d, b, chol = blocks
        rest = 0.0 if b is None else 2.0 * float(np.sum(np.log(np.diag(chol[0]))))
        return float(np.sum(np.log(d))) + rest

    def modes(self, beta: FloatArray, sd: FloatArray) -> tuple[FloatArray, FloatArray, Any, float]:
        """Newton–Raphson (with step halving) for û; returns û, η̂, H's blocks and log p(y|û)."""
        s_big, s_rest = self._scales(sd)
        u = self.u_start.copy()
        eta = self._eta(beta, s_big, s_rest, u)
        objective = self._conditional_loglik(eta) - 0.5 * u @ u
        for _ in range(100):
            p = special.expit(eta)
            w = self.m * p * (1 - p)
            resid = self.y - self.m * p
            grad = (
                np.concatenate(
                    [
                        s_big * np.bincount(self.big_codes, weights=resid, minlength=self.q_big),
                        s_rest * (self.z_rest.T @ resid),
                    ]
                )
                - u
            )
            step = self._solve(self._factor(w, s_big, s_rest), grad)
            for _halving in range(30):
                u_new = u + step
                eta_new = self._eta(beta, s_big, s_rest, u_new)
                obj_new = self._conditional_loglik(eta_new) - 0.5 * u_new @ u_new
                if obj_new >= objective - 1e-12 * abs(objective):
                    break
                step = step / 2
            u, eta, objective = u_new, eta_new, obj_new
            if np.max(np.abs(step), initial=0.0) < _NEWTON_TOL:
                break
        p = special.expit(eta)
        blocks = self._factor(self.m * p * (1 - p), s_big, s_rest)
        self.u_start = u
        return u, eta, blocks, self._conditional_loglik(eta)

    def laplace(self, beta: FloatArray, sd: FloatArray) -> float:
        u, _eta, blocks, cond = self.modes(beta, sd)
        return self.log_binom + cond - 0.5 * float(u @ u) - 0.5 * self._logdet(blocks)

    def agq(self, beta: FloatArray, sd: FloatArray, n_nodes: int) -> float:
        """Adaptive Gauss–Hermite for a single factor: per group, nodes centred at û_j and
        scaled by the conditional SD 1/√h_j."""
        u, _eta, blocks, _cond = self.modes(beta, sd)
        h = blocks[0]
        nodes, weights = np.polynomial.hermite.hermgauss(n_nodes)
        s = abs(float(sd[0]))
        u_nodes = u[:, None] + np.sqrt(2.0 / h)[:, None] * nodes[None, :]  # (groups, k)
        eta = (self.X @ beta)[:, None] + s * u_nodes[self.big_codes]
        row_ll = self.y[:, None] * eta - self.m[:, None] * np.logaddexp(0.0, eta)
        group_ll = np.stack(
            [
                np.bincount(self.big_codes, weights=row_ll[:, k], minlength=self.q_big)
                for k in range(n_nodes)
            ],
            axis=1,
        )
        terms = np.log(weights) + nodes**2 + group_ll - 0.5 * u_nodes**2
        per_group = special.logsumexp(terms, axis=1) - 0.5 * np.log(h) - 0.5 * np.log(np.pi)
        return self.log_binom + float(np.sum(per_group))


def _glm_start(X: FloatArray, y: FloatArray, m: FloatArray) -> FloatArray:
    """Plain logistic-regression estimates (lightly ridged Newton) as the starting β."""
    beta = np.zeros(X.shape[1])
    for _ in range(50):
        p = special.expit(X @ beta)
        info = X.T @ (X * (m * p * (1 - p))[:, None]) + 1e-8 * np.eye(X.shape[1])
        step = np.linalg.solve(info, X.T @ (y - m * p))
        beta += step
        if np.max(np.abs(step)) < 1e-10:
            break
    return beta


def _central_gradient(f: Any, x: FloatArray, h: float = 1e-5) -> FloatArray:
    g = np.empty_like(x)
    for i in range(len(x)):
        e = np.zeros_like(x)
        e[i] = h * max(1.0, abs(x[i]))
        g[i] = (f(x + e) - f(x - e)) / (2 * e[i])
    return g


def _central_hessian(f: Any, x: FloatArray, h: float = 1e-3) -> FloatArray:
    k = len(x)
    steps = h * np.maximum(1.0, np.abs(x))
    f0 = f(x)
    hess = np.empty((k, k))
    for i in range(k):
        ei = np.zeros(k)
        ei[i] = steps[i]
        hess[i, i] = (f(x + ei) - 2 * f0 + f(x - ei)) / steps[i] ** 2
        for j in range(i):
            ej = np.zeros(k)
            ej[j] = steps[j]
            hess[i, j] = hess[j, i] = (
                f(x + ei + ej) - f(x + ei - ej) - f(x - ei + ej) + f(x - ei - ej)
            ) / (4 * steps[i] * steps[j])
    return hess


def _as_codes(labels: ArrayLike, name: str, n: int) -> tuple[NDArray[np.intp], list[str]]:
    series = pd.Series(np.asarray(labels, dtype=object))
    if len(series) != n:
        raise ValueError(f"grouping factor {name!r} has {len(series)} labels for {n} rows")
    if series.isna().any():
        raise ValueError(f"grouping factor {name!r} has missing labels")
    codes, uniques = pd.factorize(series, sort=True)
    return codes.astype(np.intp), [str(u) for u in uniques]


def fit_logistic_glmm(
    X: ArrayLike | pd.DataFrame,
    y: ArrayLike,
    groups: Mapping[str, ArrayLike],
    *,
    trials: ArrayLike | None = None,
    coef_names: Sequence[str] | None = None,
    n_agq: int = 1,
    start_sd: float = 1.0,
) -> GlmmResult:
    """Fit y ~ X + Σ (1 | group) by maximum (approximate) likelihood.

    X: fixed-effects design (n × p, include the intercept column yourself; a DataFrame's column
    names become coefficient names). y: successes (0/1, or counts out of `trials`). groups: one
    label array per grouping factor (crossed or nested). n_agq > 1 (adaptive Gauss–Hermite)
    needs exactly one grouping factor.
    """
    if isinstance(X, pd.DataFrame) and coef_names is None:
        coef_names = [str(c) for c in X.columns]
    x_mat = np.asarray(X, dtype=float)
    y_vec = np.asarray(y, dtype=float)
    if x_mat.ndim != 2 or y_vec.ndim != 1 or len(y_vec) != len(x_mat):
        raise ValueError(f"X must be n×p and y length n; got X {x_mat.shape}, y {y_vec.shape}")
    n, p = x_mat.shape
    m_vec = np.ones(n) if trials is None else np.asarray(trials, dtype=float)
    if m_vec.shape != (n,):
        raise ValueError(f"trials must have length {n}, got shape {m_vec.shape}")
    if not (
        np.all(np.isfinite(x_mat)) and np.all(np.isfinite(y_vec)) and np.all(np.isfinite(m_vec))
    ):
        raise ValueError("X, y and trials must be finite (no missing values)")
    if np.any(m_vec <= 0) or np.any(y_vec < 0) or np.any(y_vec > m_vec):
        raise ValueError("need trials > 0 and 0 <= y <= trials for every row")
    if np.linalg.matrix_rank(x_mat) < p:
        raise ValueError("fixed-effects design X is rank-deficient (collinear columns)")
    if not groups:
        raise ValueError("at least one grouping factor is needed (otherwise use a plain GLM)")
    names = list(coef_names) if coef_names is not None else [f"x{i}" for i in range(p)]
    if len(names) != p:
        raise ValueError(f"{len(names)} coefficient names for {p} columns of X")
    if n_agq < 1 or (n_agq > 1 and len(groups) != 1):
        raise ValueError("n_agq must be >= 1, and n_agq > 1 needs exactly one grouping factor")
    factor_names = list(groups)
    coded = [_as_codes(groups[f], f, n) for f in factor_names]
    model = _LogisticGlmm(x_mat, y_vec, m_vec, [c for c, _ in coded])

    def negloglik(theta: FloatArray) -> float:
        beta, sd = theta[:p], theta[p:]
        if n_agq > 1:
            return -model.agq(beta, sd, n_agq)
        return -model.laplace(beta, sd)

    start = np.concatenate([_glm_start(x_mat, y_vec, m_vec), np.full(len(coded), start_sd)])
    res = optimize.minimize(
        negloglik,
        start,
        jac=lambda t: _central_gradient(negloglik, t),
        method="L-BFGS-B",
        options={"maxiter": 1000, "ftol": 1e-14, "gtol": 1e-7},
    )
    theta_hat = np.asarray(res.x, dtype=float)
    theta_hat[p:] = np.abs(theta_hat[p:])
    grad = _central_gradient(negloglik, theta_hat)
    converged = bool(res.success) or float(np.max(np.abs(grad))) < 1e-3
    messages = [] if converged else [f"optimizer did not converge: {res.message}"]

    # Wald SEs: Hessian over β and the interior σ's; boundary σ's stay fixed.
    free = list(range(p)) + [p + i for i in range(len(coded)) if theta_hat[p + i] > _BOUNDARY_SD]
    at_boundary = [factor_names[i] for i in range(len(coded)) if theta_hat[p + i] <= _BOUNDARY_SD]
    if at_boundary:
        messages.append(f"random-effect SD estimated at the boundary 0 for {at_boundary}")

    def sub_negloglik(t: FloatArray) -> float:
        full = theta_hat.copy()
        full[free] = t
        return negloglik(full)

    hess = _central_hessian(sub_negloglik, theta_hat[free])
    try:
        cov = np.linalg.inv(hess)
        se = np.sqrt(np.diag(cov)[:p])
        if not np.all(np.isfinite(se)) or np.any(np.diag(cov)[:p] <= 0):
            raise np.linalg.LinAlgError
    except np.linalg.LinAlgError:
        se = np.full(p, np.nan)
        messages.append("Hessian not positive definite: standard errors unavailable")
    beta_hat = theta_hat[:p]
    z = beta_hat / se
    loglik = -negloglik(theta_hat)
    u_hat = model.modes(beta_hat, theta_hat[p:])[0]
    return GlmmResult(
        coef_names=tuple(names),
        estimates=tuple(float(b) for b in beta_hat),
        std_errors=tuple(float(s) for s in se),
        z_values=tuple(float(v) for v in z),
        p_values=tuple(float(2 * stats.norm.sf(abs(v))) for v in z),
        random_sd={f: float(theta_hat[p + i]) for i, f in enumerate(factor_names)},
        n_groups={f: len(levels) for f, (_c, levels) in zip(factor_names, coded, strict=True)},
        log_likelihood=float(loglik),
        aic=float(-2 * loglik + 2 * (p + len(coded))),
        n_obs=n,
        converged=converged,
        method="Laplace" if n_agq == 1 else f"AGQ({n_agq})",
        conditional_modes=_modes_by_level(model, u_hat, theta_hat[p:], factor_names, coded),
        messages=tuple(messages),
    )


def _modes_by_level(
    model: _LogisticGlmm,
    u: FloatArray,
    sd: FloatArray,
    factor_names: list[str],
    coded: list[tuple[NDArray[np.intp], list[str]]],
) -> dict[str, dict[str, float]]:
    """Conditional modes b̂ = σ û per level, undoing the big-factor-first ordering."""
    pieces: dict[int, FloatArray] = {model.big: u[: model.q_big]}
    offset = model.q_big
    for f in model.rest:
        size = len(coded[f][1])
        pieces[f] = u[offset : offset + size]
        offset += size
    return {
        name: {lvl: float(sd[f] * v) for lvl, v in zip(coded[f][1], pieces[f], strict=True)}
        for f, name in enumerate(factor_names)
    }
