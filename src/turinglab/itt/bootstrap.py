"""Cluster bootstrap intervals for confusion cells, detectability and accuracy.

Judgements are not independent: the messages of one conversation, the captions of one image
and the decisions of one person share whatever makes them easy or hard. Resampling rows as if
they were independent gives intervals that are far too narrow (the issue's 5 machine
conversations → 342 rows → [0.75, 0.85]). Here the *units* (stimulus or conversation) and the
*judges* (each person; an AI judge is one judge whatever its seeds) are resampled with
replacement, independently, and every statistic is recomputed from the weighted cells — the
two-way cluster bootstrap, as the paper's bootstrap error bars over stimuli and participants.

Fractional row weights carry the cross-validation seeds: an AI judge's three seeds of one
response weigh 1/3 each, so a response counts once.

Everything is vectorised: rows are first summed into (unit, judge) cells, and a replicate is a
product of multinomial unit counts, the cell sums and multinomial judge counts."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse

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


def intervals(
    data: Judged, replicates: int = DEFAULT_REPLICATES, seed: int = 0, level: float = 0.95
) -> dict[str, tuple[float, float] | None]:
    """Percentile intervals of every statistic; None when an arm is missing in more than a
    tenth of the replicates (no honest interval then)."""
    stats = statistics(replicate_cells(data, replicates, seed))
    return {name: percentile(stats[name], level) for name in STATISTICS}
