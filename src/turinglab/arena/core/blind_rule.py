"""The blind design's decision for one two-party interrogator, in one place for one process
(matchmaking_wait.py, its lobby) and for several (shared_blind.py, over Redis).

Pure: the callers gather who is offered as a witness and carry the decision out — one
process in its own lists, several atomically in Redis. Why the rule keeps the wait silent about
the witness kind is in matchmaking_wait.py's docstring.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from turinglab.arena.core.match_design import Kind, MatchDesign


@dataclass
class Plan:
    """What the design drew for one waiting person."""

    due: float  # when their game starts if they interrogate (join time + drawn wait)
    kind: Kind  # interrogators: the drawn witness kind; "witness": offered as a witness
    window_end: float = 0.0  # their part is decided by then (one-witness modes)
    decided: bool = False  # an interrogator whose witness is settled (`witness` or an AI)
    witness: str | None = None  # the person an interrogator took as witness
    held_by: str | None = None  # a witness: the interrogator who took them
    wants: Kind = "ai"  # an interrogator's drawn witness kind, kept when offered as witness


def two_party_plan(
    design: MatchDesign, since: float, wait_s: float, wants: Kind, may_interrogate: bool
) -> Plan:
    """A two-party person's plan from their draw: they interrogate while their rounds allow."""
    kind: Kind = wants if may_interrogate else "witness"
    return Plan(since + wait_s, kind, window_end=since + design.window_s, wants=wants)


@dataclass(frozen=True)
class Offered:
    """A person waiting as a witness whom the interrogator may meet (new to them, in quota)."""

    pid: str
    only_witness: bool  # may no longer interrogate, still owes witness rounds


def choose_witness(offered: Iterable[Offered], *, anyone: bool) -> str | None:
    """First anyone who may only witness (the balance of owed rounds), then — for a drawn
    "person" (`anyone`) — the oldest offered."""
    found: str | None = None
    for other in offered:
        if other.only_witness:
            return other.pid
        if anyone and found is None:
            found = other.pid
    return found


Step = Literal["take", "offer", "wait", "ai"]


def decide(plan: Plan, now: float, witness: str | None, may_witness: bool) -> Step:
    """One look within their window, `witness` the one `choose_witness` found free: take them;
    else offer themselves as a witness while they owe witness rounds and drew "person"; at the
    window's end an AI (a fallback when they drew "person"). Updates `plan`."""
    if witness is not None:
        plan.kind, plan.decided, plan.witness = "person", True, witness
        return "take"
    if now < plan.window_end:
        if plan.wants == "person" and may_witness:
            plan.kind = "witness"  # offered for the rest of the window
            return "offer"
        return "wait"
    plan.kind, plan.decided = "ai", True
    return "ai"
