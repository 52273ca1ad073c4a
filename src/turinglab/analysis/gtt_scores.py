"""Turing scores F, D, T (or F^q, D^q, T^q on "gttq" rows) with bootstrap uncertainty.

The bootstrap resamples trials with replacement *within* each cell (ordered pair × branch), so
every replicate keeps the design's cell sizes. Resampling n Bernoulli trials with k successes
is the same as drawing Binomial(n, k/n), which is how it is done here (vectorised). The
percentile interval of each score and of each agent's rank come from the same replicates.
Ranks: 1 = highest score; ties share the best rank ("min" ranking) for the rank interval,
while the chance of being first splits ties evenly (so it sums to 1 over ranked agents).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from scipy.stats import rankdata

from turinglab.analysis.gtt import (
    MissingPolicy,
    OpeningPolicy,
    TrialPolicy,
    as_policy,
    select_variant,
    success,
)

Cell = tuple[str, str, bool]  # (actor, distinguisher, x_is_target)
ScoreName = Literal["fooling", "distinguishing", "total"]
Interval = tuple[float, float]


@dataclass(frozen=True)
class ScoreEstimate:
    agent: str
    fooling: float
    fooling_ci: Interval
    distinguishing: float
    distinguishing_ci: Interval
    total: float
    total_ci: Interval
    opponents: int  # B ≠ A against which A acted (cells with data)
    rank: float  # rank of the point estimate of `rank_by` (NaN when unscored)
    rank_interval: Interval
    prob_first: float


@dataclass(frozen=True)
class ScoreReport:
    variant: str
    policy: TrialPolicy
    level: float
    n_boot: int
    seed: int
    rank_by: ScoreName
    scores: list[ScoreEstimate]  # ordered by rank, unscored agents last

    def by_agent(self) -> dict[str, ScoreEstimate]:
        return {s.agent: s for s in self.scores}


def cell_counts(
    rows: Iterable[Mapping[str, Any]], policy: TrialPolicy
) -> dict[Cell, tuple[int, int]]:
    """(successes, trials) per ordered pair × branch, after the policy."""
    counts: dict[Cell, list[int]] = {}
    for row in rows:
        hit = success(row, policy)
        if hit is None:
            continue
        k_n = counts.setdefault(
            (row["actor"], row["distinguisher"], bool(row["x_is_target"])), [0, 0]
        )
        k_n[0] += int(hit)
        k_n[1] += 1
    return {cell: (k, n) for cell, (k, n) in counts.items()}


def _nanmean(arrays: list[np.ndarray], size: int) -> np.ndarray:
    return np.mean(arrays, axis=0) if arrays else np.full(size, math.nan)


def scores_from_counts(
    k: Mapping[Cell, np.ndarray], n: Mapping[Cell, int], agents: Sequence[str]
) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """F, D, T per agent for each replicate column of the success counts `k` (same formulas
    and pooling as gtt.turing_scores: s_A pools A's self-branch trials over all its pairs)."""
    size = len(next(iter(k.values()))) if k else 1
    s_pair = {(b, a): k[(a, b, False)] / n[(a, b, False)] for (a, b, x) in k if not x}
    out = {}
    for a in agents:
        self_cells = [c for c in k if c[1] == a and c[2]]
        trials = sum(n[c] for c in self_cells)
        s_a = sum(k[c] for c in self_cells) / trials if trials else np.full(size, math.nan)
        others = [b for b in agents if b != a]
        fooling = _nanmean([1 - s_pair[(b, a)] for b in others if (b, a) in s_pair], size)
        catching = _nanmean([s_pair[(a, b)] for b in others if (a, b) in s_pair], size)
        distinguishing = 0.5 * np.asarray(s_a, dtype=float) + 0.5 * catching
        out[a] = (fooling, distinguishing, 0.5 * fooling + 0.5 * distinguishing)
    return out


def _interval(values: np.ndarray, level: float) -> Interval:
    if np.isnan(values).any():
        return (math.nan, math.nan)
    tail = (1 - level) / 2
    low, high = np.quantile(values, [tail, 1 - tail])
    return (float(low), float(high))


def _ranks(values: np.ndarray) -> np.ndarray:
    """Rank (1 = best, ties share the best) along the last axis; NaN for unscored agents."""
    ranks = np.full(values.shape, math.nan)
    scored = ~np.isnan(values[0] if values.ndim > 1 else values)
    if values.ndim == 1:
        ranks[scored] = rankdata(-values[scored], method="min")
        return ranks
    ranks[:, scored] = rankdata(-values[:, scored], method="min", axis=1)
    return ranks


def score_report(
    rows: Iterable[Mapping[str, Any]],
    universe: Sequence[str] | None = None,
    *,
    variant: str = "gtt",
    missing: MissingPolicy | TrialPolicy = "wrong",
    opening: OpeningPolicy = "count",
    rank_by: ScoreName = "total",
    n_boot: int = 2000,
    level: float = 0.95,
    seed: int = 0,
) -> ScoreReport:
    """Point estimates, percentile bootstrap CIs and rank uncertainty for F, D, T."""
    if rank_by not in ("fooling", "distinguishing", "total"):
        raise ValueError(f"rank_by must be fooling, distinguishing or total, not {rank_by!r}")
    if n_boot < 1 or not 0 < level < 1:
        raise ValueError(f"need n_boot ≥ 1 and 0 < level < 1, got {n_boot} and {level}")
    policy = as_policy(missing, opening)
    rows = select_variant(rows, variant)
    counts = cell_counts(rows, policy)
    agents = list(universe) if universe else sorted({c[0] for c in counts} | {c[1] for c in counts})
    n = {cell: kn[1] for cell, kn in counts.items()}
    point = scores_from_counts({c: np.array([kn[0]]) for c, kn in counts.items()}, n, agents)
    rng = np.random.default_rng(seed)
    resampled = {c: rng.binomial(kn[1], kn[0] / kn[1], size=n_boot) for c, kn in counts.items()}
    boot = scores_from_counts(resampled, n, agents) if counts else {}
    which = ("fooling", "distinguishing", "total").index(rank_by)
    point_rank = _ranks(np.array([point[a][which][0] for a in agents]))
    boot_values = np.column_stack([boot[a][which] for a in agents]) if boot else np.empty((0, 0))
    boot_ranks = _ranks(boot_values) if boot else boot_values
    first_share = _first_shares(boot_values) if boot else np.full(len(agents), math.nan)
    estimates = []
    for i, a in enumerate(agents):
        f, dd, t = (float(v[0]) for v in point[a])
        scored = not math.isnan(point_rank[i])
        estimates.append(
            ScoreEstimate(
                agent=a,
                fooling=f,
                fooling_ci=_interval(boot[a][0], level) if boot else (math.nan, math.nan),
                distinguishing=dd,
                distinguishing_ci=_interval(boot[a][1], level) if boot else (math.nan, math.nan),
                total=t,
                total_ci=_interval(boot[a][2], level) if boot else (math.nan, math.nan),
                opponents=sum((a, b, False) in counts for b in agents if b != a),
                rank=float(point_rank[i]),
                rank_interval=_interval(boot_ranks[:, i], level)
                if scored
                else (math.nan, math.nan),
                prob_first=float(first_share[i]) if scored else math.nan,
            )
        )
    estimates.sort(key=lambda s: (math.isnan(s.rank), s.rank, s.agent))
    return ScoreReport(variant, policy, level, n_boot, seed, rank_by, estimates)


def _first_shares(values: np.ndarray) -> np.ndarray:
    """Per agent: share of replicates in which it is first, ties split evenly."""
    filled = np.where(np.isnan(values), -np.inf, values)
    best = filled.max(axis=1, keepdims=True)
    tied = np.isclose(filled, best, rtol=0, atol=1e-12) & ~np.isnan(values)
    ties = tied.sum(axis=1, keepdims=True)
    share: np.ndarray = np.divide(tied, ties, out=np.zeros(tied.shape), where=ties > 0)
    return share.mean(axis=0)
