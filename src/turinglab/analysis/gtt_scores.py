"""Turing scores F, D, T (or F^q, D^q, T^q on "gttq" rows) with bootstrap uncertainty.

The bootstrap resamples trials with replacement *within* each cell (ordered pair × branch), so
every replicate keeps the design's cell sizes. Resampling n Bernoulli trials with k successes
is the same as drawing Binomial(n, k/n), which is how it is done here (vectorised). The
percentile interval of each score and of each agent's rank come from the same replicates.
Ranks: 1 = highest score; ties share the best rank ("min" ranking) for the rank interval,
while the chance of being first splits ties evenly (so it sums to 1 over ranked agents).
The bootstrap follows the estimator (gtt.turing_scores: "paper" by default, or "pooled").

A bootstrap cannot see uncertainty it has no spread for: when every cell behind an agent's
score is 0 % or 100 % (as with n = 2 and decided agents) every replicate repeats the point
estimate. Such an agent's rank range and P(first) are left undefined (`resolved` is False) —
"not enough data" — rather than printed as a certain "rank 1–1, P(first) 1.00".
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from scipy.stats import rankdata

from turinglab.analysis.gtt import (
    Cell,
    MissingPolicy,
    OpeningPolicy,
    ScoreEstimator,
    TrialPolicy,
    as_policy,
    cell_counts,
    check_estimator,
    judged_pairs,
    scores_from_counts,
    select_variant,
)

__all__ = ["Cell", "ScoreEstimate", "ScoreReport", "cell_counts", "score_report"]
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
    rank_interval: Interval  # NaN when unresolved
    prob_first: float  # NaN when unresolved
    judged: int = 0  # B ≠ A that entered D(A)
    resolved: bool = False  # the bootstrap of the ranked score has spread (module note)


@dataclass(frozen=True)
class ScoreReport:
    variant: str
    policy: TrialPolicy
    level: float
    n_boot: int
    seed: int
    rank_by: ScoreName
    scores: list[ScoreEstimate]  # ordered by rank, unscored agents last
    estimator: ScoreEstimator = "paper"

    def by_agent(self) -> dict[str, ScoreEstimate]:
        return {s.agent: s for s in self.scores}


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
    estimator: ScoreEstimator = "paper",
    n_boot: int = 2000,
    level: float = 0.95,
    seed: int = 0,
) -> ScoreReport:
    """Point estimates, percentile bootstrap CIs and rank uncertainty for F, D, T."""
    if rank_by not in ("fooling", "distinguishing", "total"):
        raise ValueError(f"rank_by must be fooling, distinguishing or total, not {rank_by!r}")
    if n_boot < 1 or not 0 < level < 1:
        raise ValueError(f"need n_boot ≥ 1 and 0 < level < 1, got {n_boot} and {level}")
    check_estimator(estimator)
    policy = as_policy(missing, opening)
    rows = select_variant(rows, variant)
    counts = cell_counts(rows, policy)
    agents = list(universe) if universe else sorted({c[0] for c in counts} | {c[1] for c in counts})
    n = {cell: kn[1] for cell, kn in counts.items()}
    point = scores_from_counts(
        {c: np.array([kn[0]]) for c, kn in counts.items()}, n, agents, estimator
    )
    rng = np.random.default_rng(seed)
    resampled = {c: rng.binomial(kn[1], kn[0] / kn[1], size=n_boot) for c, kn in counts.items()}
    boot = scores_from_counts(resampled, n, agents, estimator) if counts else {}
    which = ("fooling", "distinguishing", "total").index(rank_by)
    point_rank = _ranks(np.array([point[a][which][0] for a in agents]))
    boot_values = np.column_stack([boot[a][which] for a in agents]) if boot else np.empty((0, 0))
    boot_ranks = _ranks(boot_values) if boot else boot_values
    first_share = _first_shares(boot_values) if boot else np.full(len(agents), math.nan)
    estimates = []
    for i, a in enumerate(agents):
        f, dd, t = (float(v[0]) for v in point[a])
        scored = not math.isnan(point_rank[i])
        resolved = scored and bool(boot) and float(np.ptp(boot[a][which])) > 1e-12
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
                if resolved
                else (math.nan, math.nan),
                prob_first=float(first_share[i]) if resolved else math.nan,
                judged=judged_pairs(counts, a, [b for b in agents if b != a], estimator),
                resolved=resolved,
            )
        )
    estimates.sort(key=lambda s: (math.isnan(s.rank), s.rank, s.agent))
    return ScoreReport(variant, policy, level, n_boot, seed, rank_by, estimates, estimator)


def _first_shares(values: np.ndarray) -> np.ndarray:
    """Per agent: share of replicates in which it is first, ties split evenly."""
    filled = np.where(np.isnan(values), -np.inf, values)
    best = filled.max(axis=1, keepdims=True)
    tied = np.isclose(filled, best, rtol=0, atol=1e-12) & ~np.isnan(values)
    ties = tied.sum(axis=1, keepdims=True)
    share: np.ndarray = np.divide(tied, ties, out=np.zeros(tied.shape), where=ties > 0)
    return share.mean(axis=0)
