"""Pass criteria of Giunti (2025) per AI witness, for the design actually used (SPEC §2, GIU).

The statistics come from the shared `turinglab.analysis.humanness` module; this module only
groups the study table and lays the results out per (study, AI witness).
  three-party — reference rate r = 0.5 (the two verdicts of a game are coupled). Absolute
    criterion: ½ lies in the compatible range of the misidentification rate (the set of p the
    exact two-sided binomial test does not reject), at 5% and 1%. `absolute_p_two_sided` is that
    test's p-value at ½.
  two-party — r = the human witnesses' judged-human (correct-identification) rate of the same
    study. Absolute criterion: Fisher's exact two-sided test of machine rate = human rate is not
    significant (two independent samples); `absolute_p_two_sided` is its p-value.
  degree of humanness h = rate / r. `humanness_range_*` = compatible range of the rate / r
    (Giunti's way; in two-party it treats r as known). Two-party also gives Koopman's score
    interval of the ratio (`humanness_koopman_*`), which carries r's uncertainty.
  relative verdict at 5% against `relative_threshold` (Turing's 0.6: 30% misidentification in
    three-party): "above" if the whole range is ≥ threshold, "below" if wholly below, otherwise
    "undecided". The range used is humanness_range_05 in three-party and the Koopman interval in
    two-party.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import pandas as pd

from turinglab.analysis.humanness import (
    TURING_HUMANNESS,
    three_party_humanness,
    two_party_humanness,
)

Intervals = list[tuple[float, float]]


@dataclass(frozen=True)
class PassCriteria:
    study: str
    witness: str
    format: str
    n: int
    wins: int  # misidentifications: the AI judged human
    misidentification_rate: float
    reference_rate: float  # r
    n_reference: int  # human-witness games behind r (two-party); 0 in three-party
    absolute_p_two_sided: float  # three-party: exact binomial at ½; two-party: Fisher exact
    absolute_pass_05: bool  # absolute criterion not rejected at 5%
    absolute_pass_01: bool
    compatible_p_05: Intervals
    compatible_p_01: Intervals
    humanness: float  # h
    humanness_range_05: Intervals
    humanness_range_01: Intervals
    relative_threshold: float
    relative_verdict: str  # "above" | "below" | "undecided" (at 5%)
    humanness_koopman_05: Intervals = field(default_factory=list)  # two-party only
    humanness_koopman_01: Intervals = field(default_factory=list)
    notes: tuple[str, ...] = ()
    min_games: int = 0  # the design's minimum games per witness (design audit's sample size)

    @property
    def enough_games(self) -> bool:
        return self.n >= self.min_games

    def absolute(self, at_01: bool = False) -> str:
        """ "pass", "fail", or — with fewer games than the design needs — never "pass": failing
        to reject chance with too few games is no evidence that the witness passes."""
        passed = self.absolute_pass_01 if at_01 else self.absolute_pass_05
        if not passed:
            return "fail"
        if not self.enough_games:
            return f"not decided (n = {self.n} < {self.min_games} needed)"
        return "pass"


# The design's minimum: the games per witness that detect ±0.15 from chance with power 0.8
# (exact one-sided test, α = 0.05), the design audit's "sample size per witness" criterion.
MIN_DELTA, MIN_ALPHA, MIN_POWER = 0.15, 0.05, 0.8


def design_minimum() -> int:
    from turinglab.human.audit import games_needed

    return games_needed(0.5 + MIN_DELTA, 0.5, MIN_ALPHA, MIN_POWER, "greater")


def pass_criteria(
    df: pd.DataFrame, *, relative_threshold: float = TURING_HUMANNESS
) -> list[PassCriteria]:
    """Giunti's absolute and relative criteria per (study, AI witness)."""
    results: list[PassCriteria] = []
    minimum = design_minimum()
    for (study, fmt), rows in df.groupby(["study", "format"], sort=True):
        humans = rows[rows["witness_type"] == "human"]
        for witness, g in rows[rows["witness_type"] == "ai"].groupby("witness", sort=True):
            found = _criteria(str(study), str(fmt), str(witness), g, humans, relative_threshold)
            results.append(replace(found, min_games=minimum))
    return results


def pass_criteria_frame(results: list[PassCriteria]) -> pd.DataFrame:
    records = []
    for r in results:
        record = dict(r.__dict__)
        for key in (
            "compatible_p_05",
            "compatible_p_01",
            "humanness_range_05",
            "humanness_range_01",
        ):
            record[key] = format_intervals(record[key])
        records.append(record)
    return pd.DataFrame.from_records(records)


def format_intervals(intervals: Intervals, digits: int = 3) -> str:
    if not intervals:
        return "∅"
    return " ∪ ".join(f"[{lo:.{digits}f}, {hi:.{digits}f}]" for lo, hi in intervals)


def contains(intervals: Intervals, value: float) -> bool:
    return any(lo <= value <= hi for lo, hi in intervals)


def _criteria(
    study: str, fmt: str, witness: str, rows: pd.DataFrame, humans: pd.DataFrame, threshold: float
) -> PassCriteria:
    n, k = len(rows), int(rows["judged_human"].sum())
    if fmt == "three-party":
        three = three_party_humanness(k, n, alphas=(0.05, 0.01))
        at05, at01 = three.levels
        return PassCriteria(
            study=study,
            witness=witness,
            format=fmt,
            n=n,
            wins=k,
            misidentification_rate=three.rate,
            reference_rate=0.5,
            n_reference=0,
            absolute_p_two_sided=three.p_value_vs_half,
            absolute_pass_05=at05.absolute_criterion_compatible,
            absolute_pass_01=at01.absolute_criterion_compatible,
            compatible_p_05=at05.rate_intervals,
            compatible_p_01=at01.rate_intervals,
            humanness=three.humanness,
            humanness_range_05=_scaled(at05.rate_intervals, 0.5),
            humanness_range_01=_scaled(at01.rate_intervals, 0.5),
            relative_threshold=threshold,
            relative_verdict=_verdict(_scaled(at05.rate_intervals, 0.5), threshold),
        )
    if humans.empty:  # no reference rate: report the witness, decide nothing
        return PassCriteria(
            study, witness, fmt, n, k, k / n, math.nan, 0, math.nan, False, False, [], [],
            math.nan, [], [], threshold, "undecided",
            notes=("no human-witness games in this study: the two-party criteria need them",),
        )  # fmt: skip
    h_n, h_k = len(humans), int(humans["judged_human"].sum())
    two = two_party_humanness(k, n, h_k, h_n, alphas=(0.05, 0.01))
    t05, t01 = two.levels
    koopman05 = [t05.humanness_koopman] if t05.humanness_koopman else []
    return PassCriteria(
        study=study,
        witness=witness,
        format=fmt,
        n=n,
        wins=k,
        misidentification_rate=two.machine_rate,
        reference_rate=two.human_rate,
        n_reference=h_n,
        absolute_p_two_sided=two.fisher_p_two_sided,
        absolute_pass_05=t05.absolute_criterion_compatible,
        absolute_pass_01=t01.absolute_criterion_compatible,
        compatible_p_05=[t05.machine_rate_range],
        compatible_p_01=[t01.machine_rate_range],
        humanness=math.nan if two.humanness is None else two.humanness,
        humanness_range_05=_listed(t05.humanness_fixed_human_rate),
        humanness_range_01=_listed(t01.humanness_fixed_human_rate),
        relative_threshold=threshold,
        relative_verdict=_verdict(koopman05, threshold),
        humanness_koopman_05=koopman05,
        humanness_koopman_01=_listed(t01.humanness_koopman),
        notes=tuple(two.notes),
    )


def _listed(interval: tuple[float, float] | None) -> Intervals:
    return [interval] if interval else []


def _scaled(intervals: Intervals, reference: float) -> Intervals:
    return [(lo / reference, hi / reference) for lo, hi in intervals]


def _verdict(intervals: Intervals, threshold: float) -> str:
    if not intervals:
        return "undecided"
    if min(lo for lo, _ in intervals) >= threshold:
        return "above"
    if max(hi for _, hi in intervals) < threshold:
        return "below"
    return "undecided"
