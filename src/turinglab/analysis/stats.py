"""The shared statistics module: one place for the tests and intervals every analysis uses.

Pure functions (no I/O, no global random state). Binomial tests live in `binomial`, intervals
and compatible ranges in `intervals`, Giunti's degree of humanness in `humanness`; this module
re-exports them and adds multiple-testing adjustment, the percentile bootstrap, Cohen's kappa
and the one-call `binomial_summary` the command line prints.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from turinglab.analysis.binomial import (
    Alternative,
    WaldResult,
    check_counts,
    check_open_unit,
    exact_binomial_test,
    wald_test,
)
from turinglab.analysis.intervals import (
    CI_METHODS,
    CIMethod,
    Interval,
    binomial_ci,
    blaker_set,
    compatible_p,
    hull,
)

__all__ = [
    "ADJUST_METHODS",
    "CI_METHODS",
    "Alternative",
    "BinomialSummary",
    "CIMethod",
    "Interval",
    "WaldResult",
    "adjust_pvalues",
    "binomial_ci",
    "binomial_summary",
    "blaker_set",
    "bootstrap_ci",
    "cohen_kappa",
    "compatible_p",
    "exact_binomial_test",
    "hull",
    "wald_test",
]

AdjustMethod = Literal["bonferroni", "reverse-bonferroni", "holm", "fdr_bh"]
ADJUST_METHODS: tuple[str, ...] = ("bonferroni", "reverse-bonferroni", "holm", "fdr_bh")


def adjust_pvalues(pvalues: Sequence[float], method: AdjustMethod = "bonferroni") -> list[float]:
    """P-values adjusted for a family of tests, in the order given.

    bonferroni: min(1, m·p). reverse-bonferroni: p/m — Jones & Bergen (2025) divide by the family
    size where the result of interest is a *non*-significant one, so that correcting makes it
    harder, not easier, to claim "no difference". holm: step-down Holm–Bonferroni. fdr_bh:
    Benjamini–Hochberg step-up (false discovery rate).
    """
    if method not in ADJUST_METHODS:
        raise ValueError(f"method must be one of {ADJUST_METHODS}, got {method!r}")
    values = np.asarray(pvalues, dtype=float)
    if values.ndim != 1:
        raise ValueError("pvalues must be a flat sequence of numbers")
    if not np.all(np.isfinite(values)) or np.any((values < 0) | (values > 1)):
        raise ValueError(f"every p-value must lie in [0, 1], got {list(pvalues)}")
    m = len(values)
    if m == 0:
        return []
    if method == "bonferroni":
        return [float(v) for v in np.minimum(1.0, values * m)]
    if method == "reverse-bonferroni":
        return [float(v) for v in values / m]
    order = np.argsort(values, kind="stable")
    ranked = values[order]
    if method == "holm":
        # Multiply the i-th smallest by (m − i), then keep the sequence non-decreasing.
        stepped = np.maximum.accumulate(ranked * (m - np.arange(m)))
    else:
        # The i-th smallest times m/i, then non-increasing from the largest down.
        stepped = np.minimum.accumulate((ranked * m / np.arange(1, m + 1))[::-1])[::-1]
    adjusted = np.empty(m)
    adjusted[order] = np.minimum(1.0, stepped)
    return [float(v) for v in adjusted]


def bootstrap_ci(
    data: Any,
    statistic: Callable[[Any], float],
    level: float = 0.95,
    n_boot: int = 2000,
    seed: int = 0,
) -> Interval:
    """Percentile bootstrap interval of `statistic` (seeded, reproducible).

    `data` is a 1-D numeric array, an array whose rows are units, a pandas DataFrame/Series (rows
    resampled with .iloc) or any sequence of rows (resampled as a list). Quantiles use numpy's
    default linear interpolation. A statistic that is not finite on some resample is an error
    (leaving those resamples out would bias the interval silently).
    """
    level = check_open_unit("level", level)
    if isinstance(n_boot, bool) or not isinstance(n_boot, int) or n_boot < 1:
        raise ValueError(f"n_boot must be a positive whole number, got {n_boot!r}")
    units = _as_units(data)
    size = len(units)
    if size == 0:
        raise ValueError("data is empty: nothing to resample")
    values = np.array(
        [
            float(statistic(_take(units, rows)))
            for block in bootstrap_draws(size, n_boot, seed)
            for rows in block
        ]
    )
    return percentile_interval(values, level)


def bootstrap_draws(
    size: int, n_boot: int, seed: int, max_cells: int = 4_000_000
) -> Iterator[np.ndarray]:
    """The resample indices of `bootstrap_ci`, `n_boot` rows of `size`, in blocks of at most
    `max_cells` cells (memory stays bounded at 50,000 units). numpy draws the same stream
    whether asked for all rows at once or block by block, so results do not depend on it."""
    rng = np.random.default_rng(seed)
    per_block = max(1, max_cells // max(size, 1))
    for start in range(0, n_boot, per_block):
        yield rng.integers(0, size, size=(min(per_block, n_boot - start), size))


def percentile_interval(values: np.ndarray, level: float) -> Interval:
    """Percentile interval of bootstrap replicates; a non-finite replicate is an error."""
    bad = int(np.sum(~np.isfinite(values)))
    if bad:
        raise ValueError(f"statistic was not finite on {bad} of {len(values)} bootstrap resamples")
    tail = (1.0 - level) / 2
    low, high = np.quantile(values, [tail, 1.0 - tail])
    return float(low), float(high)


def _as_units(data: Any) -> Any:
    if isinstance(data, np.ndarray) or hasattr(data, "iloc"):
        return data
    as_array = np.asarray(data, dtype=object) if len(data) else np.asarray([])
    if as_array.ndim == 1 and all(
        isinstance(v, (int, float, np.number)) and not isinstance(v, bool) for v in as_array
    ):
        return np.asarray(data, dtype=float)
    return list(data)


def _take(units: Any, rows: np.ndarray) -> Any:
    if isinstance(units, np.ndarray):
        return units[rows]
    if hasattr(units, "iloc"):
        return units.iloc[rows]
    return [units[i] for i in rows]


def cohen_kappa(a: Sequence[Hashable], b: Sequence[Hashable]) -> float:
    """Cohen's kappa between two raters' labels of the same items.

    κ = (p_o − p_e) / (1 − p_e), p_o the observed agreement, p_e the agreement expected from the
    two raters' label frequencies. NaN when p_e = 1 (both raters always gave the same single
    label: agreement beyond chance is undefined).
    """
    labels_a, labels_b = list(a), list(b)
    if len(labels_a) != len(labels_b):
        raise ValueError(
            f"the two raters label different numbers of items: {len(labels_a)} ≠ {len(labels_b)}"
        )
    n = len(labels_a)
    if n == 0:
        raise ValueError("no items: cohen_kappa needs at least one labelled item")
    observed = sum(x == y for x, y in zip(labels_a, labels_b, strict=True)) / n
    count_a, count_b = Counter(labels_a), Counter(labels_b)
    expected = sum(count_a[label] * count_b[label] for label in count_a) / (n * n)
    if math.isclose(expected, 1.0):
        return math.nan
    return (observed - expected) / (1.0 - expected)


@dataclass(frozen=True)
class BinomialSummary:
    """Everything `turinglab stats binomial` prints for k successes in n trials."""

    successes: int
    trials: int
    chance: float
    alpha: float
    p_two_sided: float
    p_greater: float
    p_less: float
    wald: WaldResult
    ci: dict[str, Interval]
    compatible_p_intervals: list[Interval]

    @property
    def proportion(self) -> float:
        return self.successes / self.trials

    @property
    def compatible_p(self) -> Interval:
        return hull(self.compatible_p_intervals)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: intervals as [low, high] lists, undefined values as None."""
        return {
            "successes": self.successes,
            "trials": self.trials,
            "proportion": self.proportion,
            "chance": self.chance,
            "alpha": self.alpha,
            "level": 1.0 - self.alpha,
            "p_two_sided": self.p_two_sided,
            "p_greater": self.p_greater,
            "p_less": self.p_less,
            "wald_z": self.wald.z,
            "wald_p_two_sided": self.wald.p_two_sided,
            "wald_p_greater": self.wald.p_greater,
            "wald_p_less": self.wald.p_less,
            "wald_note": self.wald.note,
            "ci": {method: list(bounds) for method, bounds in self.ci.items()},
            "compatible_p": list(self.compatible_p),
            "compatible_p_intervals": [list(part) for part in self.compatible_p_intervals],
        }


def binomial_summary(k: int, n: int, chance: float = 0.5, alpha: float = 0.05) -> BinomialSummary:
    """Exact and Wald tests against `chance`, five intervals at 1 − alpha, and the compatible p."""
    check_counts(k, n)
    chance = check_open_unit("chance", chance)
    alpha = check_open_unit("alpha", alpha)
    # The Sterne interval is the hull of the compatible set: compute that set once.
    compatible = compatible_p(k, n, alpha)
    ci = {
        method: hull(compatible) if method == "sterne" else binomial_ci(k, n, 1.0 - alpha, method)  # type: ignore[arg-type]
        for method in CI_METHODS
    }
    return BinomialSummary(
        successes=int(k),
        trials=int(n),
        chance=chance,
        alpha=alpha,
        p_two_sided=exact_binomial_test(k, n, chance, "two-sided"),
        p_greater=exact_binomial_test(k, n, chance, "greater"),
        p_less=exact_binomial_test(k, n, chance, "less"),
        wald=wald_test(k, n, chance),
        ci=ci,
        compatible_p_intervals=compatible,
    )
