"""Adaptive sampling for the GTT comparator A ≥ε B: sample until each cell's answer is settled.

Question per ordered cell (actor A, distinguisher B): is d(A, B) ≤ ε (A ≥ε B) or d > ε?
Equivalently is p(A, B) ≤ ½ + ε. These functions only decide; the runner plans the trials.

Error control. Trials are paired in order within a cell (k-th X = target trial with the k-th
X = actor trial); a pair's mean success Y ∈ {0, ½, 1} has expectation exactly p(A, B), whatever
s_B and s_{B,A} are, so the pairs are i.i.d. bounded observations with mean p. For each cell we
keep an anytime-valid confidence sequence (CS) for p: Pr[∃t: p ∉ CS_t] ≤ α/K, where K is the
number of cells in the design (Bonferroni over cells). Hence, however often one looks and
whenever one stops, Pr[any cell gets a wrong conclusion] ≤ α (family-wise).

Two CSs are offered:
* "betting" (default): Waudby-Smith & Ramdas (2023), hedged capital process with the
  predictable plug-in bet λ_t = √(2 log(2/α) / (σ̂²_{t−1} t log(1+t))), truncated at c = ½,
  evaluated on a grid of 500 candidate means (bounds rounded outward to the grid).
* "normal-mixture": Robbins' two-sided normal mixture for ½-sub-Gaussian observations
  (Howard et al. 2021): |Σ(Y_i − p)| < √(2(t/4 + ρ) log(√((t/4 + ρ)/ρ) / α)), closed form.
Both use the running intersection, so bounds only tighten as data arrive.

Decision with an indifference zone δ ≥ 0 (d exactly at ε would otherwise never settle):
  "at-most-eps" (A ≥ε B) once the CS upper bound ≤ ½ + ε + δ,
  "above-eps"   (not A ≥ε B) once the CS lower bound > ½ + ε − δ.
If d > ε + δ, the first is wrong only when the CS missed p; if d ≤ ε − δ, likewise the second.
For d within δ of ε either answer is acceptable. The conclusion is the first one reached
(both at once: the side of ½ + ε the estimate lies on), so it never flips. A cell that reaches
max_n without a CS decision stops as "undecided". Pairs of trials enter the CS; an unpaired
trial (odd count, or a branch short after excluding missing verdicts) waits for its partner.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from turinglab.analysis.gtt import MissingPolicy, TrialPolicy, as_policy, success

Cell = tuple[str, str]  # (actor, distinguisher)
Conclusion = Literal["at-most-eps", "above-eps", "undecided"]
CsMethod = Literal["betting", "normal-mixture"]

_GRID = 500  # candidate means for the betting CS (cell centres); bounds are widened by ½ cell


@dataclass(frozen=True)
class AdaptivePlan:
    eps: float
    alpha: float = 0.05  # family-wise error over all cells
    delta: float = 0.05  # indifference zone half-width around ε (on d)
    batch: int = 10  # trials added per unsettled cell per round (rounded up to even)
    min_n: int = 10  # no cell settles before this many finished trials
    max_n: int = 200  # a cell stops here, decided or not
    method: CsMethod = "betting"
    missing: MissingPolicy = "wrong"

    def __post_init__(self) -> None:
        if not -0.5 <= self.eps < 0.5:
            raise ValueError(f"eps must lie in [-0.5, 0.5), got {self.eps}")
        if not 0.0 < self.alpha < 1.0:
            raise ValueError(f"alpha must lie in (0, 1), got {self.alpha}")
        if self.delta < 0:
            raise ValueError(f"delta must be ≥ 0, got {self.delta}")
        if self.batch < 1 or self.min_n < 0 or self.max_n < 2:
            raise ValueError("batch must be ≥ 1, min_n ≥ 0 and max_n ≥ 2")
        if self.min_n > self.max_n:
            raise ValueError(f"min_n ({self.min_n}) must not exceed max_n ({self.max_n})")
        if self.method not in ("betting", "normal-mixture"):
            raise ValueError(f"unknown CS method {self.method!r}")
        TrialPolicy(self.missing)  # raises ValueError naming the allowed policies


@dataclass(frozen=True)
class CellStatus:
    n: int  # finished trials in the cell (verdict or not): what it has cost
    n_pairs: int  # (target, actor) pairs in the confidence sequence
    p_hat: float  # success rate over trials that count under the missing policy
    cs_low: float  # confidence sequence for p(A, B) at level 1 − α/K
    cs_high: float
    settled: bool
    conclusion: Conclusion

    @property
    def actor_at_least_eps(self) -> bool | None:
        """A ≥ε B (True), not (False), or no error-controlled answer (None)."""
        return {"at-most-eps": True, "above-eps": False}.get(self.conclusion)


# --- confidence sequences --------------------------------------------------------------------


def _check_observations(y: np.ndarray, alpha: float) -> None:
    if y.ndim != 1 or (y.size and (y.min() < 0 or y.max() > 1)):
        raise ValueError("observations must be a 1-D sequence of values in [0, 1]")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha}")


def betting_cs(y: Sequence[float], alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Running-intersection hedged-capital CS for the mean of i.i.d. [0, 1] observations.

    Returns (low, high) after each observation t = 1..n; Pr[∃t: mean outside] ≤ alpha."""
    x = np.asarray(y, dtype=float)
    _check_observations(x, alpha)
    n = x.size
    if n == 0:
        return np.zeros(0), np.zeros(0)
    t = np.arange(1, n + 1)
    mu_hat = (0.5 + np.cumsum(x)) / (t + 1)  # μ̂_t uses x_1..x_t
    mu_before = np.concatenate([[0.5], mu_hat[:-1]])  # μ̂_{t−1}
    sigma2 = (0.25 + np.cumsum((x - mu_before) ** 2)) / (t + 1)
    sigma2_before = np.concatenate([[0.25], sigma2[:-1]])  # predictable
    lam = np.sqrt(2 * math.log(2 / alpha) / (sigma2_before * t * np.log1p(t)))
    m = (np.arange(_GRID) + 0.5) / _GRID
    lam_up = np.minimum(lam[:, None], 0.5 / m[None, :])
    lam_down = np.minimum(lam[:, None], 0.5 / (1 - m[None, :]))
    diff = x[:, None] - m[None, :]
    log_up = np.cumsum(np.log1p(lam_up * diff), axis=0)
    log_down = np.cumsum(np.log1p(-lam_down * diff), axis=0)
    log_capital = np.logaddexp(log_up, log_down) - math.log(2)  # ½K⁺ + ½K⁻
    excluded = np.logical_or.accumulate(log_capital >= math.log(1 / alpha), axis=0)
    kept = ~excluded
    first = np.argmax(kept, axis=1)
    last = _GRID - 1 - np.argmax(kept[:, ::-1], axis=1)
    # Grid points are cell centres: widen by half a cell so the bounds stay conservative.
    low = np.maximum(0.0, m[first] - 0.5 / _GRID)
    high = np.minimum(1.0, m[last] + 0.5 / _GRID)
    empty = ~kept.any(axis=1)  # every candidate rejected (possible only after a miss)
    low[empty] = high[empty] = mu_hat[empty]
    return low, high


def normal_mixture_cs(
    y: Sequence[float], alpha: float, rho: float | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Running-intersection Robbins normal-mixture CS for i.i.d. [0, 1] observations (σ = ½).

    rho defaults to the value that makes the boundary tightest near t = 100 observations
    (Howard et al. 2021): ρ = V / (2 log(1/α) + log(1 + 2 log(1/α))) with V = 100 σ²."""
    x = np.asarray(y, dtype=float)
    _check_observations(x, alpha)
    if rho is None:
        ell = 2 * math.log(1 / alpha)
        rho = 100 * 0.25 / (ell + math.log(1 + ell))
    if rho <= 0:
        raise ValueError(f"rho must be > 0, got {rho}")
    t = np.arange(1, x.size + 1)
    v = 0.25 * t
    radius = np.sqrt(2 * (v + rho) * np.log(np.sqrt((v + rho) / rho) / alpha)) / t
    mean = np.cumsum(x) / t
    low = np.maximum.accumulate(np.clip(mean - radius, 0.0, 1.0))
    high = np.minimum.accumulate(np.clip(mean + radius, 0.0, 1.0))
    return low, np.maximum(high, low)


# --- cells -----------------------------------------------------------------------------------


def _cell_rows(
    rows: Iterable[Mapping[str, Any]], cells: Sequence[Cell] | None
) -> dict[Cell, list[Mapping[str, Any]]]:
    groups: dict[Cell, list[Mapping[str, Any]]] = {c: [] for c in cells or []}
    variants = set()
    for row in rows:
        if row.get("target", row["distinguisher"]) != row["distinguisher"]:
            raise ValueError(
                "adaptive sampling handles GTT-family rows only (target == distinguisher); "
                f"got target {row['target']!r} with distinguisher {row['distinguisher']!r}"
            )
        variants.add(row.get("variant", "gtt"))
        cell = (row["actor"], row["distinguisher"])
        if cells is not None and cell not in groups:
            continue  # not a cell of this design
        groups.setdefault(cell, []).append(row)
    if len(variants) > 1:
        raise ValueError(f"rows mix GTT variants {sorted(variants)}; pass one variant's rows")
    return groups


def _successes(
    group: list[Mapping[str, Any]], missing: MissingPolicy
) -> tuple[list[float], list[bool]]:
    """Success means of (k-th target trial, k-th actor trial), trials in idx order, and every
    counted trial's success (one pass: this runs on every batch of every cell)."""
    policy = as_policy(missing)
    ordered = sorted(group, key=lambda r: r.get("idx", 0))
    hits: dict[bool, list[bool]] = {True: [], False: []}
    counted: list[bool] = []
    for row in ordered:
        hit = success(row, policy)
        if hit is not None:
            hits[bool(row["x_is_target"])].append(hit)
            counted.append(hit)
    pairs = [(a + b) / 2 for a, b in zip(hits[True], hits[False], strict=False)]
    return pairs, counted


def _decide(
    low: np.ndarray, high: np.ndarray, y: Sequence[float], plan: AdaptivePlan
) -> Conclusion:
    """The first conclusion the CS reached (see the module docstring)."""
    line = 0.5 + plan.eps
    at_most = high <= line + plan.delta
    above = low > line - plan.delta
    reached = np.flatnonzero(at_most | above)
    if reached.size == 0:
        return "undecided"
    t = reached[0]
    if at_most[t] and above[t]:
        return "above-eps" if float(np.mean(y[: t + 1])) > line else "at-most-eps"
    return "at-most-eps" if at_most[t] else "above-eps"


def cell_status(
    rows: Iterable[Mapping[str, Any]], plan: AdaptivePlan, cells: Sequence[Cell] | None = None
) -> dict[Cell, CellStatus]:
    """Where every cell stands. `cells` is the design's cell list, fixed before sampling: its
    length K sets the Bonferroni split α/K. Without it, the cells present in `rows` are used,
    which is right only once every cell of the design has data."""
    groups = _cell_rows(rows, cells)
    if not groups:
        raise ValueError("no cells: pass the design's cells or some rows")
    level = plan.alpha / len(groups)
    build = betting_cs if plan.method == "betting" else normal_mixture_cs
    status = {}
    for cell, group in sorted(groups.items()):
        y, counted = _successes(group, plan.missing)
        p_hat = sum(counted) / len(counted) if counted else math.nan
        low, high = build(y, level)
        conclusion = _decide(low, high, y, plan) if y else "undecided"
        n = len(group)
        decided = conclusion != "undecided" and n >= plan.min_n
        status[cell] = CellStatus(
            n=n,
            n_pairs=len(y),
            p_hat=p_hat,
            cs_low=float(low[-1]) if y else 0.0,
            cs_high=float(high[-1]) if y else 1.0,
            settled=decided or n >= plan.max_n,
            conclusion=conclusion if decided else "undecided",
        )
    return status


def next_batch(
    rows: Iterable[Mapping[str, Any]],
    plan: AdaptivePlan,
    cells: Sequence[Cell],
    pending: Mapping[Cell, int] | None = None,
) -> dict[Cell, int]:
    """More trials per unsettled cell (settled cells are left out; empty dict = stop).

    Counts are even so that half can go to each branch (X = target, X = actor), as the runner
    balances them; they top a cell up to min_n first and never pass max_n. `pending` counts
    trials already planned but not finished."""
    if not cells:
        raise ValueError("cells must name at least one (actor, distinguisher) cell")
    status = cell_status(rows, plan, cells)
    step = plan.batch + plan.batch % 2
    plan_more = {}
    for cell in cells:
        s = status[cell]
        if s.settled:
            continue
        have = s.n + (pending or {}).get(cell, 0)
        want = max(step, plan.min_n - have)
        want += want % 2
        room = plan.max_n - have
        more = min(want, room)
        if more > 0:
            plan_more[cell] = more
    return plan_more


@dataclass(frozen=True)
class Savings:
    adaptive_trials: int
    fixed_trials: int  # K · max_n
    trials_saved: int
    fraction_saved: float
    adaptive_calls: float
    fixed_calls: float
    calls_saved: float
    decided_cells: int
    undecided_cells: int


def savings(
    status: Mapping[Cell, CellStatus], plan: AdaptivePlan, calls_per_trial: float
) -> Savings:
    """The adaptive design against the fixed design of max_n trials in every cell.

    The fixed design is taken to reach the same conclusions (it has at least as many trials in
    every cell); API calls are trials × the caller's mean calls per trial."""
    if not status:
        raise ValueError("status is empty: no cells to compare")
    if calls_per_trial <= 0:
        raise ValueError(f"calls_per_trial must be > 0, got {calls_per_trial}")
    used = sum(s.n for s in status.values())
    fixed = len(status) * plan.max_n
    decided = sum(s.conclusion != "undecided" for s in status.values())
    return Savings(
        adaptive_trials=used,
        fixed_trials=fixed,
        trials_saved=fixed - used,
        fraction_saved=(fixed - used) / fixed,
        adaptive_calls=used * calls_per_trial,
        fixed_calls=fixed * calls_per_trial,
        calls_saved=(fixed - used) * calls_per_trial,
        decided_cells=decided,
        undecided_cells=len(status) - decided,
    )
