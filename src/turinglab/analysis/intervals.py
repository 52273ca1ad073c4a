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

from turinglab.analysis.binomial import check_counts, check_open_unit, first_true

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
    # The p-value is a sum of at most n + 1 probabilities none above Pr_p(X = k), so it exceeds
    # alpha only where Pr_p(X = k) > alpha / (n + 1): a window around k/n about a dozen standard
    # errors wide. Only counts whose crossing point lies in it need to be looked at, which
    # makes n = 10⁷ as cheap as n = 10⁴ (one e below the bound is a margin for rounding).
    p_low, p_high = _likelihood_window(k, n, math.log(alpha / (n + 1)) - 1.0)
    log_choose_k = _log_choose(n, np.array([k]))[0]

    def crossing(x: IntArray) -> FloatArray:
        # Pr(X = x) = Pr(X = k) where p/(1−p) = (C(n,k)/C(n,x))^(1/(x−k)); increasing in x on
        # each side of k (log C(n, x) is concave in x).
        return np.asarray(expit((log_choose_k - _log_choose(n, x)) / (x - k)), dtype=np.float64)

    def at(x: int) -> float:
        return float(crossing(np.array([x]))[0])

    # x < k is as extreme once p ≥ its crossing; those crossing below the window always are.
    below_first = first_true(lambda x: at(x) >= p_low, 0, k - 1)
    below_last = first_true(lambda x: at(x) > p_high, below_first, k - 1) - 1
    below = crossing(np.arange(below_first, below_last + 1))
    # x > k is as extreme while p ≤ its crossing; those crossing above the window always are.
    above_first = first_true(lambda x: at(x) >= p_low, k + 1, n)
    above_end = first_true(lambda x: at(x) > p_high, above_first, n)
    above = crossing(np.arange(above_first, above_end))
    always_above = n + 1 - above_end

    def tails_at(p: FloatArray) -> tuple[IntArray, IntArray]:
        n_below = below_first + np.searchsorted(below, p, side="right")
        n_above = always_above + len(above) - np.searchsorted(above, p, side="left")
        k_in_lower_tail = n_below == k
        a = np.where(k_in_lower_tail, k, n_below - 1)
        b = np.where(k_in_lower_tail, n - n_above + 1, k)
        return a.astype(np.int64), b.astype(np.int64)

    breaks = np.concatenate([below, above])
    return _acceptance_set(n, alpha, breaks, tails_at, p_low, p_high)


def _log_choose(n: int, x: IntArray) -> FloatArray:
    return np.asarray(gammaln(n + 1) - gammaln(x + 1) - gammaln(n - x + 1), dtype=np.float64)


def _likelihood_window(k: int, n: int, log_bound: float) -> Interval:
    """The p in [0, 1] where log Pr_p(X = k) > log_bound (an interval around k/n)."""
    centre = k / n

    def above(p: float) -> bool:
        return float(binom.logpmf(k, n, p)) > log_bound

    def edge(inside: float, outside: float) -> float:
        if above(outside):
            return outside
        for _ in range(_BISECTION_STEPS):
            middle = (inside + outside) / 2
            inside, outside = (middle, outside) if above(middle) else (inside, middle)
        return outside

    return edge(centre, 0.0), edge(centre, 1.0)


def blaker_set(k: int, n: int, alpha: float = 0.05) -> list[Interval]:
    """The p that Blaker's (2000) acceptability test does not reject at level alpha.

    Acceptability γ(p) = Pr(min tail of X ≤ min tail of k); the set lies inside the
    Clopper–Pearson interval (Blaker 2000, Theorem 1), which bounds the search.
    """
    check_counts(k, n)
    alpha = check_open_unit("alpha", alpha)
    low, high = _clopper_pearson(k, n, alpha)

    # x > k joins the extreme set while Pr(X ≥ x) ≤ Pr(X ≤ k): an increasing gap in p.
    def upper_gap(p: FloatArray, x: IntArray) -> FloatArray:
        return np.asarray(binom.sf(x - 1, n, p) - binom.cdf(k, n, p), dtype=np.float64)

    # x < k joins it once Pr(X ≤ x) ≤ Pr(X ≥ k): a decreasing gap, negated to increase.
    def lower_gap(p: FloatArray, x: IntArray) -> FloatArray:
        return np.asarray(binom.sf(k - 1, n, p) - binom.cdf(x, n, p), dtype=np.float64)

    # Roots below `low` count as −inf, above `high` as +inf; only those between are computed.
    upper_skip, upper_roots = _increasing_roots(upper_gap, k + 1, n, low, high)
    lower_skip, lower_roots = _increasing_roots(lower_gap, 0, k - 1, low, high)
    points = [upper_roots, lower_roots]
    if 0 < k < n:  # where the observed count's two tails are equal: the smaller tail switches
        _skip, tie = _increasing_roots(
            lambda p, _x: np.asarray(binom.sf(k - 1, n, p) - binom.cdf(k, n, p), dtype=float),
            k,
            k,
            low,
            high,
        )
        points.append(tie)

    def tails_at(p: FloatArray) -> tuple[IntArray, IntArray]:
        lower_observed = binom.cdf(k, n, p) <= binom.sf(k - 1, n, p)
        not_extreme_above = upper_skip + np.searchsorted(upper_roots, p, side="left")
        extreme_below = lower_skip + np.searchsorted(lower_roots, p, side="right")
        a = np.where(lower_observed, k, extreme_below - 1)
        b = np.where(lower_observed, k + not_extreme_above + 1, k)
        return a.astype(np.int64), b.astype(np.int64)

    return _acceptance_set(n, alpha, np.concatenate(points), tails_at, low, high)


def _increasing_roots(
    gap: Callable[[FloatArray, IntArray], FloatArray], x_lo: int, x_hi: int, low: float, high: float
) -> tuple[int, FloatArray]:
    """Roots in [low, high] of the increasing gaps gap(·, x), x in x_lo..x_hi, by vectorised
    bisection, for gaps that also decrease in x (so their roots increase with x).

    Returns (how many roots lie below `low`, the sorted roots inside); roots above `high` are
    left out. The x with a root inside form one run, found by integer bisection first, so the
    work is O(size of the run), not O(n).
    """
    if x_hi < x_lo:
        return 0, np.zeros(0)

    def at(p: float, x: int) -> float:
        return float(gap(np.array([p]), np.array([x]))[0])

    first = first_true(lambda x: at(low, x) < 0, x_lo, x_hi)  # before it: root below `low`
    end = first_true(lambda x: at(high, x) <= 0, first, x_hi)  # from it: root above `high`
    x = np.arange(first, end)
    return first - x_lo, np.sort(_bracketed_roots(gap, x, low, high))


def _bracketed_roots(
    gap: Callable[[FloatArray, IntArray], FloatArray], x: IntArray, low: float, high: float
) -> FloatArray:
    """Root of each increasing gap(·, x) with gap(low) < 0 < gap(high): Illinois false
    position, vectorised, with bisection whenever it leaves the bracket. A dozen evaluations
    reach double precision where plain bisection needs fifty; each evaluation is an incomplete
    beta function per x, the cost that matters at n = 10⁷."""
    left, right = np.full(len(x), low), np.full(len(x), high)
    f_left, f_right = gap(left, x), gap(right, x)
    last_side = np.zeros(len(x), dtype=np.int8)
    root = (left + right) / 2
    active = np.ones(len(x), dtype=bool)
    for _ in range(_BISECTION_STEPS):
        if not active.any():
            break
        i = np.flatnonzero(active)
        lo, hi, f_lo, f_hi = left[i], right[i], f_left[i], f_right[i]
        guess = (lo * f_hi - hi * f_lo) / (f_hi - f_lo)
        inside = np.isfinite(guess) & (guess > lo) & (guess < hi)
        middle = np.where(inside, guess, (lo + hi) / 2)
        f_middle = gap(middle, x[i])
        positive = f_middle > 0
        # converged: an exact zero, or the estimate moved by less than the tolerance
        tolerance = 64 * np.finfo(float).eps * np.abs(middle)  # ~1e-14: below any use
        done = (f_middle == 0) | (np.abs(middle - root[i]) <= tolerance) | (hi - lo <= tolerance)
        root[i] = middle
        side = np.where(positive, 1, -1).astype(np.int8)
        repeat = side == last_side[i]
        right[i] = np.where(positive, middle, hi)
        left[i] = np.where(positive, lo, middle)
        # Illinois: when the same end moves twice in a row, halve the other end's value
        f_right[i] = np.where(positive, f_middle, np.where(repeat, f_hi / 2, f_hi))
        f_left[i] = np.where(positive, np.where(repeat, f_lo / 2, f_lo), f_middle)
        last_side[i] = side
        active[i[done]] = False
    return root


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
    at_turning = _tail_p_value(turning, n, a, b)
    # A piece accepted at its lowest point needs no more; the ends matter only for the rest.
    at_left, at_right = np.ones(len(left)), np.ones(len(left))
    rest = at_turning <= alpha
    at_left[rest] = _tail_p_value(left[rest], n, a[rest], b[rest])
    at_right[rest] = _tail_p_value(right[rest], n, a[rest], b[rest])

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
