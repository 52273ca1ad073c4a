"""An ability model fitted to all GTT trials at once (logistic, maximum likelihood).

For distinguisher D judging X, the probability that D answers 1 ("X is my own type") is
  actor branch (X = A imitating D):  σ(θ_A − φ_D + b_D)
  self branch  (X = a fresh D):      σ(b_D + c)
θ_A is A's imitation skill, φ_D D's discrimination skill, b_D D's bias toward answering 1 (a
judge that always says 0 has a large negative b_D) and c a common shift. D's log-odds of
accepting itself over accepting A's imitation is c + φ_D − θ_A: c is the typical gap, φ and θ
move it per judge and per actor.

Identification. Only θ_A − φ_D + b_D and b_D + c enter the likelihood, so (θ, φ) can move
together (θ + k, φ + k) and (b, φ, c) can trade (b − k, φ − k, c + k) without changing it. We fix
both by Σθ = 0 and Σφ = 0: θ and φ are skills relative to the universe's average, b_D + c is
D's self-acceptance log-odds and c is the average imitation gap. With those constraints the
model is identified when every agent acts at least once and judges in both branches.

The fit is a binomial logistic regression on cell counts with the constraints built into the
design (sum-to-zero coding), maximised by scipy's trust-region Newton with the analytic
gradient and Hessian. Standard errors come from the observed information; 95% CIs are Wald
intervals. Small universes are often separated (a judge that never says 1 sends b_D to −∞):
pass `prior_sd` to add an independent N(0, prior_sd²) prior on every parameter (a ridge
penalty; then the fit is the posterior mode and the SEs come from the penalised information).

Missing verdicts: by default trials without a verdict are excluded here (policy "exclude"),
since the model describes what the judge answers; any `turinglab.analysis.gtt` MissingPolicy
may be passed instead.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from scipy import optimize, stats

from turinglab.analysis.gtt import MissingPolicy, TuringScores, success

Parameter = Literal["theta", "phi", "bias"]
_SEPARATED_LOGIT = 12.0  # a fitted |log-odds| beyond this (p < 6e-6) means separation


class SeparationError(ValueError):
    """The maximum-likelihood estimate does not exist (perfectly separated data)."""


@dataclass(frozen=True)
class Estimate:
    value: float
    se: float
    low: float  # 95% Wald interval
    high: float


@dataclass(frozen=True)
class AbilityFit:
    agents: list[str]
    theta: dict[str, Estimate]  # imitation skill (Σθ = 0)
    phi: dict[str, Estimate]  # discrimination skill (Σφ = 0)
    bias: dict[str, Estimate]  # b_D, tendency to answer 1
    c: Estimate  # common self-recognition shift
    log_likelihood: float  # without the prior term
    n_trials: int  # trials that entered the fit
    n_excluded: int  # trials the missing policy left out
    missing: MissingPolicy
    prior_sd: float | None
    covariance: np.ndarray  # of (θ, φ, b, c) in `agents` order, 3m + 1 square

    def ranking(self, parameter: Parameter) -> list[str]:
        """Agents from the highest to the lowest estimate of θ, φ or b."""
        values = getattr(self, parameter)
        return sorted(self.agents, key=lambda a: (-values[a].value, a))


@dataclass(frozen=True)
class _Counts:
    design: np.ndarray  # rows: cells × full parameters (θ, φ, b, c)
    says_one: np.ndarray
    trials: np.ndarray
    n_excluded: int


def _counts(
    rows: Iterable[Mapping[str, Any]], agents: list[str], missing: MissingPolicy
) -> _Counts:
    m = len(agents)
    pos = {a: i for i, a in enumerate(agents)}
    cells: dict[tuple[str, str, bool], list[int]] = {}
    excluded = 0
    for row in rows:
        hit = success(row, missing)
        if hit is None:
            excluded += 1
            continue
        x_is_target = bool(row["x_is_target"])
        says_one = hit == x_is_target  # right on the self branch or fooled on the actor branch
        actor = row["actor"] if not x_is_target else ""  # self-branch trials pool per judge
        key = (actor, row["distinguisher"], x_is_target)
        counts = cells.setdefault(key, [0, 0])
        counts[0] += int(says_one)
        counts[1] += 1
    design, ones, trials = [], [], []
    for (actor, judge, x_is_target), (k, n) in sorted(cells.items()):
        x = np.zeros(3 * m + 1)
        x[2 * m + pos[judge]] = 1.0  # b_D
        if x_is_target:
            x[3 * m] = 1.0  # c
        else:
            x[pos[actor]] = 1.0  # θ_A
            x[m + pos[judge]] = -1.0  # −φ_D
        design.append(x)
        ones.append(k)
        trials.append(n)
    return _Counts(np.array(design), np.array(ones, float), np.array(trials, float), excluded)


def _sum_to_zero(m: int) -> np.ndarray:
    """Full (θ, φ, b, c) = T @ free, with θ_m = −Σθ_{<m} and φ_m = −Σφ_{<m}."""
    block = np.vstack([np.eye(m - 1), -np.ones((1, m - 1))]) if m > 1 else np.zeros((1, 0))
    t = np.zeros((3 * m + 1, 2 * (m - 1) + m + 1))
    t[:m, : m - 1] = block
    t[m : 2 * m, m - 1 : 2 * (m - 1)] = block
    t[2 * m :, 2 * (m - 1) :] = np.eye(m + 1)
    return t


def _check_identified(rows: list[Mapping[str, Any]], agents: list[str]) -> None:
    acts = {r["actor"] for r in rows if not r["x_is_target"]}
    judges_actor = {r["distinguisher"] for r in rows if not r["x_is_target"]}
    judges_self = {r["distinguisher"] for r in rows if r["x_is_target"]}
    for agent in agents:
        for seen, what in [
            (acts, "never acts (actor-branch trials)"),
            (judges_actor, "never judges an actor"),
            (judges_self, "never judges itself (self-branch trials)"),
        ]:
            if agent not in seen:
                raise ValueError(
                    f"ability model not identified: {agent!r} {what}; "
                    "add those trials or pass prior_sd"
                )


def fit_ability(
    rows: Iterable[Mapping[str, Any]],
    agents: Sequence[str] | None = None,
    missing: MissingPolicy = "exclude",
    prior_sd: float | None = None,
) -> AbilityFit:
    """Maximum-likelihood (or, with prior_sd, posterior-mode) fit of θ, φ, b and c.

    Rows are GTT-family trials of one variant (target == distinguisher). Raises ValueError when
    the model is not identified and SeparationError when the MLE does not exist."""
    rows = list(rows)
    if not rows:
        raise ValueError("no trials to fit")
    if len({r.get("variant", "gtt") for r in rows}) > 1:
        raise ValueError("rows mix GTT variants; fit one variant at a time")
    if prior_sd is not None and prior_sd <= 0:
        raise ValueError(f"prior_sd must be > 0, got {prior_sd}")
    names = sorted({r["actor"] for r in rows} | {r["distinguisher"] for r in rows})
    if agents is not None:
        unknown = set(names) - set(agents)
        if unknown:
            raise ValueError(f"rows name agents outside `agents`: {sorted(unknown)}")
        names = list(agents)
    m = len(names)
    data = _counts(rows, names, missing)
    kept = [r for r in rows if success(r, missing) is not None]
    if prior_sd is None:
        _check_identified(kept, names)
    if data.trials.size == 0:
        raise ValueError("every trial was excluded by the missing-verdict policy")
    transform = _sum_to_zero(m)
    x = data.design @ transform
    precision = (
        transform.T @ transform / prior_sd**2
        if prior_sd is not None
        else np.zeros((x.shape[1], x.shape[1]))
    )

    def objective(beta: np.ndarray) -> float:
        eta = x @ beta
        loglik = data.says_one @ eta - data.trials @ np.logaddexp(0.0, eta)
        return float(-loglik + 0.5 * beta @ precision @ beta)

    def gradient(beta: np.ndarray) -> np.ndarray:
        mu = 1.0 / (1.0 + np.exp(-(x @ beta)))
        return np.asarray(-(x.T @ (data.says_one - data.trials * mu)) + precision @ beta)

    def hessian(beta: np.ndarray) -> np.ndarray:
        mu = 1.0 / (1.0 + np.exp(-(x @ beta)))
        weights = data.trials * mu * (1 - mu)
        return np.asarray((x.T * weights) @ x + precision)

    start = np.zeros(x.shape[1])
    result = optimize.minimize(
        objective, start, jac=gradient, hess=hessian, method="trust-exact",
        options={"gtol": 1e-8, "maxiter": 500},
    )  # fmt: skip
    beta = result.x
    # trust-exact may report failure once it cannot improve further at the optimum, so
    # convergence is judged by the gradient itself.
    stationary = float(np.max(np.abs(gradient(beta)))) < 1e-5
    if np.max(np.abs(x @ beta)) > _SEPARATED_LOGIT:
        raise SeparationError(
            "the maximum-likelihood estimate does not exist: some fitted probabilities go to "
            "0 or 1 (e.g. a judge that always answers the same); pass prior_sd (e.g. 2.0)"
        )
    if not stationary:
        raise ValueError(f"the ability fit did not converge ({result.message}); pass prior_sd")
    info = hessian(beta)
    if np.linalg.matrix_rank(info) < info.shape[0]:
        raise ValueError("ability model not identified by these trials; pass prior_sd")
    cov = transform @ np.linalg.inv(info) @ transform.T
    full = transform @ beta
    z = stats.norm.ppf(0.975)

    def estimate(i: int) -> Estimate:
        se = math.sqrt(max(cov[i, i], 0.0))
        return Estimate(float(full[i]), se, float(full[i] - z * se), float(full[i] + z * se))

    eta = x @ beta
    return AbilityFit(
        agents=names,
        theta={a: estimate(i) for i, a in enumerate(names)},
        phi={a: estimate(m + i) for i, a in enumerate(names)},
        bias={a: estimate(2 * m + i) for i, a in enumerate(names)},
        c=estimate(3 * m),
        log_likelihood=float(data.says_one @ eta - data.trials @ np.logaddexp(0.0, eta)),
        n_trials=int(data.trials.sum()),
        n_excluded=data.n_excluded,
        missing=missing,
        prior_sd=prior_sd,
        covariance=cov,
    )


@dataclass(frozen=True)
class RankAgreement:
    agents: list[str]  # agents with both an estimate and a finite score
    tau_theta_fooling: float  # Kendall τ-b between θ and F
    p_theta_fooling: float
    tau_phi_distinguishing: float  # Kendall τ-b between φ and D
    p_phi_distinguishing: float


def compare_with_turing_scores(fit: AbilityFit, scores: Sequence[TuringScores]) -> RankAgreement:
    """Kendall τ (τ-b, ties allowed; scipy's p-value) between the ability estimates and the
    Turing scores from `turinglab.analysis.gtt.turing_scores`: θ against F, φ against D."""
    by_agent = {s.agent: s for s in scores}
    common = [
        a
        for a in fit.agents
        if a in by_agent
        and math.isfinite(by_agent[a].fooling)
        and math.isfinite(by_agent[a].distinguishing)
    ]
    if len(common) < 2:
        raise ValueError("need at least two agents with both ability estimates and scores")
    theta = [fit.theta[a].value for a in common]
    phi = [fit.phi[a].value for a in common]
    tau_f = stats.kendalltau(theta, [by_agent[a].fooling for a in common])
    tau_d = stats.kendalltau(phi, [by_agent[a].distinguishing for a in common])
    return RankAgreement(
        agents=common,
        tau_theta_fooling=float(tau_f.statistic),
        p_theta_fooling=float(tau_f.pvalue),
        tau_phi_distinguishing=float(tau_d.statistic),
        p_phi_distinguishing=float(tau_d.pvalue),
    )
