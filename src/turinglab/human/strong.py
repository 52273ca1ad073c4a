"""Strong Turing Test (SPEC §3, Schrittwieser 2024): per-turn preferences between a system's
reply and one or more humans' replies.

Table, one row per turn: session, turn, investigator, system (the system's side id), choice
(the preferred side id, or "tie"), sides (';'-separated side ids of that turn; the system's and
one or more humans').

Scores: a side gets 1 for a turn where its reply is preferred, ½ for a tie, 0 otherwise.
  * panel: the system over all its turns (a tie counts ½ whatever the number of sides);
  * head-to-head against human h: turns where both replied and the choice was one of the two
    or a tie; turns won by a third side say nothing about system vs h and are dropped (counted);
  * each human's own win rate over the turns it replied in.

Ties make the score k = wins + ties/2 a possible half-integer. Exact intervals and tests use
conservative integer rounding: the lower Clopper–Pearson bound and the "greater" test use
floor(k), the upper bound and the "less" test use ceil(k) — so both err on the side of "not
shown". Verdict for a threshold θ (AGI 0.5, ASI 0.95), one-sided exact tests at `alpha`:
"reached" if the rate is significantly above θ, "not reached" if significantly below,
"undecided" otherwise.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from turinglab.analysis import stats
from turinglab.human.schema import read_records

AGI_THRESHOLD = 0.5
ASI_THRESHOLD = 0.95
STT_COLUMNS = ("session", "turn", "investigator", "system", "choice", "sides")


def load_stt(path: str | Path) -> pd.DataFrame:
    """Load and validate an STT preference table (CSV or JSONL); errors name line and column."""
    raw, lines = read_records(path)
    return validate_stt(raw, lines)


def validate_stt(raw: pd.DataFrame, lines: list[int] | None = None) -> pd.DataFrame:
    missing = [c for c in STT_COLUMNS if c not in raw.columns]
    if missing:
        raise ValueError(f"STT table: missing required column(s): {', '.join(missing)}")
    problems: list[str] = []
    records: list[dict[str, object]] = []
    for i, row in enumerate(raw.to_dict("records")):
        where = f"line {lines[i]}" if lines else f"row {i + 1}"
        record = {c: "" if _blank(row[c]) else str(row[c]).strip() for c in STT_COLUMNS}
        for column in STT_COLUMNS:
            if not record[column]:
                problems.append(f"{where}, column {column!r}: required value is empty")
        sides = [s.strip() for s in record["sides"].split(";") if s.strip()]
        if record["sides"] and len(sides) < 2:
            problems.append(f"{where}, column 'sides': needs the system and at least one human")
        if len(set(sides)) != len(sides):
            problems.append(f"{where}, column 'sides': repeated side id in {record['sides']!r}")
        if record["system"] and sides and record["system"] not in sides:
            problems.append(f"{where}, column 'sides': system {record['system']!r} not among them")
        if record["choice"] and record["choice"] != "tie" and record["choice"] not in sides:
            problems.append(
                f"{where}, column 'choice': {record['choice']!r} is not a side or 'tie'"
            )
        turn = _whole_number(record["turn"])
        if record["turn"] and turn is None:
            problems.append(f"{where}, column 'turn': not a whole number: {record['turn']!r}")
        records.append({**record, "sides": ";".join(sides), "turn": turn})
    table = pd.DataFrame.from_records(records, columns=list(STT_COLUMNS))
    duplicated = table.duplicated(["session", "turn"], keep="first")
    for i in table.index[duplicated]:
        where = f"line {lines[i]}" if lines else f"row {i + 1}"
        problems.append(f"{where}, column 'turn': turn repeated within its session")
    if problems:
        raise ValueError("invalid STT table:\n  " + "\n  ".join(problems[:20]))
    return table


def _whole_number(text: str) -> int | None:
    try:
        number = float(text)
    except ValueError:
        return None
    return int(number) if number.is_integer() else None


def _blank(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or value == ""


@dataclass(frozen=True)
class SideScore:
    side: str
    opponent: str  # "panel" for all turns, a human's id for head-to-head, "" for humans' own
    turns: int
    wins: int
    ties: int
    dropped: int  # head-to-head: turns a third side won
    win_rate: float  # (wins + ties/2) / turns
    ci_low: float
    ci_high: float


@dataclass(frozen=True)
class Verdict:
    system: str
    opponent: str
    threshold: float
    label: str  # "AGI" | "ASI"
    p_greater: float  # H1: rate > threshold
    p_less: float  # H1: rate < threshold
    verdict: str  # "reached" | "not reached" | "undecided"


def _score(side: str, opponent: str, turns: pd.DataFrame, dropped: int, level: float) -> SideScore:
    n = len(turns)
    wins = int((turns["choice"] == side).sum())
    ties = int((turns["choice"] == "tie").sum())
    low, high = half_win_ci(wins, ties, n, level) if n else (math.nan, math.nan)
    return SideScore(
        side, opponent, n, wins, ties, dropped, (wins + ties / 2) / n if n else math.nan, low, high
    )


def half_win_ci(wins: int, ties: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """Conservative exact CI for (wins + ties/2)/n: floor for the lower, ceil for the upper."""
    doubled = 2 * wins + ties
    low, _ = stats.binomial_ci(doubled // 2, n, level=level)
    _, high = stats.binomial_ci(-(-doubled // 2), n, level=level)
    return low, high


def half_win_tests(wins: int, ties: int, n: int, threshold: float) -> tuple[float, float]:
    """One-sided exact p-values (greater, less) for the half-win score against a threshold."""
    doubled = 2 * wins + ties
    greater = stats.exact_binomial_test(doubled // 2, n, p=threshold, alternative="greater")
    less = stats.exact_binomial_test(-(-doubled // 2), n, p=threshold, alternative="less")
    return greater, less


def _split(sides: str) -> list[str]:
    return [s for s in sides.split(";") if s]


def stt_scores(table: pd.DataFrame, *, level: float = 0.95) -> list[SideScore]:
    """The system against the panel and against each human (head-to-head), then every
    human's own win rate over its turns."""
    scores: list[SideScore] = []
    for system, turns in table.groupby("system", sort=True):
        system = str(system)
        side_lists = turns["sides"].map(_split)
        scores.append(_score(system, "panel", turns, 0, level))
        humans = sorted({s for sides in side_lists for s in sides if s != system})
        for human in humans:
            both = turns[side_lists.map(lambda sides, h=human: h in sides)]
            decisive = both[both["choice"].isin([system, human, "tie"])]
            scores.append(_score(system, human, decisive, len(both) - len(decisive), level))
        for human in humans:
            own = turns[side_lists.map(lambda sides, h=human: h in sides)]
            scores.append(_score(human, "", own, 0, level))
    return scores


def stt_verdicts(
    table: pd.DataFrame,
    *,
    alpha: float = 0.05,
    thresholds: tuple[tuple[str, float], ...] = (("AGI", AGI_THRESHOLD), ("ASI", ASI_THRESHOLD)),
) -> list[Verdict]:
    """AGI/ASI verdicts of every system against the panel and against each human."""
    verdicts = []
    system_sides = set(table["system"])
    for score in stt_scores(table):
        if score.side not in system_sides or not score.turns:
            continue
        for label, threshold in thresholds:
            greater, less = half_win_tests(score.wins, score.ties, score.turns, threshold)
            verdict = (
                "reached" if greater <= alpha else "not reached" if less <= alpha else ("undecided")
            )
            verdicts.append(
                Verdict(score.side, score.opponent, threshold, label, greater, less, verdict)
            )
    return verdicts


def stt_frame(scores: list[SideScore] | list[Verdict]) -> pd.DataFrame:
    return pd.DataFrame.from_records([s.__dict__ for s in scores])
