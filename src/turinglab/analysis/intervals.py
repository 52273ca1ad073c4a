"""Confidence intervals for one binomial proportion, and compatible ranges (pure functions).

Clopper–Pearson, Wilson and Jeffreys have closed forms. Blaker (2000) and Sterne (1954) invert
two-sided exact tests whose p-value, as a function of p, jumps and need not be unimodal, so their
acceptance sets {p : p-value(p) > α} can be unions of disjoint intervals. They are computed
exactly here, not on a grid:

* Both p-values have the form P(p) = Pr(X ≤ a) + Pr(X ≥ b) for a set of "as extreme" counts
  {0..a} ∪ {b..n} that changes only at known break points (Sterne: where Pr(X = x) = Pr(X = k),
  in closed form; Blaker: where a tail of x equals the observed tail, found by bisection).
* Between break points a and b are fixed and dP/dp = n [Pr_{n−1}(b−1) − Pr_{n−1}(a)], which
  changes sign once, from − to +, at a point known in closed form. So every piece splits into a
  decreasing and an increasing part, and each crossing of α is found by root finding on a
  monotone function.

The confidence interval is the hull of the acceptance set (as in Blaker 2000, Reiczigel 2003 and
R's exactci/BlakerCI); `compatible_p` returns the Sterne set itself (Giunti's compatible range).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Literal

import numpy as np
from numpy.typing import NDArray
from scipy.optimize import brentq
from scipy.special import expit, gammaln
from scipy.stats import beta, binom, norm

from turinglab.analysis.binomial import check_counts, check_open_unit

CIMethod = Literal["clopper-pearson", "wilson", "jeffreys", "blaker", "sterne"]
CI_METHODS: tuple[str, ...] = ("clopper-pearson", "wilson", "jeffreys", "blaker", "sterne")
Interval = tuple[float, float]
FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
TailsAt = Callable[[FloatArray], tuple[IntArray, IntArray]]
_BISECTION_STEPS = 80  # halvings of [0, 1]: below double precision everywhere


def binomial_ci(
    k: int, n: int, level: float = 0.95, method: CIMethod = "clopper-pearson"
) -> Interval:
    """Two-sided confidence interval for the success probability at confidence `level`.

    Jeffreys follows Brown, Cai & DasGupta (2001): the equal-tailed Beta(k+½, n−k+½) interval,
    with the lower limit set to 0 at k = 0 and the upper to 1 at k = n. Blaker and Sterne return
    the smallest interval holding their (possibly non-convex) acceptance set.
    """
    check_counts(k, n)
    level = check_open_unit("level", level)
    alpha = 1.0 - level
    if method == "clopper-pearson":
        return _clopper_pearson(k, n, alpha)
    if method == "wilson":
        return _wilson(k, n, alpha)
    if method == "jeffreys":
        low = 0.0 if k == 0 else float(beta.ppf(alpha / 2, k + 0.5, n - k + 0.5))
        high = 1.0 if k == n else float(beta.ppf(1 - alpha / 2, k + 0.5, n - k + 0.5))
        return low, high
    if method == "blaker":
        return hull(blaker_set(k, n, alpha))
    if method == "sterne":
        return hull(compatible_p(k, n, alpha))
    raise ValueError(f"method must be one of {CI_METHODS}, got {method!r}")


def hull(intervals: list[Interval]) -> Interval:
    """Smallest interval containing a non-empty union of intervals."""
    if not intervals:
        raise ValueError("the acceptance set is empty")
    return intervals[0][0], intervals[-1][1]


def _clopper_pearson(k: int, n: int, alpha: float) -> Interval:
    low = 0.0 if k == 0 else float(beta.ppf(alpha / 2, k, n - k + 1))
    high = 1.0 if k == n else float(beta.ppf(1 - alpha / 2, k + 1, n - k))
    return low, high


def _wilson(k: int, n: int, alpha: float) -> Interval:
    z = float(norm.isf(alpha / 2))
    centre = (k + z * z / 2) / (n + z * z)
    half = z / (n + z * z) * math.sqrt(k * (n - k) / n + z * z / 4)
    return max(0.0, centre - half), min(1.0, centre + half)


def compatible_p(k: int, n: int, alpha: float = 0.05) -> list[Interval]:
    """The p at which k of n is not significant by the exact two-sided (minimum-likelihood) test.

    A sorted list of disjoint closed intervals; its hull is Sterne's confidence interval.
    """
    check_counts(k, n)
    alpha = check_open_unit("alpha", alpha)
    xs = np.arange(n + 1)
    others = xs[xs != k]
    log_choose = gammaln(n + 1) - gammaln(xs + 1) - gammaln(n - xs + 1)
    # Pr(X = x) = Pr(X = k) where p/(1−p) = (C(n,k)/C(n,x))^(1/(x−k)).
    log_odds = (log_choose[k] - log_choose[others]) / (others - k)
    crossing = expit(log_odds)
    below = np.sort(crossing[others < k])  # x < k is as extreme once p ≥ its crossing
    above = np.sort(crossing[others > k])  # x > k is as extreme while p ≤ its crossing

    def tails_at(p: FloatArray) -> tuple[IntArray, IntArray]:
        n_below = np.searchsorted(below, p, side="right")
        n_above = len(above) - np.searchsorted(above, p, side="left")
        k_in_lower_tail = n_below == k
        a = np.where(k_in_lower_tail, k, n_below - 1)
        b = np.where(k_in_lower_tail, n - n_above + 1, k)
        return a.astype(np.int64), b.astype(np.int64)

    return _acceptance_set(n, alpha, crossing, tails_at, 0.0, 1.0)


def blaker_set(k: int, n: int, alpha: float = 0.05) -> list[Interval]:
    """The p that Blaker's (2000) acceptability test does not reject at level alpha.

    Acceptability γ(p) = Pr(min tail of X ≤ min tail of k); the set lies inside the
    Clopper–Pearson interval (Blaker 2000, Theorem 1), which bounds the search.
    """
    check_counts(k, n)
    alpha = check_open_unit("alpha", alpha)
    low, high = _clopper_pearson(k, n, alpha)
    upper_x = np.arange(k + 1, n + 1)
    lower_x = np.arange(0, k)

    # x > k joins the extreme set while Pr(X ≥ x) ≤ Pr(X ≤ k): an increasing gap in p.
    def upper_gap(p: FloatArray, x: IntArray) -> FloatArray:
        return np.asarray(binom.sf(x - 1, n, p) - binom.cdf(k, n, p), dtype=np.float64)

    # x < k joins it once Pr(X ≤ x) ≤ Pr(X ≥ k): a decreasing gap, negated to increase.
    def lower_gap(p: FloatArray, x: IntArray) -> FloatArray:
        return np.asarray(binom.sf(k - 1, n, p) - binom.cdf(x, n, p), dtype=np.float64)

    upper_roots = _increasing_roots(upper_gap, upper_x, low, high)
    lower_roots = _increasing_roots(lower_gap, lower_x, low, high)
    points = [upper_roots, lower_roots]
    if 0 < k < n:  # where the observed count's two tails are equal: the smaller tail switches
        tie = _increasing_roots(
            lambda p, _x: np.asarray(binom.sf(k - 1, n, p) - binom.cdf(k, n, p), dtype=float),
            np.array([k]),
            low,
            high,
        )
        points.append(tie)

    def tails_at(p: FloatArray) -> tuple[IntArray, IntArray]:
        lower_observed = binom.cdf(k, n, p) <= binom.sf(k - 1, n, p)
        not_extreme_above = np.searchsorted(upper_roots, p, side="left")
        extreme_below = np.searchsorted(lower_roots, p, side="right")
        a = np.where(lower_observed, k, extreme_below - 1)
        b = np.where(lower_observed, k + not_extreme_above + 1, k)
        return a.astype(np.int64), b.astype(np.int64)

    breaks = np.concatenate(points)
    return _acceptance_set(n, alpha, breaks[np.isfinite(breaks)], tails_at, low, high)


def _increasing_roots(
    gap: Callable[[FloatArray, IntArray], FloatArray], xs: IntArray, low: float, high: float
) -> FloatArray:
    """Root in [low, high] of each increasing gap(·, x), by vectorised bisection.

    −inf where the gap is already ≥ 0 at `low`, +inf where it is still ≤ 0 at `high`.
    """
    roots = np.full(len(xs), np.nan)
    if len(xs) == 0:
        return roots
    at_low = gap(np.full(len(xs), low), xs)
    at_high = gap(np.full(len(xs), high), xs)
    roots[at_low >= 0] = -np.inf
    roots[(at_low < 0) & (at_high <= 0)] = np.inf
    todo = np.isnan(roots)
    left = np.full(int(todo.sum()), low)
    right = np.full(int(todo.sum()), high)
    x = xs[todo]
    for _ in range(_BISECTION_STEPS):
        middle = (left + right) / 2
        positive = gap(middle, x) > 0
        right = np.where(positive, middle, right)
        left = np.where(positive, left, middle)
    roots[todo] = (left + right) / 2
    return np.sort(roots)


def _tail_p_value(
    p: FloatArray | float, n: int, a: IntArray | int, b: IntArray | int
) -> FloatArray:
    """Pr(X ≤ a) + Pr(X ≥ b) (a = −1: no lower tail; b = n + 1: no upper tail)."""
    return np.asarray(binom.cdf(a, n, p) + binom.sf(np.asarray(b) - 1, n, p), dtype=np.float64)


def _turning_point(
    n: int, a: IntArray, b: IntArray, left: FloatArray, right: FloatArray
) -> FloatArray:
    """Where Pr(X ≤ a) + Pr(X ≥ b) stops decreasing: Pr_{n−1}(X = b−1) = Pr_{n−1}(X = a)."""
    two_tails = (a >= 0) & (b <= n) & (a < b - 1)
    a_safe = np.where(two_tails, a, 0)
    b_safe = np.where(two_tails, b, 2)
    log_ratio = (
        gammaln(b_safe) + gammaln(n - b_safe + 1) - gammaln(a_safe + 1) - gammaln(n - a_safe)
    )  # log C(n−1, a) − log C(n−1, b−1)
    odds_power = np.maximum(b_safe - 1 - a_safe, 1)
    turning = expit(log_ratio / odds_power)
    turning = np.where(two_tails, turning, np.where(b > n, right, left))
    return np.clip(turning, left, right)


def _acceptance_set(
    n: int, alpha: float, breaks: FloatArray, tails_at: TailsAt, low: float, high: float
) -> list[Interval]:
    """Union of closed intervals in [low, high] where the two-tail p-value exceeds alpha."""
    edges = np.unique(np.concatenate([[low, high], np.clip(breaks, low, high)]))
    left, right = edges[:-1], edges[1:]
    a, b = tails_at((left + right) / 2)
    turning = _turning_point(n, a, b, left, right)
    at_left = _tail_p_value(left, n, a, b)
    at_turning = _tail_p_value(turning, n, a, b)
    at_right = _tail_p_value(right, n, a, b)

    pieces: list[Interval] = []
    for i in range(len(left)):
        if at_turning[i] > alpha:
            pieces.append((float(left[i]), float(right[i])))
            continue
        ai, bi = int(a[i]), int(b[i])

        def excess(p: float, ai: int = ai, bi: int = bi) -> float:
            return float(_tail_p_value(p, n, ai, bi)) - alpha

        if at_left[i] > alpha:  # decreasing part crosses α on its way down
            end = brentq(excess, left[i], turning[i], xtol=1e-16, rtol=1e-15)
            pieces.append((float(left[i]), float(end)))
        if at_right[i] > alpha:  # increasing part crosses α on its way up
            start = brentq(excess, turning[i], right[i], xtol=1e-16, rtol=1e-15)
            pieces.append((float(start), float(right[i])))
    return _merge(pieces)


def _merge(pieces: list[Interval]) -> list[Interval]:
    merged: list[Interval] = []
    for start, end in sorted(pieces):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged
