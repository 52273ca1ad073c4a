"""Time as games see it: a real clock in the arena, a simulated one in tests and batch runs.

A game never calls time.time() or asyncio.sleep() itself; it asks its clock, so a five-minute
game with scripted people who type at given moments runs in milliseconds under test.
"""

from __future__ import annotations

import asyncio
import time
from typing import Protocol


class Clock(Protocol):
    def now(self) -> float:
        """Seconds since the epoch (real or simulated)."""
        ...

    async def sleep(self, seconds: float) -> None: ...


class RealClock:
    def now(self) -> float:
        return time.time()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(max(0.0, seconds))


REAL_CLOCK = RealClock()
