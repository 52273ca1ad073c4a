"""Exact and Wald tests for one binomial proportion (pure functions, no I/O).

* `exact_binomial_test` — the exact one-sided tests and the two-sided test that sums the
  probability of the observed count and of every count that is as probable or less (Sterne's
  "minimum likelihood" test; what scipy.stats.binomtest and R's binom.test compute). Ties are
  judged with the relative tolerance 1 + 1e-7 that scipy and R use, so that counts whose
  probabilities differ only by rounding (e.g. k and n − k at p = ½) count as equally probable.
* `wald_test` — the Wald z of an intercept-only logistic regression: the estimated log-odds
  against logit(chance), with SE = 1 / sqrt(n p̂ (1 − p̂)). This is the z that binomial (logistic)
  regressions report, as in Jones & Bergen (2025). At 0 or n successes the estimate is ±∞ and the
  statistic does not exist, so the result says so instead of inventing a number.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from scipy.stats import binom, norm

Alternative = Literal["two-sided", "greater", "less"]
ALTERNATIVES: tuple[str, ...] = ("two-sided", "greater", "less")
TIE_TOLERANCE = 1 + 1e-7  # relative tolerance for "as probable" (scipy's and R's choice)


def check_counts(k: object, n: object, k_name: str = "successes", n_name: str = "trials") -> None:
    """Raise ValueError unless 0 ≤ k ≤ n and n ≥ 1 are whole numbers."""
    for name, value in ((k_name, k), (n_name, n)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise ValueError(f"{name} must be a whole number, got {value!r}")
        if value < 0:
            raise ValueError(f"{name} must not be negative, got {value}")
    assert isinstance(k, numbers.Integral) and isinstance(n, numbers.Integral)
    if n == 0:
        raise ValueError(f"{n_name} must be at least 1, got 0")
    if k > n:
        raise ValueError(f"{k_name} ({k}) cannot exceed {n_name} ({n})")


# The exact tests, intervals and compatible ranges take about a second at 10⁸ trials and grow
# with n (10⁹: 24 s); past this, a count is refused rather than left computing for minutes.
MAX_EXACT_TRIALS = 100_000_000


def check_size(n: int, n_name: str = "trials") -> None:
    """Raise ValueError when n is past MAX_EXACT_TRIALS (the exact computations stop being fast)."""
    if n > MAX_EXACT_TRIALS:
        raise ValueError(
            f"{n_name} {n:,} is more than {MAX_EXACT_TRIALS:,}, the most the exact tests compute "
            "in seconds; at this size the normal approximation (z = (k − n·p) / sqrt(n·p·(1 − p))) "
            "is what an exact test would give to many decimals"
        )


def check_open_unit(name: str, value: object) -> float:
    """Raise ValueError unless value is a real number strictly between 0 and 1."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a number between 0 and 1, got {value!r}")
    as_float = float(value)
    if not 0.0 < as_float < 1.0:
        raise ValueError(f"{name} must lie strictly between 0 and 1, got {value}")
    return as_float


def _check_alternative(alternative: str) -> None:
    if alternative not in ALTERNATIVES:
        raise ValueError(f"alternative must be one of {ALTERNATIVES}, got {alternative!r}")


def exact_binomial_test(
    k: int, n: int, p: float = 0.5, alternative: Alternative = "two-sided"
) -> float:
    """Exact p-value of k successes in n trials under success probability p.

    "greater": Pr(X ≥ k); "less": Pr(X ≤ k); "two-sided": Σ Pr(X = x) over every x with
    Pr(X = x) ≤ Pr(X = k) · (1 + 1e-7).
    """
    check_counts(k, n)
    p = check_open_unit("p", p)
    _check_alternative(alternative)
    if alternative == "greater":
        return float(binom.sf(k - 1, n, p))
    if alternative == "less":
        return float(binom.cdf(k, n, p))
    # The counts as probable as k form two tails (the pmf is unimodal): everything up to the
    # last count left of the mode that is as probable, and from the first such count right of
    # it. Both ends are found by bisection, so the cost is O(log n), not O(n) — n = 10⁷ in
    # milliseconds. Each tail is summed with cdf/sf, which keeps tiny p-values accurate.
    threshold = float(binom.logpmf(k, n, p)) + math.log(TIE_TOLERANCE)
    mode = min(n, math.floor((n + 1) * p))

    def as_probable(x: int) -> bool:
        return float(binom.logpmf(x, n, p)) <= threshold

    if as_probable(mode):
        return 1.0
    lower_end = _last_true(as_probable, 0, mode - 1)  # pmf rises on 0..mode
    upper_start = first_true(as_probable, mode + 1, n)  # and falls on mode..n
    total = float(binom.cdf(lower_end, n, p)) if lower_end >= 0 else 0.0
    total += float(binom.sf(upper_start - 1, n, p)) if upper_start <= n else 0.0
    return min(1.0, total)


def _last_true(pred: Callable[[int], bool], lo: int, hi: int) -> int:
    """Largest x in [lo, hi] with pred(x), for pred true then false along x; lo − 1 if none."""
    if hi < lo or not pred(lo):
        return lo - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if pred(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo


def first_true(pred: Callable[[int], bool], lo: int, hi: int) -> int:
    """Smallest x in [lo, hi] with pred(x), for pred false then true along x; hi + 1 if none."""
    if hi < lo or not pred(hi):
        return hi + 1
    while lo < hi:
        mid = (lo + hi) // 2
        if pred(mid):
            hi = mid
        else:
            lo = mid + 1
    return lo


@dataclass(frozen=True)
class WaldResult:
    """Wald z of the intercept of a logistic regression and its normal p-values.

    All four numbers are None when the statistic does not exist (0 or n successes); `note`
    then says why.
    """

    z: float | None
    p_two_sided: float | None
    p_greater: float | None
    p_less: float | None
    note: str | None = None


def _logit(p: float) -> float:
    return math.log(p / (1 - p))


def wald_test(k: int, n: int, chance: float = 0.5) -> WaldResult:
    """z = (logit(k/n) − logit(chance)) · sqrt(n p̂ (1 − p̂)), with normal p-values."""
    check_counts(k, n)
    chance = check_open_unit("chance", chance)
    if k in (0, n):
        which = "no successes" if k == 0 else "only successes"
        note = (
            f"Wald z undefined: with {which} ({k}/{n}) the estimated log-odds is "
            f"{'-' if k == 0 else '+'}infinity and its standard error is infinite "
            "(complete separation); use the exact test instead"
        )
        return WaldResult(None, None, None, None, note)
    p_hat = k / n
    z = (_logit(p_hat) - _logit(chance)) * math.sqrt(n * p_hat * (1 - p_hat))
    return WaldResult(
        z=z,
        p_two_sided=float(2 * norm.sf(abs(z))),
        p_greater=float(norm.sf(z)),
        p_less=float(norm.cdf(z)),
    )
