"""Waiting room and matchmaking: who plays with whom, in which seat.

A participant waits for a mode. Two people who have never met are matched when their role
quotas allow (rounds.py: N rounds, half as interrogator; random roles when both ways fit): one
interrogates, the other sits in a randomly drawn witness seat, AI witnesses in the rest, one
from each configured group in the interrogator's own random order. A lone person in a mode that
allows it meets AI witnesses only after `ai_after_s`, if they may still interrogate; after
`max_wait_s` without a game they are sent on to the exit survey. Solo (practice) modes start at
once with AI witnesses drawn at random and never count as rounds. All draws come from one
seeded generator, but blind matching's, made once per person and round (matchmaking_wait.py).

With a study design (settings.design, matchmaking_wait.py) study modes are matched blind: the
witness kind is drawn as a person joins and every wait comes from one distribution.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from turinglab.arena.core.matchmaking_wait import BlindMatcher, witness_quota
from turinglab.arena.core.modes import ArenaMode, ArenaSettings
from turinglab.arena.core.participants import Participant
from turinglab.arena.core.rounds import RoundBook
from turinglab.arena.core.waiting import Waiter
from turinglab.games.clock import Clock

StartGame = Callable[[ArenaMode, dict[str, Participant], dict[str, str], int], None]


class Lobby:
    def __init__(
        self,
        settings: ArenaSettings,
        clock: Clock,
        start: StartGame,
        timed_out: Callable[[Participant, float], None],
        finished_short: Callable[[Participant, int], None] | None = None,
        modes: Sequence[ArenaMode] = (),
    ) -> None:
        self.settings = settings
        self.clock = clock
        self.rng = random.Random(settings.seed)
        self._start = start
        self._timed_out = timed_out
        self._finished_short = finished_short
        self.waiting: list[Waiter] = []
        self.met: set[frozenset[str]] = set()  # pairs of people who have played together
        design = settings.design
        self.rounds = RoundBook(settings.rounds, self.rng, witness_quota(settings, modes))
        self.blind = None if design is None else BlindMatcher(design, self)

    def join(self, participant: Participant, mode: ArenaMode) -> None:
        self.leave(participant)
        waiter = Waiter(participant, mode, self.clock.now())
        self.waiting.append(waiter)
        if self.blind is not None and not mode.solo:
            self.blind.joined(waiter)
        self.tick()

    def leave(self, participant: Participant) -> None:
        self.waiting = [w for w in self.waiting if w.participant.id != participant.id]
        if self.blind is not None:
            self.blind.left(participant.id)

    def waited(self, participant: Participant) -> float | None:
        w = next((w for w in self.waiting if w.participant.id == participant.id), None)
        return None if w is None else self.clock.now() - w.since

    def tick(self) -> None:
        """Start every game that can start now; send on those who waited too long."""
        now = self.clock.now()
        if self.blind is not None:
            for waiter in [w for w in self.waiting if w.mode.solo]:
                self._seat(waiter.mode, [waiter.participant])
            self.blind.tick(now)
            return
        for waiter in list(self.waiting):
            if waiter not in self.waiting:  # matched earlier in this pass
                continue
            mode, person = waiter.mode, waiter.participant
            if mode.solo:
                self._seat(mode, [person])
                continue
            partner = self._partner(waiter)
            if partner is not None:
                self.seat_pair(mode, person, partner.participant)
            elif now - waiter.since >= self.settings.max_wait_s:
                self.waiting.remove(waiter)
                self._timed_out(person, now - waiter.since)
            elif (
                now - waiter.since >= self.settings.ai_after_s
                and len(mode.witnesses) == 1
                and self.rounds.may(person.id, "interrogator")
            ):
                self._seat(mode, [person])

    def _partner(self, waiter: Waiter) -> Waiter | None:
        for other in self.waiting:
            if other is waiter or other.mode.name != waiter.mode.name:
                continue
            a, b = waiter.participant.id, other.participant.id
            if frozenset((a, b)) not in self.met and self.rounds.roles(a, b) is not None:
                return other
        return None

    # ---- for blind matching (matchmaking_wait.py) -----------------------------------------

    def may_meet(self, judge: str, witness: str) -> bool:
        """`judge` may interrogate `witness` now: new to each other, both within quota."""
        return (
            frozenset((judge, witness)) not in self.met
            and self.rounds.may(judge, "interrogator")
            and self.rounds.may(witness, "witness")
        )

    def seat_ordered(self, mode: ArenaMode, judge: Participant, witness: Participant) -> None:
        self._seat(mode, [judge, witness])

    def seat_alone(self, waiter: Waiter) -> None:
        self._seat(waiter.mode, [waiter.participant])

    def finish_short(self, waiter: Waiter) -> None:
        """No interrogator was sent to them in time for their last witness rounds: those
        are excused (the design's shortfall, not theirs) and their study is complete."""
        self.waiting.remove(waiter)
        excused = self.rounds.excuse(waiter.participant.id)
        if self._finished_short is not None:
            self._finished_short(waiter.participant, excused)

    def time_out(self, waiter: Waiter) -> None:
        self.waiting.remove(waiter)
        self._timed_out(waiter.participant, self.clock.now() - waiter.since)

    def seat_pair(self, mode: ArenaMode, a: Participant, b: Participant) -> None:
        """Seat two matched people, roles balanced by their rounds so far."""
        roles = self.rounds.roles(a.id, b.id)
        assert roles is not None, f"{a.id} and {b.id} were matched past their quotas"
        by_id = {a.id: a, b.id: b}
        self._seat(mode, [by_id[roles[0]], by_id[roles[1]]])

    def seat_counted(self, mode: ArenaMode, people: list[Participant], groups: list[str]) -> None:
        """Seat people whose rounds are already counted and AI witness groups already drawn,
        in the shared round book (cluster.py): people[0] interrogates."""
        self._seat(mode, people, groups)

    def _seat(
        self, mode: ArenaMode, people: list[Participant], groups: list[str] | None = None
    ) -> None:
        """people[0] interrogates; people[1], if any, takes a random witness seat."""
        for p in people:
            self.leave(p)
        seats = {mode.judge: people[0]}
        witnesses = list(mode.witnesses)
        self.rng.shuffle(witnesses)
        if len(people) > 1:
            seats[witnesses.pop()] = people[1]
            self.met.add(frozenset(p.id for p in people))
        if groups is not None:
            pool = groups
        elif mode.solo:
            pool = list(mode.ai_agents)
            self.rng.shuffle(pool)
        else:  # one witness from each group, in this interrogator's own order
            n = min(len(witnesses), mode.ai_groups_per_game or len(witnesses))
            pool = self.rounds.next_groups(people[0].id, mode.name, mode.ai_agents, n)
            self.rounds.record(people[0].id, "interrogator")
            for witness in people[1:]:
                self.rounds.record(witness.id, "witness")
        agents = {seat: pool[i % len(pool)] for i, seat in enumerate(witnesses)}
        self._start(mode, seats, agents, self.rng.getrandbits(31))
