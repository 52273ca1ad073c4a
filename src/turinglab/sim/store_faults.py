"""The database's part of a schedule under the `postgres` fault: every commit and every read
handed to a thread takes a seeded round trip (1-20 ms), and once in the schedule PostgreSQL
either refuses everyone for 1-10 s (a restart, or its connections cut through a proxy: every
statement fails, the writer retries) or stalls as long (nothing answers; what was asked is
answered when it ends). Without the fault nothing here runs, so the other faults' schedules
are kept.

What it does not model: a read made on the loop itself (not handed to a thread) takes no
virtual time even in a stall (a real one would hold the whole process); a commit in flight
when its process is killed never lands (in PostgreSQL it may have)."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy.exc import OperationalError

ROUND_TRIP_S = (0.001, 0.02)


@dataclass
class StoreFaults:
    """`fault`: ("refuses" | "stalls", at s, for s), or None for a slow database alone."""

    fault: tuple[str, float, float] | None
    now: Callable[[], float]
    rng: random.Random
    refused: int = 0  # statements failed by the outage
    held: int = 0  # commits and reads held by the stall

    def _window(self, kind: str) -> tuple[float, float] | None:
        if self.fault is None or self.fault[0] != kind:
            return None
        _, at, for_s = self.fault
        return at, at + for_s

    def check(self) -> None:
        """Before each statement: fail it while the database refuses."""
        window = self._window("refuses")
        if window is not None and window[0] <= self.now() < window[1]:
            self.refused += 1
            raise OperationalError("sim", {}, Exception("the database refuses connections"))

    def delay(self) -> float:
        """How long a commit or a read asked now takes to be answered."""
        trip = self.rng.uniform(*ROUND_TRIP_S)
        window = self._window("stalls")
        now = self.now()
        if window is not None and window[0] <= now < window[1]:
            self.held += 1
            return window[1] - now + trip
        return trip
