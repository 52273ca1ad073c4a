"""Waiting room and matchmaking: who plays with whom, in which seat.

A participant waits for a mode. Two people who have never met are matched (roles drawn at
random: one interrogates, the other sits in a randomly drawn witness seat, AI agents in the
rest). A lone person in a mode that allows it meets AI witnesses only after `ai_after_s`; after
`max_wait_s` without a game they are sent on to the exit survey. Solo (practice) modes start at
once with AI witnesses. All draws come from one seeded generator.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from turinglab.arena.modes import ArenaMode, ArenaSettings
from turinglab.arena.sessions import Participant
from turinglab.games.clock import Clock

StartGame = Callable[[ArenaMode, dict[str, Participant], dict[str, str], int], None]


@dataclass
class Waiter:
    participant: Participant
    mode: ArenaMode
    since: float


class Lobby:
    def __init__(
        self,
        settings: ArenaSettings,
        clock: Clock,
        start: StartGame,
        timed_out: Callable[[Participant, float], None],
    ) -> None:
        self.settings = settings
        self.clock = clock
        self.rng = random.Random(settings.seed)
        self._start = start
        self._timed_out = timed_out
        self.waiting: list[Waiter] = []
        self.met: set[frozenset[str]] = set()  # pairs of people who have played together

    def join(self, participant: Participant, mode: ArenaMode) -> None:
        self.leave(participant)
        self.waiting.append(Waiter(participant, mode, self.clock.now()))
        self.tick()

    def leave(self, participant: Participant) -> None:
        self.waiting = [w for w in self.waiting if w.participant.id != participant.id]

    def waited(self, participant: Participant) -> float | None:
        w = next((w for w in self.waiting if w.participant.id == participant.id), None)
        return None if w is None else self.clock.now() - w.since

    def tick(self) -> None:
        """Start every game that can start now; send on those who waited too long."""
        now = self.clock.now()
        for waiter in list(self.waiting):
            if waiter not in self.waiting:  # matched earlier in this pass
                continue
            mode, person = waiter.mode, waiter.participant
            if mode.solo:
                self._seat(mode, [person])
                continue
            partner = self._partner(waiter)
            if partner is not None:
                pair = [person, partner.participant]
                self.rng.shuffle(pair)  # who interrogates
                self._seat(mode, pair)
            elif now - waiter.since >= self.settings.max_wait_s:
                self.waiting.remove(waiter)
                self._timed_out(person, now - waiter.since)
            elif now - waiter.since >= self.settings.ai_after_s and len(mode.witnesses) == 1:
                self._seat(mode, [person])

    def _partner(self, waiter: Waiter) -> Waiter | None:
        for other in self.waiting:
            if other is waiter or other.mode.name != waiter.mode.name:
                continue
            if frozenset((waiter.participant.id, other.participant.id)) not in self.met:
                return other
        return None

    def _seat(self, mode: ArenaMode, people: list[Participant]) -> None:
        """people[0] interrogates; people[1], if any, takes a random witness seat."""
        for p in people:
            self.leave(p)
        seats = {mode.judge: people[0]}
        witnesses = list(mode.witnesses)
        self.rng.shuffle(witnesses)
        if len(people) > 1:
            seats[witnesses.pop()] = people[1]
            self.met.add(frozenset(p.id for p in people))
        pool = list(mode.ai_agents)
        self.rng.shuffle(pool)
        agents = {seat: pool[i % len(pool)] for i, seat in enumerate(witnesses)}
        self._start(mode, seats, agents, self.rng.getrandbits(31))
