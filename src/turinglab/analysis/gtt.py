"""GTT estimates from stored trials: pure functions over result rows (no I/O, no API).

Notation (SPEC §1): for distinguisher B and actor A,
  s_B     = Pr[B says 1 | X is B]                (self branch)
  s_{B,A} = Pr[B says 0 | X is A imitating B]    (actor branch)
  p(A,B)  = ½ s_B + ½ s_{B,A},   d(A,B) = p(A,B) − ½.
A trial's success is "B was right". Opening answers count with the verdict they hold; trials
without a verdict (no-answer, or an opening message with an unparseable tag) are either counted
as B's failure (`missing="wrong"`, the default: not answering is not being right) or left out.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

MissingPolicy = Literal["wrong", "exclude"]


def success(row: Mapping[str, Any], missing: MissingPolicy) -> bool | None:
    """Did the distinguisher succeed? None means: leave this trial out."""
    if row["verdict"] is None:
        return False if missing == "wrong" else None
    return bool(row["correct"])


def _rate(values: list[bool]) -> float:
    return sum(values) / len(values) if values else math.nan


def standard_error(p: float, n: int) -> float:
    return math.sqrt(p * (1 - p) / n) if n else math.nan


@dataclass(frozen=True)
class PairStats:
    actor: str
    distinguisher: str
    n: int  # trials that enter p̂
    n_self: int
    n_actor: int
    s_self: float  # ŝ_B
    s_actor: float  # ŝ_{B,A}
    p_hat: float
    se: float
    opening_answers: int
    no_answers: int

    @property
    def d_hat(self) -> float:
        return self.p_hat - 0.5


@dataclass(frozen=True)
class TuringScores:
    agent: str
    fooling: float  # F
    distinguishing: float  # D
    total: float  # T
    opponents: int  # how many B ≠ A had data


def _group(rows: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str], list[Mapping[str, Any]]]:
    groups: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for row in rows:
        groups.setdefault((row["actor"], row["distinguisher"]), []).append(row)
    return groups


def pair_table(
    rows: Iterable[Mapping[str, Any]], missing: MissingPolicy = "wrong"
) -> list[PairStats]:
    """One line per ordered pair (A, B) that has finished trials."""
    table = []
    for (actor, distinguisher), group in sorted(_group(rows).items()):
        self_hits = [
            s for r in group if r["x_is_target"] and (s := success(r, missing)) is not None
        ]
        actor_hits = [
            s for r in group if not r["x_is_target"] and (s := success(r, missing)) is not None
        ]
        n = len(self_hits) + len(actor_hits)
        p_hat = _rate(self_hits + actor_hits)
        table.append(
            PairStats(
                actor=actor,
                distinguisher=distinguisher,
                n=n,
                n_self=len(self_hits),
                n_actor=len(actor_hits),
                s_self=_rate(self_hits),
                s_actor=_rate(actor_hits),
                p_hat=p_hat,
                se=standard_error(p_hat, n),
                opening_answers=sum(r["status"] == "opening-answer" for r in group),
                no_answers=sum(r["verdict"] is None for r in group),
            )
        )
    return table


def _mean(values: list[float]) -> float:
    values = [v for v in values if not math.isnan(v)]
    return sum(values) / len(values) if values else math.nan


def turing_scores(
    rows: Iterable[Mapping[str, Any]],
    universe: list[str] | None = None,
    missing: MissingPolicy = "wrong",
) -> list[TuringScores]:
    """F, D and T per agent (SPEC §1). Pairs with no data are left out of the averages."""
    rows = list(rows)
    agents = universe or sorted({r["actor"] for r in rows} | {r["distinguisher"] for r in rows})
    # s_{B,A}: success of distinguisher B against actor A, from actor-branch trials.
    s_pair: dict[tuple[str, str], float] = {}
    for (actor, distinguisher), group in _group(rows).items():
        hits = [s for r in group if not r["x_is_target"] and (s := success(r, missing)) is not None]
        if hits:
            s_pair[(distinguisher, actor)] = _rate(hits)
    scores = []
    for a in agents:
        # s_A pools A's self-branch trials over every pair where A distinguishes.
        s_a = _rate(
            [
                s
                for r in rows
                if r["distinguisher"] == a
                and r["x_is_target"]
                and (s := success(r, missing)) is not None
            ]
        )
        others = [b for b in agents if b != a]
        fooling = _mean([1 - s_pair.get((b, a), math.nan) for b in others])
        catching = _mean([s_pair.get((a, b), math.nan) for b in others])
        distinguishing = 0.5 * s_a + 0.5 * catching
        scores.append(
            TuringScores(
                agent=a,
                fooling=fooling,
                distinguishing=distinguishing,
                total=0.5 * fooling + 0.5 * distinguishing,
                opponents=sum((b, a) in s_pair for b in others),
            )
        )
    return scores


def outcome_counts(rows: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for row in rows:
        counts[row["status"]] = counts.get(row["status"], 0) + 1
    return counts
