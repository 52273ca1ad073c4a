"""Matchmaking that tells the interrogator nothing: the design decides, the clock is drawn.

With open matching (people first, an AI after a fixed wait) the time to a game gives the
witness away: matched at once → a person, 20 s alone → an AI. With a `MatchDesign`, in modes
with one witness (two-party):

* each person who joins draws their wait from one distribution (uniform between `wait_min_s`
  and `wait_max_s`); an interrogator's game starts exactly when that wait is over, whoever the
  witness: the drawn wait is used for nothing else, so it cannot carry the witness kind;
* who witnesses and who interrogates is decided only within a fixed *match window*
  (`match_window_s`, at most `wait_min_s`) from joining, never later: whatever happens in the
  window (who else is there, who leaves) is independent of the drawn wait, under any arrival
  process — steady, bursts, a trickle or the study's end
  (tests/arena/core/test_arena_blind_arrivals.py);
* a person's wait and witness kind are drawn once per round, keyed by a secret, the seed,
  their id and the round (`MatchDesign.draw_for`): joining again, here or on another process
  (shared_blind.py), keeps the draw, so a page cannot redraw it nor anyone compute it;
* roles follow the balance of owed rounds: someone who may interrogate does (their interrogator
  rounds come first), drawing their witness kind ("person" with `human_witness_share`); a
  "person" draw takes a waiting witness, or — if they still owe witness rounds — offers them as
  one for the rest of their window; whoever is still unmatched when the window ends meets an AI
  (counted in `fallbacks`). Anyone who waits as a witness with witness rounds owed is taken
  first, by any interrogator, so owed rounds are played (the draw decides when a person
  witness is used, the balance whether). Someone who may only witness waits up to
  `witness_wait_s` and then has those rounds excused (`short_of_witnesses: finish`), with the
  reason kept, never the timed-out code;
* a person's witness rounds follow from the design: each is one interrogation with a person
  witness, so of `rounds` a share `s / (1 + s)` (s = `human_witness_share`) are witness rounds
  (`witness_rounds`); with half of each, every game would need a person witness.

What the study gives up: people are paired only when they arrive within a window of each other
(bursts: often; a trickle: rarely, those interrogations meet an AI), and everyone waits at
least the window. Longer windows (and so longer waits) pair more people.

Modes with two witnesses (three-party) always seat two people: at their due time a person
interrogates anyone waiting who may witness, or keeps waiting until someone arrives; which of
the two witnesses is the AI does not depend on the wait.
"""

from __future__ import annotations

import secrets
from typing import TYPE_CHECKING

from turinglab.arena.core.blind_rule import Offered, Plan, choose_witness, decide, two_party_plan
from turinglab.arena.core.match_design import MatchDesign

if TYPE_CHECKING:
    from collections.abc import Sequence

    from turinglab.arena.core.modes import ArenaMode, ArenaSettings
    from turinglab.arena.core.waiting import Waiter, WaitingRoom


def witness_quota(settings: ArenaSettings, modes: Sequence[ArenaMode]) -> int | None:
    """A person's witness rounds when a design's two-party mode sets them, else None (half)."""
    design = settings.design
    if design is None or not any(len(m.witnesses) == 1 and not m.solo for m in modes):
        return None
    return design.witness_rounds(settings.rounds)


class BlindMatcher:
    """The lobby's tick under a `MatchDesign` (see the module docstring)."""

    def __init__(self, design: MatchDesign, lobby: WaitingRoom) -> None:
        self.design = design
        self.lobby = lobby
        self.plans: dict[str, Plan] = {}
        self.fallbacks = 0  # interrogators drawn for a person who met an AI (no witness free)
        self.short_of_witnesses = 0  # witness-only people given the study's fallback
        # In every draw's key, so that nobody can work out their own draw (their wait and
        # witness kind) from their id; a simulation sets its own to repeat a run.
        self.secret = secrets.token_hex(16)

    def joined(self, waiter: Waiter) -> None:
        pid, rounds = waiter.participant.id, self.lobby.rounds
        # Once per person and round (as across processes, shared_blind.py): joining again
        # keeps the draw, so a page cannot redraw its wait or its witness kind.
        key = f"{self.secret}|{self.lobby.settings.seed}|{pid}|{rounds.progress(pid).owed}"
        wait_s, wants = self.design.draw_for(key)
        if len(waiter.mode.witnesses) != 1:
            self.plans[pid] = Plan(waiter.since + wait_s, "person")
            return
        may = self.lobby.rounds.may(pid, "interrogator")
        self.plans[pid] = two_party_plan(self.design, waiter.since, wait_s, wants, may)

    def left(self, pid: str) -> None:
        plan = self.plans.pop(pid, None)
        if plan is not None and plan.witness is not None:  # the one they took is free again
            theirs = self.plans.get(plan.witness)
            if theirs is not None and theirs.held_by == pid:
                theirs.held_by = None

    def tick(self, now: float) -> None:
        lobby = self.lobby
        for waiter in list(lobby.waiting):
            if waiter not in lobby.waiting or waiter.mode.solo:  # seated already; practice
                continue
            pid = waiter.participant.id
            if pid not in self.plans:
                self.joined(waiter)
            plan = self.plans[pid]
            if len(waiter.mode.witnesses) != 1:
                self._three_party(waiter, plan, now)
            elif plan.held_by is not None:
                continue  # their interrogator seats them at the interrogator's due time
            elif self._only_witness(pid):
                if now - waiter.since >= self._witness_wait():
                    self.left(pid)  # nobody took them in time: the study's fallback
                    self.short_of_witnesses += 1
                    lobby.finish_short(waiter)
            else:
                if not plan.decided:
                    self._decide(waiter, plan, now)
                if plan.decided and now >= plan.due:
                    self._start(waiter, plan)

    def _only_witness(self, pid: str) -> bool:
        rounds = self.lobby.rounds
        return not rounds.may(pid, "interrogator") and rounds.may(pid, "witness")

    def _witness_wait(self) -> float:
        return min(self.design.witness_wait_s, self.lobby.settings.max_wait_s)

    def _decide(self, waiter: Waiter, plan: Plan, now: float) -> None:
        """Within their window: take a witness if one is free (a drawn "person" takes anyone
        offered; any draw takes someone who may only witness), else offer themselves as a
        witness while they still owe witness rounds; at the window's end, an AI."""
        pid = waiter.participant.id
        witness = self._witness_for(waiter, anyone=plan.wants == "person")
        found = None if witness is None else witness.participant.id
        step = decide(plan, now, found, self.lobby.rounds.may(pid, "witness"))
        if step == "take":
            self.plans[str(found)].held_by = pid
        elif step == "ai":
            self.fallbacks += plan.wants == "person"

    def _start(self, waiter: Waiter, plan: Plan) -> None:
        lobby, pid = self.lobby, waiter.participant.id
        witness = None
        if plan.witness is not None:
            witness = next((w for w in lobby.waiting if w.participant.id == plan.witness), None)
            if witness is None:  # their witness left meanwhile: anyone free, else an AI
                witness = self._witness_for(waiter, anyone=True)
                self.fallbacks += witness is None
        self.left(pid)
        if witness is not None:
            self.left(witness.participant.id)
            lobby.seat_ordered(waiter.mode, waiter.participant, witness.participant)
        else:
            lobby.seat_alone(waiter)

    def _witness_for(self, judge: Waiter, *, anyone: bool) -> Waiter | None:
        """A free waiting witness for `judge`: first those who may only witness (the balance
        of owed rounds), then — for a drawn "person" — anyone offered, oldest first."""
        free: dict[str, Waiter] = {}
        for other in self.lobby.waiting:
            theirs = self.plans.get(other.participant.id)
            if (
                other is not judge
                and theirs is not None
                and theirs.kind == "witness"
                and theirs.held_by is None
                and not theirs.decided
                and other.mode.name == judge.mode.name
                and self.lobby.may_meet(judge.participant.id, other.participant.id)
            ):
                free[other.participant.id] = other
        offered = (Offered(pid, self._only_witness(pid)) for pid in free)
        found = choose_witness(offered, anyone=anyone)
        return None if found is None else free[found]

    def _three_party(self, waiter: Waiter, plan: Plan, now: float) -> None:
        lobby = self.lobby
        if now >= plan.due:
            witness = self._anyone_waiting(waiter)
            if witness is not None:
                self.left(waiter.participant.id)
                self.left(witness.participant.id)
                lobby.seat_ordered(waiter.mode, waiter.participant, witness.participant)
                return
        if now - waiter.since >= lobby.settings.max_wait_s:  # nobody came to witness
            self.left(waiter.participant.id)
            lobby.time_out(waiter)

    def _anyone_waiting(self, judge: Waiter) -> Waiter | None:
        for other in self.lobby.waiting:
            if (
                other is not judge
                and other.participant.id in self.plans
                and other.mode.name == judge.mode.name
                and self.lobby.may_meet(judge.participant.id, other.participant.id)
            ):
                return other
        return None
