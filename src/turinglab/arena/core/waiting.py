"""Who is waiting in the lobby, and what a matcher may ask of the lobby they wait in.

Its own module so that the lobby (lobby.py) and the blind matcher it hands its tick to
(matchmaking_wait.py) both import it without importing each other.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Protocol

from turinglab.arena.core.modes import ArenaMode, ArenaSettings
from turinglab.arena.core.participants import Participant
from turinglab.arena.core.rounds import RoundBook


@dataclass
class Waiter:
    participant: Participant
    mode: ArenaMode
    since: float


class WaitingRoom(Protocol):
    """The lobby as its matcher sees it: who waits, and the moves that seat or send them on."""

    rng: random.Random
    settings: ArenaSettings
    rounds: RoundBook
    waiting: list[Waiter]

    def may_meet(self, judge: str, witness: str) -> bool: ...

    def seat_ordered(self, mode: ArenaMode, judge: Participant, witness: Participant) -> None: ...

    def seat_alone(self, waiter: Waiter) -> None: ...

    def finish_short(self, waiter: Waiter) -> None: ...

    def time_out(self, waiter: Waiter) -> None: ...
