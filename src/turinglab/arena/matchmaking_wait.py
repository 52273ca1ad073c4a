"""Matchmaking that tells the interrogator nothing: the design decides, the clock is drawn.

With open matching (people first, an AI after a fixed wait) the time to a game gives the
witness away: matched at once → a person, 20 s alone → an AI. With a `MatchDesign`:

* each person who joins a study mode draws their wait from one distribution (uniform between
  `wait_min_s` and `wait_max_s`); an interrogator's game starts exactly when that wait is over,
  whoever the witness — a person matched at once is held like one who will meet an AI;
* in modes with one witness the design draws, as a person joins, their part: a witness (half
  of people), or an interrogator whose witness is a person with probability
  `human_witness_share`, else an AI; round quotas override the draw when a role is used up;
* an interrogator drawn for a person looks for a waiting witness only at their own due time,
  so whether one is there does not depend on how long they waited; if none is, they meet an AI
  (counted in `fallbacks`) — the wait never stretches to find a person. A person drawn to
  witness whom no interrogator has taken by their own due time interrogates instead, their
  witness drawn as anyone's is; only someone whose interrogator rounds are used up waits on
  for an interrogator, up to `witness_wait_s`, and then has their open witness rounds excused
  (`short_of_witnesses: finish`): supply is at most `human_witness_share` of interrogations,
  so planned witness rounds cannot all be met, and nobody is timed out for it.

So every interrogation is *drawn* with `human_witness_share`; how many get a person depends on
how many people are waiting at once: with one arrival every 12 s and waits of 5–60 s about a
third of interrogations had a person (simulated; tests/test_arena_timing_leaks.py). Longer
waits or more traffic raise it; the waits stay uninformative either way.

Modes with two witnesses (three-party) always seat two people: at their due time a person
interrogates anyone waiting who may witness, or keeps waiting until someone arrives; which of
the two witnesses is the AI does not depend on the wait.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from turinglab.arena.match_design import Kind, MatchDesign

if TYPE_CHECKING:
    from turinglab.arena.waiting import Waiter, WaitingRoom


@dataclass
class Plan:
    """What the design drew for one waiting person."""

    due: float  # when their game starts if they interrogate (join time + drawn wait)
    kind: Kind


class BlindMatcher:
    """The lobby's tick under a `MatchDesign` (see the module docstring)."""

    def __init__(self, design: MatchDesign, lobby: WaitingRoom) -> None:
        self.design = design
        self.lobby = lobby
        self.plans: dict[str, Plan] = {}
        self.fallbacks = 0  # interrogators drawn for a person who met an AI (no witness free)
        self.short_of_witnesses = 0  # witness-only people given the study's fallback

    def joined(self, waiter: Waiter) -> None:
        rng = self.lobby.rng
        due = waiter.since + self.design.draw_wait(rng)
        kind: Kind = "person"
        if len(waiter.mode.witnesses) == 1:
            kind = self.design.draw_kind(rng)
        self.plans[waiter.participant.id] = Plan(due, kind)

    def left(self, pid: str) -> None:
        self.plans.pop(pid, None)

    def tick(self, now: float) -> None:
        lobby = self.lobby
        for waiter in list(lobby.waiting):
            if waiter not in lobby.waiting or waiter.mode.solo:  # seated already; practice
                continue
            pid = waiter.participant.id
            if pid not in self.plans:
                self.joined(waiter)
            plan = self._within_quota(pid, self.plans[pid])
            if now >= plan.due and plan.kind == "witness" and self._may_switch(waiter):
                # Nobody took them as a witness in their time: they interrogate now instead,
                # at their own drawn time like everyone, their witness drawn as anyone's is.
                plan.kind = self.design.draw_interrogation(lobby.rng)
            if now >= plan.due and plan.kind != "witness":
                self._due(waiter, plan)
            elif plan.kind == "witness" and now - waiter.since >= self._witness_wait(waiter):
                self.left(pid)  # nobody was sent to a person in time: the study's fallback
                self.short_of_witnesses += 1
                lobby.finish_short(waiter)
            elif now - waiter.since >= lobby.settings.max_wait_s:
                self.left(pid)
                lobby.time_out(waiter)

    def _witness_wait(self, waiter: Waiter) -> float:
        """How long someone who may only witness is offered before the fallback (never past
        the study's `max_wait_s`; infinite while they may still interrogate)."""
        if self._may_switch(waiter):
            return float("inf")
        return min(self.design.witness_wait_s, self.lobby.settings.max_wait_s)

    def _within_quota(self, pid: str, plan: Plan) -> Plan:
        """The draw, unless the person's rounds leave them only the other role."""
        rounds = self.lobby.rounds
        if plan.kind == "witness" and not rounds.may(pid, "witness"):
            plan.kind = self.design.draw_interrogation(self.lobby.rng)
        elif plan.kind != "witness" and not rounds.may(pid, "interrogator"):
            plan.kind = "witness"
        return plan

    def _may_switch(self, waiter: Waiter) -> bool:
        pid = waiter.participant.id
        return len(waiter.mode.witnesses) == 1 and self.lobby.rounds.may(pid, "interrogator")

    def _due(self, waiter: Waiter, plan: Plan) -> None:
        lobby, pid = self.lobby, waiter.participant.id
        one_witness = len(waiter.mode.witnesses) == 1
        witness = None
        if plan.kind == "person":
            witness = self._witness_for(waiter, only_drawn=one_witness)
        if witness is not None:
            self.left(pid)
            self.left(witness.participant.id)
            lobby.seat_ordered(waiter.mode, waiter.participant, witness.participant)
        elif one_witness:
            self.fallbacks += plan.kind == "person"
            self.left(pid)
            lobby.seat_alone(waiter)
        # three-party with nobody to witness: keep waiting (checked again every tick)

    def _witness_for(self, judge: Waiter, *, only_drawn: bool) -> Waiter | None:
        for other in self.lobby.waiting:
            theirs = self.plans.get(other.participant.id)
            if (
                other is judge
                or theirs is None
                or (only_drawn and theirs.kind != "witness")
                or other.mode.name != judge.mode.name
                or not self.lobby.may_meet(judge.participant.id, other.participant.id)
            ):
                continue
            return other
        return None
