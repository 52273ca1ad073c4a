"""Test-design audit (Giunti's list of claimed validity criteria) and power analysis.

Power functions:
  * `binomial_power` / `games_needed`: exact — the rejection region of the exact binomial test
    at level alpha under chance p0, its probability under the alternative p1. One-sided regions
    are tails; the two-sided region uses the probability-ordering rule of the exact two-sided
    test (counts no more probable than the observed one). Exact power is saw-toothed in n;
    `games_needed` returns the smallest n that reaches the target (a slightly larger n can fall
    a little below it).
  * `two_proportion_power` / `two_proportion_games_needed`: normal approximation for comparing
    a witness's win rate with a baseline witness's (e.g. ELIZA's, or the same model in an earlier
    study): z test with the pooled variance under H0 and the unpooled variance under H1, no
    continuity correction (the same formula as statsmodels' power_proportions_2indep).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy.stats import binom, norm

Alternative = str  # "greater" | "less" | "two-sided"
_REL = 1 + 1e-7  # tolerance for ties in probability ordering (as scipy's binomtest)


def _rejection_region(n: int, p0: float, alpha: float, alternative: Alternative) -> np.ndarray:
    """Boolean mask over k = 0..n: counts the exact test rejects at level alpha."""
    k = np.arange(n + 1)
    if alternative == "greater":
        return binom.sf(k - 1, n, p0) <= alpha
    if alternative == "less":
        return binom.cdf(k, n, p0) <= alpha
    if alternative != "two-sided":
        raise ValueError(f"alternative must be greater, less or two-sided, not {alternative!r}")
    pmf = binom.pmf(k, n, p0)
    order = np.sort(pmf)
    cumulative = np.cumsum(order)
    index = np.searchsorted(order, pmf * _REL, side="right") - 1
    p_values = np.minimum(1.0, cumulative[index])
    return p_values <= alpha


def binomial_power(
    n: int, p1: float, p0: float = 0.5, alpha: float = 0.05, alternative: Alternative = "greater"
) -> float:
    """Exact power of the exact binomial test of p0 with n games when the true rate is p1."""
    if n < 1:
        raise ValueError(f"n must be at least 1, not {n}")
    reject = _rejection_region(n, p0, alpha, alternative)
    return float(binom.pmf(np.arange(n + 1), n, p1)[reject].sum())


def games_needed(
    p1: float,
    p0: float = 0.5,
    alpha: float = 0.05,
    power: float = 0.8,
    alternative: Alternative = "greater",
    max_n: int = 20000,
) -> int:
    """Smallest n whose exact power reaches `power`; ValueError if none up to max_n."""
    if p1 == p0:
        raise ValueError("p1 equals p0: there is no difference to detect")
    if (alternative == "greater" and p1 < p0) or (alternative == "less" and p1 > p0):
        raise ValueError(f"p1={p1} is on the wrong side of p0={p0} for {alternative!r}")
    # The normal approximation is close; start well below it to be sure to find the first n.
    z = norm.ppf(1 - alpha / (2 if alternative == "two-sided" else 1)) + norm.ppf(power)
    approx = (z * math.sqrt(max(p1 * (1 - p1), p0 * (1 - p0))) / abs(p1 - p0)) ** 2
    start = max(1, int(approx * 0.5) - 5)
    for n in range(start, max_n + 1):
        if binomial_power(n, p1, p0, alpha, alternative) >= power:
            return n
    raise ValueError(f"power {power} not reached with up to {max_n} games")


def two_proportion_power(
    n1: int,
    p1: float,
    p2: float,
    ratio: float = 1.0,
    alpha: float = 0.05,
    alternative: Alternative = "two-sided",
) -> float:
    """Power of the two-sample z test of p1 = p2 with n1 and n2 = ratio·n1 games."""
    n2 = ratio * n1
    pooled = (p1 * n1 + p2 * n2) / (n1 + n2)
    se0 = math.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2))
    se1 = math.sqrt(p1 * (1 - p1) / n1 + p2 * (1 - p2) / n2)
    diff = p1 - p2
    if alternative == "greater":
        return float(norm.sf((norm.ppf(1 - alpha) * se0 - diff) / se1))
    if alternative == "less":
        return float(norm.cdf((-norm.ppf(1 - alpha) * se0 - diff) / se1))
    if alternative != "two-sided":
        raise ValueError(f"alternative must be greater, less or two-sided, not {alternative!r}")
    crit = norm.ppf(1 - alpha / 2) * se0
    return float(norm.sf((crit - diff) / se1) + norm.cdf((-crit - diff) / se1))


def two_proportion_games_needed(
    p1: float,
    p2: float,
    ratio: float = 1.0,
    alpha: float = 0.05,
    power: float = 0.8,
    alternative: Alternative = "two-sided",
    max_n: int = 1_000_000,
) -> int:
    """Smallest n1 (games of the witness; the baseline gets ratio·n1) reaching `power`."""
    if p1 == p2:
        raise ValueError("p1 equals p2: there is no difference to detect")
    low, high = 1, 1
    while two_proportion_power(high, p1, p2, ratio, alpha, alternative) < power:
        high *= 2
        if high > max_n:
            raise ValueError(f"power {power} not reached with up to {max_n} games")
    while low < high:  # power is monotone in n under the normal approximation
        mid = (low + high) // 2
        if two_proportion_power(mid, p1, p2, ratio, alpha, alternative) >= power:
            high = mid
        else:
            low = mid + 1
    return low


def design_power_table(
    games_per_witness: Mapping[str, int],
    deltas: Sequence[float] = (0.1, 0.15, 0.2),
    alpha: float = 0.05,
    power: float = 0.8,
) -> pd.DataFrame:
    """Per witness and difference δ from chance: exact one-sided power at the observed n (for
    a win rate of 0.5 + δ; by symmetry the same for 0.5 − δ) and the games needed."""
    records = []
    for delta in deltas:
        needed = games_needed(0.5 + delta, 0.5, alpha, power, "greater")
        for witness, n in games_per_witness.items():
            records.append(
                {
                    "witness": witness,
                    "n": n,
                    "delta": delta,
                    "power": binomial_power(n, 0.5 + delta, 0.5, alpha, "greater") if n else 0.0,
                    "games_needed": needed,
                }
            )
    return pd.DataFrame.from_records(records)


@dataclass(frozen=True)
class Criterion:
    name: str
    met: bool | None  # None: not stated / cannot tell from the data
    detail: str


@dataclass(frozen=True)
class DesignAudit:
    criteria: tuple[Criterion, ...]
    power: pd.DataFrame = field(repr=False)

    def render(self) -> str:
        mark = {True: "yes", False: "NO", None: "?"}
        lines = ["Test-design audit (validity criteria claimed for Turing tests):"]
        lines += [f"  [{mark[c.met]:>3}] {c.name}: {c.detail}" for c in self.criteria]
        return "\n".join(lines)


def audit_study(
    df: pd.DataFrame,
    *,
    informed_roles: bool | None = None,
    open_conversation: bool | None = None,
    min_duration_s: float = 300.0,
    delta: float = 0.15,
    alpha: float = 0.05,
    power: float = 0.8,
) -> DesignAudit:
    """Which criteria the study meets. `informed_roles` (interrogators know a witness may be a
    machine) and `open_conversation` are study-level facts the table cannot show."""
    formats = sorted(set(df["format"]))
    per_witness = df[df["witness_type"] == "ai"].groupby("witness").size().astype(int).to_dict()
    needed = games_needed(0.5 + delta, 0.5, alpha, power, "greater")
    durations = df.groupby("game")["duration_s"].max().dropna()
    median = float(durations.median()) if len(durations) else math.nan
    smallest = min(per_witness.values()) if per_witness else 0
    criteria = (
        Criterion(
            "three parties",
            formats == ["three-party"],
            f"formats: {', '.join(formats) or 'none'}",
        ),
        Criterion("informed roles", informed_roles, _stated(informed_roles)),
        Criterion("open conversation", open_conversation, _stated(open_conversation)),
        Criterion(
            f"duration ≥ {min_duration_s / 60:g} minutes",
            None if math.isnan(median) else median >= min_duration_s,
            "no duration_s in the data"
            if math.isnan(median)
            else f"median game duration {median:.0f} s over {len(durations)} games",
        ),
        Criterion(
            "sample size per witness",
            bool(per_witness) and smallest >= needed,
            f"fewest games for an AI witness: {smallest}; {needed} needed to detect ±{delta:g} "
            f"from chance with power {power:g} (exact one-sided, α={alpha:g})",
        ),
        Criterion(
            "reliable-vs-chance criterion",
            True,
            "exact binomial tests against chance, with compatible ranges (this report)",
        ),
    )
    return DesignAudit(
        criteria, design_power_table(per_witness, sorted({0.1, delta, 0.2}), alpha, power)
    )


def _stated(flag: bool | None) -> str:
    return "not stated for this study" if flag is None else "as stated for this study"
