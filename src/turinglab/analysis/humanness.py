"""Giunti's (2025) pass criteria for human-judged Turing tests (pure functions).

Three-party: each game is two coupled Bernoulli experiments (the machine is called human exactly
when the human is called a machine), so the machine's misidentification rate equals the human's
correct-identification rate only at ½. Absolute criterion: ½ lies in the compatible range of the
machine's rate. Degree of humanness (relative criterion) = rate / 0.5, with compatible range =
the compatible range of the rate / 0.5.

Two-party: machine and human witnesses are judged in independent games. Absolute criterion: the
machine's misidentification (judged-human) rate equals the human's correct-identification
(judged-human) rate — checked with Fisher's exact test, and Boschloo's where the table is small
enough to compute quickly. Degree of humanness = machine rate / human rate, with two intervals:
  * "fixed human rate": the machine rate's compatible range divided by the observed human rate
    (the human rate taken as known, as in Giunti's worked examples);
  * "Koopman score": Koopman's (1984) score interval for a ratio of two independent proportions
    (computed here; agrees with statsmodels' score method without correction where that is
    defined), which also carries the human rate's uncertainty.
Turing's (1950) prediction — an average interrogator right no more than 70% of the time after
five minutes — is a 30% misidentification rate, i.e. a degree of humanness of 0.6.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from scipy.optimize import brentq
from scipy.stats import boschloo_exact, chi2, fisher_exact

from turinglab.analysis.binomial import check_counts, exact_binomial_test
from turinglab.analysis.intervals import Interval, compatible_p, hull

TURING_HUMANNESS = 0.6  # 30% misidentification ÷ 50%
THREE_PARTY_REFERENCE = 0.5
REPORT_ALPHAS = (0.05, 0.01)
BOSCHLOO_MAX_CELLS = 40_000  # (n1 + 1)(n2 + 1): about 0.2 s; larger tables take minutes


def _contains(intervals: list[Interval], value: float) -> bool:
    return any(low <= value <= high for low, high in intervals)


@dataclass(frozen=True)
class ThreePartyLevel:
    alpha: float
    rate_intervals: list[Interval]  # compatible set of the machine's misidentification rate
    rate_range: Interval  # its hull
    humanness_range: Interval  # rate_range / 0.5
    absolute_criterion_compatible: bool  # 0.5 in the compatible set
    turing_benchmark_compatible: bool  # 0.3 in the compatible set (humanness 0.6)


@dataclass(frozen=True)
class ThreePartyHumanness:
    machine_judged_human: int
    games: int
    rate: float
    humanness: float
    p_value_vs_half: float  # exact two-sided test of rate = 0.5
    meets_turing_benchmark: bool  # point estimate ≥ 0.6
    levels: list[ThreePartyLevel]

    def to_dict(self) -> dict[str, Any]:
        return {"design": "three-party", **asdict(self)}


def three_party_humanness(
    machine_judged_human: int, games: int, alphas: tuple[float, ...] = REPORT_ALPHAS
) -> ThreePartyHumanness:
    """Degree of humanness rate/0.5 of a machine judged human in k of n three-party games."""
    check_counts(machine_judged_human, games, "machine_judged_human", "games")
    k, n = machine_judged_human, games
    levels = []
    for alpha in alphas:
        intervals = compatible_p(k, n, alpha)
        low, high = hull(intervals)
        levels.append(
            ThreePartyLevel(
                alpha=alpha,
                rate_intervals=intervals,
                rate_range=(low, high),
                humanness_range=(low / THREE_PARTY_REFERENCE, high / THREE_PARTY_REFERENCE),
                absolute_criterion_compatible=_contains(intervals, THREE_PARTY_REFERENCE),
                turing_benchmark_compatible=_contains(
                    intervals, TURING_HUMANNESS * THREE_PARTY_REFERENCE
                ),
            )
        )
    rate = k / n
    return ThreePartyHumanness(
        machine_judged_human=k,
        games=n,
        rate=rate,
        humanness=rate / THREE_PARTY_REFERENCE,
        p_value_vs_half=exact_binomial_test(k, n, THREE_PARTY_REFERENCE, "two-sided"),
        meets_turing_benchmark=rate / THREE_PARTY_REFERENCE >= TURING_HUMANNESS,
        levels=levels,
    )


@dataclass(frozen=True)
class TwoPartyLevel:
    alpha: float
    machine_rate_range: Interval  # hull of the machine rate's compatible set
    humanness_fixed_human_rate: Interval | None  # machine_rate_range / observed human rate
    humanness_koopman: Interval | None  # Koopman score interval of the ratio
    absolute_criterion_compatible: bool  # Fisher's exact test not significant at alpha
    turing_benchmark_compatible: bool | None  # 0.6 inside the Koopman interval


@dataclass(frozen=True)
class TwoPartyHumanness:
    machine_judged_human: int
    machine_games: int
    human_judged_human: int
    human_games: int
    machine_rate: float
    human_rate: float
    humanness: float | None  # None when no human was judged human
    fisher_p_two_sided: float
    boschloo_p_two_sided: float | None  # None for tables too large to compute quickly
    meets_turing_benchmark: bool | None
    levels: list[TwoPartyLevel]
    notes: list[str]

    def to_dict(self) -> dict[str, Any]:
        return {"design": "two-party", **asdict(self)}


def _koopman_statistic(k1: int, n1: int, k2: int, n2: int, ratio: float) -> float:
    """Koopman's score statistic for p1/p2 = ratio, at the restricted MLE (closed form)."""
    a = ratio * (n1 + n2)
    b = -(ratio * n1 + k1 + n2 + ratio * k2)
    c = k1 + k2
    p2 = (-b - math.sqrt(max(b * b - 4 * a * c, 0.0))) / (2 * a)
    total = 0.0
    for k, n, p in ((k1, n1, ratio * p2), (k2, n2, p2)):
        variance = n * p * (1 - p)
        if variance > 0:
            total += (k - n * p) ** 2 / variance
        elif not math.isclose(k, n * p, abs_tol=1e-9):
            return math.inf
    return total


def koopman_ratio_ci(k1: int, n1: int, k2: int, n2: int, alpha: float = 0.05) -> Interval:
    """Koopman's (1984) score interval for p1/p2 from two independent binomial samples.

    {θ : score statistic(θ) ≤ χ²₁(1 − α)}, found by root finding on log θ either side of a
    point inside the set; the lower limit is 0 when k1 = 0 and the upper +inf when k2 = 0.
    """
    check_counts(k1, n1, "k1", "n1")
    check_counts(k2, n2, "k2", "n2")
    if k1 == 0 and k2 == 0:
        return 0.0, math.inf
    critical = float(chi2.isf(alpha, 1))

    def excess(log_ratio: float) -> float:
        return _koopman_statistic(k1, n1, k2, n2, math.exp(log_ratio)) - critical

    inside = math.log((max(k1, 0.5) / n1) / (max(k2, 0.5) / n2))
    step = 1.0 if k2 == 0 else -1.0  # a zero count puts the estimate at 0 or infinity
    while excess(inside) > 0:
        inside += step
    low, high = 0.0, math.inf
    if k1 > 0:
        far = inside - 1
        while excess(far) <= 0:
            far -= 1
        low = math.exp(brentq(excess, far, inside))
    if k2 > 0:
        far = inside + 1
        while excess(far) <= 0:
            far += 1
        high = math.exp(brentq(excess, inside, far))
    return low, high


def two_party_humanness(
    machine_judged_human: int,
    machine_games: int,
    human_judged_human: int,
    human_games: int,
    alphas: tuple[float, ...] = REPORT_ALPHAS,
) -> TwoPartyHumanness:
    """Degree of humanness (machine judged-human rate) / (human judged-human rate)."""
    check_counts(machine_judged_human, machine_games, "machine_judged_human", "machine_games")
    check_counts(human_judged_human, human_games, "human_judged_human", "human_games")
    k1, n1, k2, n2 = machine_judged_human, machine_games, human_judged_human, human_games
    machine_rate, human_rate = k1 / n1, k2 / n2
    table = [[k1, n1 - k1], [k2, n2 - k2]]
    fisher_p = float(fisher_exact(table, alternative="two-sided")[1])
    notes = []
    boschloo_p: float | None = None
    if (n1 + 1) * (n2 + 1) <= BOSCHLOO_MAX_CELLS:
        boschloo_p = float(boschloo_exact(table, alternative="two-sided").pvalue)
        if boschloo_p != boschloo_p:  # scipy gives NaN when both rates are 0 or both are 1
            boschloo_p = 1.0
    else:
        notes.append("Boschloo's test skipped: table too large to compute quickly")
    humanness = machine_rate / human_rate if k2 else None
    if humanness is None:
        notes.append("degree of humanness undefined: no human witness was judged human")
    levels = []
    for alpha in alphas:
        rate_range = hull(compatible_p(k1, n1, alpha))
        fixed = (rate_range[0] / human_rate, rate_range[1] / human_rate) if k2 else None
        koopman = koopman_ratio_ci(k1, n1, k2, n2, alpha) if k2 else None
        levels.append(
            TwoPartyLevel(
                alpha=alpha,
                machine_rate_range=rate_range,
                humanness_fixed_human_rate=fixed,
                humanness_koopman=koopman,
                absolute_criterion_compatible=fisher_p > alpha,
                turing_benchmark_compatible=(
                    koopman[0] <= TURING_HUMANNESS <= koopman[1] if koopman else None
                ),
            )
        )
    return TwoPartyHumanness(
        machine_judged_human=k1,
        machine_games=n1,
        human_judged_human=k2,
        human_games=n2,
        machine_rate=machine_rate,
        human_rate=human_rate,
        humanness=humanness,
        fisher_p_two_sided=fisher_p,
        boschloo_p_two_sided=boschloo_p,
        meets_turing_benchmark=None if humanness is None else humanness >= TURING_HUMANNESS,
        levels=levels,
        notes=notes,
    )
