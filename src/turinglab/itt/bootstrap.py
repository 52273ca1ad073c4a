"""Cluster bootstrap intervals for confusion cells, detectability and accuracy.

Judgements are not independent: the messages of one conversation, the captions of one image
and the decisions of one person share whatever makes them easy or hard. Resampling rows as if
they were independent gives intervals that are far too narrow (the issue's 5 machine
conversations → 342 rows → [0.75, 0.85]). Here the *units* (stimulus or conversation) and the
*judges* (each person; an AI judge is one judge whatever its seeds) are the clusters.

With few clusters a percentile bootstrap is too narrow still (5 conversations per source: the
95% interval excluded chance in 11% of no-signal datasets): the bootstrap variance of a mean of
G clusters is (G−1)/G of the unbiased one, and normal quantiles ignore that the variance itself
is estimated from G clusters. So intervals are **studentized, t-based cluster intervals**
(Cameron & Miller 2015's CR1 variance with G−1 degrees of freedom, per clustering dimension):

- units are resampled alone and judges alone (each a one-way cluster bootstrap); each
  variance is scaled by G/(G−1) (J/(J−1) for judges) and the two are added (the two-way
  variance of Cameron, Gelbach & Miller without subtracting the intersection: conservative);
- the degrees of freedom combine G−1 and J−1 by Welch–Satterthwaite, so an AI judge (one
  judge) or judges who agree leave G−1, and a study of two disagreeing judges gets few;
- the interval is the point estimate ± t(df) × SE, clipped to [0, 1].

Fractional row weights carry the cross-validation seeds: an AI judge's three seeds of one
response weigh 1/3 each, so a response counts once.

Everything is vectorised: rows are summed into per-cluster totals of each category, and a
replicate is a product of multinomial cluster counts with those totals."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import sparse
from scipy import stats as scipy_stats

STATISTICS = (
    *("p_H_given_H", "p_M_given_H", "p_H_given_M", "p_M_given_M"),
    *("detectability", "accuracy"),
)
DEFAULT_REPLICATES = 1000
_CELL_BUDGET = 20_000_000  # replicate × unit entries held at once (~160 MB of float64)


@dataclass(frozen=True)
class Judged:
    """The arrays a bootstrap needs, one entry per judgement row."""

    unit: np.ndarray  # int index of the stimulus / conversation
    judge: np.ndarray  # int index of the judge cluster
    weight: np.ndarray  # 1, or 1/seeds for cross-validation repeats
    human: np.ndarray  # bool: the response was written by a human
    said_human: np.ndarray  # bool: the judge labelled it H


def _index(values: list[str]) -> np.ndarray:
    _, inverse = np.unique(np.array(values, dtype=object).astype(str), return_inverse=True)
    return np.asarray(inverse, dtype=np.int64)


def judged(
    units: list[str],
    judges: list[str],
    weights: list[float],
    human: list[bool],
    said_human: list[bool],
) -> Judged:
    return Judged(
        _index(units),
        _index(judges),
        np.asarray(weights, dtype=float),
        np.asarray(human, dtype=bool),
        np.asarray(said_human, dtype=bool),
    )


def _counts(rng: np.random.Generator, replicates: int, n: int) -> np.ndarray:
    """replicates × n multinomial counts: how often each cluster was drawn."""
    draws = rng.integers(0, n, size=(replicates, n))
    flat = draws + (np.arange(replicates) * n)[:, None]
    return np.bincount(flat.ravel(), minlength=replicates * n).reshape(replicates, n).astype(float)


def replicate_totals(
    unit: np.ndarray,
    judge: np.ndarray,
    weight: np.ndarray,
    category: np.ndarray,
    categories: int,
    replicates: int = DEFAULT_REPLICATES,
    seed: int = 0,
) -> np.ndarray:
    """replicates × categories array of resampled weighted totals of each category."""
    n_units = int(unit.max()) + 1 if unit.size else 0
    n_judges = int(judge.max()) + 1 if judge.size else 0
    out = np.zeros((replicates, categories))
    if not n_units:
        return out
    sums = [
        sparse.csr_matrix((weight * (category == k), (unit, judge)), shape=(n_units, n_judges))
        for k in range(categories)
    ]
    rng = np.random.default_rng(seed)
    chunk = max(1, _CELL_BUDGET // max(n_units, n_judges))
    for start in range(0, replicates, chunk):
        b = min(chunk, replicates - start)
        unit_counts = _counts(rng, b, n_units)
        judge_counts = _counts(rng, b, n_judges) if n_judges > 1 else np.ones((b, 1))
        for k, s in enumerate(sums):
            per_judge = np.asarray((s.T @ unit_counts.T).T)  # b × judges
            out[start : start + b, k] = (per_judge * judge_counts).sum(axis=1)
    return out


def replicate_cells(
    data: Judged, replicates: int = DEFAULT_REPLICATES, seed: int = 0
) -> np.ndarray:
    """replicates × 4 array of resampled weighted cell totals (hh, hm, mh, mm)."""
    category = 2 * (~data.human).astype(np.int64) + (~data.said_human).astype(np.int64)
    return replicate_totals(data.unit, data.judge, data.weight, category, 4, replicates, seed)


def cluster_totals(
    cluster: np.ndarray,
    weight: np.ndarray,
    category: np.ndarray,
    categories: int,
    replicates: int = DEFAULT_REPLICATES,
    seed: int = 0,
) -> np.ndarray:
    """replicates × categories totals with the clusters of one dimension resampled (units,
    or judges) and the other left as it is: a one-way cluster bootstrap."""
    n = int(cluster.max()) + 1 if cluster.size else 0
    out = np.zeros((replicates, categories))
    if not n:
        return out
    per_cluster = np.zeros((n, categories))
    np.add.at(per_cluster, (cluster, category), weight)
    rng = np.random.default_rng(seed)
    chunk = max(1, _CELL_BUDGET // n)
    for start in range(0, replicates, chunk):
        b = min(chunk, replicates - start)
        out[start : start + b] = _counts(rng, b, n) @ per_cluster
    return out


@dataclass(frozen=True)
class Replicates:
    """One statistic's point estimate and its one-way replicates per clustering dimension."""

    point: float
    by_unit: np.ndarray
    by_judge: np.ndarray | None  # None with a single judge (nothing to resample)
    units: int
    judges: int
    unit_df: int | None = None  # default units − 1; less when the statistic estimates two arms


@dataclass(frozen=True)
class Spread:
    """A statistic's studentized cluster spread: its bootstrap SD (the two dimensions' CR1
    variances added), the Welch–Satterthwaite degrees of freedom and the 95% interval."""

    sd: float
    df: float
    interval: tuple[float, float]

    def p_against(self, point: float, value: float = 0.5) -> float:
        """Two-sided p of the t test of `point` against `value`: below 0.05 exactly when the
        interval excludes `value` (the interval inverts this test)."""
        if self.sd <= 0:
            return 1.0 if point == value else 0.0
        t = abs(point - value) / self.sd
        return float(2 * scipy_stats.t.sf(t, self.df))


def t_spread(r: Replicates, level: float = 0.95) -> Spread | None:
    """The studentized cluster interval (module docstring) with its SD and df; None when the
    statistic is undefined, there is a single unit, or it is undefined in more than a tenth of
    the replicates of either dimension (an arm too often missing: no honest interval)."""
    if np.isnan(r.point) or r.units < 2:
        return None
    parts = [(r.by_unit, r.units, r.unit_df or r.units - 1)]
    if r.by_judge is not None and r.judges > 1:
        parts.append((r.by_judge, r.judges, r.judges - 1))
    variances, dfs = [], []
    for values, g, df in parts:
        defined = values[~np.isnan(values)]
        if defined.size < 0.9 * values.size or defined.size < 2:
            return None
        variances.append(float(np.var(defined, ddof=1)) * g / (g - 1))
        dfs.append(max(1, df))
    total = sum(variances)
    if total <= 0:
        return Spread(0.0, float(min(dfs)), (r.point, r.point))
    # Welch–Satterthwaite: the variance's own degrees of freedom
    welch = total**2 / sum(v**2 / d for v, d in zip(variances, dfs, strict=True))
    half = float(scipy_stats.t.ppf(0.5 + level / 2, welch)) * total**0.5
    interval = (max(0.0, r.point - half), min(1.0, r.point + half))
    return Spread(total**0.5, float(welch), interval)


def t_interval(r: Replicates, level: float = 0.95) -> tuple[float, float] | None:
    got = t_spread(r, level)
    return None if got is None else got.interval


def percentile(values: np.ndarray, level: float = 0.95) -> tuple[float, float] | None:
    """Percentile interval of the defined replicates; None when too few are defined."""
    defined = values[~np.isnan(values)]
    if defined.size < 0.9 * values.size or not defined.size:
        return None
    tail = 100 * (1 - level) / 2
    lo, hi = np.percentile(defined, [tail, 100 - tail])
    return (float(lo), float(hi))


def statistics(cells: np.ndarray) -> dict[str, np.ndarray]:
    """The rates of `cells` (… × 4: hh, hm, mh, mm); NaN where an arm is empty."""
    hh, hm, mh, mm = (cells[..., k] for k in range(4))
    with np.errstate(invalid="ignore", divide="ignore"):
        n_h, n_m = hh + hm, mh + mm
        p_hh = np.where(n_h > 0, hh / n_h, np.nan)
        p_mm = np.where(n_m > 0, mm / n_m, np.nan)
        total = n_h + n_m
        return {
            "p_H_given_H": p_hh,
            "p_M_given_H": 1 - p_hh,
            "p_H_given_M": 1 - p_mm,
            "p_M_given_M": p_mm,
            "detectability": 0.5 * (p_hh + p_mm),
            "accuracy": np.where(total > 0, (hh + mm) / total, np.nan),
        }


def _category(data: Judged) -> np.ndarray:
    return 2 * (~data.human).astype(np.int64) + (~data.said_human).astype(np.int64)


def cell_replicates(
    data: Judged, replicates: int = DEFAULT_REPLICATES, seed: int = 0
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """The observed cells (hh, hm, mh, mm) and their replicates with units resampled and,
    when there are several judges, with judges resampled."""
    category = _category(data)
    cells = np.bincount(category, weights=data.weight, minlength=4).astype(float)
    by_unit = cluster_totals(data.unit, data.weight, category, 4, replicates, seed)
    n_judges = int(data.judge.max()) + 1 if data.judge.size else 0
    by_judge = None
    if n_judges > 1:
        by_judge = cluster_totals(data.judge, data.weight, category, 4, replicates, seed + 1)
    return cells, by_unit, by_judge


def intervals(
    data: Judged, replicates: int = DEFAULT_REPLICATES, seed: int = 0, level: float = 0.95
) -> dict[str, tuple[float, float] | None]:
    """Studentized cluster intervals of every statistic (module docstring)."""
    got = spreads(data, replicates, seed, level)
    return {k: None if v is None else v.interval for k, v in got.items()}


def spreads(
    data: Judged, replicates: int = DEFAULT_REPLICATES, seed: int = 0, level: float = 0.95
) -> dict[str, Spread | None]:
    """Studentized cluster spread (SD, df, interval) of every statistic."""
    cells, by_unit, by_judge = cell_replicates(data, replicates, seed)
    judges = int(data.judge.max()) + 1 if data.judge.size else 0
    point, u = statistics(cells), statistics(by_unit)
    j = None if by_judge is None else statistics(by_judge)
    arms = unit_arms(data)
    out: dict[str, Spread | None] = {}
    for name in STATISTICS:
        units, df = arms[name]
        by_judge = None if j is None else j[name]
        reps = Replicates(float(point[name]), u[name], by_judge, units, judges, df)
        out[name] = t_spread(reps, level)
    return out


def unit_arms(data: Judged) -> dict[str, tuple[int, int]]:
    """Per statistic: the units it rests on and their degrees of freedom. A rate of one arm
    (p(H|H): human responses) has its arm's units − 1; detectability and accuracy estimate
    both arms, so units − 2 when the arms' units are apart (conversations), units − 1 when
    they are shared (a stimulus with human and machine responses)."""
    h_units = len(np.unique(data.unit[data.human]))
    m_units = len(np.unique(data.unit[~data.human]))
    both = len(np.unique(data.unit))
    two = (both, max(1, min(both - 1, h_units + m_units - 2)))
    out = {name: two for name in ("detectability", "accuracy")}
    for name in ("p_H_given_H", "p_M_given_H"):
        out[name] = (h_units, h_units - 1)
    for name in ("p_H_given_M", "p_M_given_M"):
        out[name] = (m_units, m_units - 1)
    return out


def paper_half_sample_sd(
    human_correct: Sequence[float], machine_correct: Sequence[float], seed: int = 0
) -> float | None:
    """The SD behind the paper's error bars ("bootstrap standard deviations"), as its released
    plotting code computes it: with n the smaller arm's number of responses, n replicates each
    draw ⌈n/2⌉ responses of each arm without replacement and average the correct answers of
    both (equal halves, so the mean is a detectability); the SD of those means (ddof 0).
    Responses are treated as independent — judges and conversations are not resampled — so it
    is reported beside the cluster SD, not instead of it. None below two responses an arm."""
    n = min(len(human_correct), len(machine_correct))
    if n < 2:
        return None
    rng = np.random.default_rng(seed)
    take = math.ceil(n / 2)
    h, m = np.asarray(human_correct, dtype=float), np.asarray(machine_correct, dtype=float)
    means = [
        (rng.choice(h, take, replace=False).sum() + rng.choice(m, take, replace=False).sum())
        / (2 * take)
        for _ in range(n)
    ]
    return float(np.std(means))
