"""Time as games see it: a real clock in the arena, a simulated one in tests and batch runs.

A game never calls time.time() or asyncio.sleep() itself; it asks its clock, so a five-minute
game with scripted people who type at given moments runs in milliseconds under test.

`hold()` marks work that must not let simulated time pass (an AI call in a batch run: a model's
compute time is not game time). The real clock ignores it.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import time
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Protocol

# A fixed start for simulated games (2025-03-01 17:00 UTC), so batch transcripts and the
# witnesses' local times reproduce exactly.
SIMULATED_EPOCH = 1740848400.0

# How many event-loop passes the simulated clock waits for everything that is runnable to run
# before it lets time jump. Chains of pure-asyncio hand-offs (queue → task → future) settle in
# a few passes; work outside the loop (threads, sockets) must be wrapped in `hold()`.
_SETTLE_PASSES = 16


class Clock(Protocol):
    def now(self) -> float:
        """Seconds since the epoch (real or simulated)."""
        ...

    async def sleep(self, seconds: float) -> None: ...

    def hold(self) -> AbstractAsyncContextManager[None]:
        """Context manager: simulated time stands still while it is held."""
        ...


class RealClock:
    def now(self) -> float:
        return time.time()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(max(0.0, seconds))

    @asynccontextmanager
    async def hold(self) -> AsyncIterator[None]:
        yield


REAL_CLOCK = RealClock()


class PausableClock:
    """A game's own clock over another: it can stand still (the arena stops a live game's
    time while its messages cannot be saved), and `now` then goes on from where it stopped.
    Never paused, it is the clock beneath."""

    def __init__(self, base: Clock) -> None:
        self._base = base
        self._stopped_for = 0.0  # seconds the clock stood still, all pauses together
        self._paused_at: float | None = None
        self._changed = asyncio.Event()  # set on every pause and resume

    @property
    def paused(self) -> bool:
        return self._paused_at is not None

    @property
    def stopped_for(self) -> float:
        """Seconds the clock stood still in all, pauses ended so far (one under way not)."""
        return self._stopped_for

    def carry_over(self, stopped_for: float) -> None:
        """Count `stopped_for` seconds of standing still from before this clock existed (a
        game taken over from another process): `now` lags the clock beneath by as much."""
        if stopped_for < 0:
            raise ValueError(f"stopped_for must not be negative, not {stopped_for}")
        self._stopped_for += stopped_for
        self._wake()

    def now(self) -> float:
        base = self._base.now()
        since = 0.0 if self._paused_at is None else base - self._paused_at
        return base - self._stopped_for - since

    def pause(self) -> None:
        if self._paused_at is None:
            self._paused_at = self._base.now()
            self._wake()

    def resume(self) -> None:
        if self._paused_at is not None:
            self._stopped_for += self._base.now() - self._paused_at
            self._paused_at = None
            self._wake()

    def _wake(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    async def sleep(self, seconds: float) -> None:
        wake = self.now() + max(0.0, seconds)
        while True:
            changed = self._changed
            if self._paused_at is not None:
                await changed.wait()
                continue
            left = wake - self.now()
            if left <= 0:
                return
            sleeper = asyncio.ensure_future(self._base.sleep(left))
            waker = asyncio.ensure_future(changed.wait())
            try:
                await asyncio.wait({sleeper, waker}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                sleeper.cancel()
                waker.cancel()

    def hold(self) -> AbstractAsyncContextManager[None]:
        return self._base.hold()


class SimulatedClock:
    """Virtual time: a sleep returns when every task that could run has run and no earlier
    sleeper is left, without any real waiting. Sleepers wake in deadline order (ties in call
    order), so a game on this clock is deterministic.

    Time advances only when nothing is held and the loop has settled; it never goes back.
    """

    def __init__(self, start: float = SIMULATED_EPOCH) -> None:
        self._now = float(start)
        self._sleepers: list[tuple[float, int, asyncio.Future[None]]] = []
        self._order = itertools.count()
        self._holds = 0
        self._activity = 0  # bumped as time is held and let go
        self._released = asyncio.Event()
        self._released.set()
        self._advancer: asyncio.Task[None] | None = None

    def now(self) -> float:
        return self._now

    async def sleep(self, seconds: float) -> None:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()
        wake = self._now + max(0.0, seconds)
        heapq.heappush(self._sleepers, (wake, next(self._order), future))
        self._activity += 1
        if self._advancer is None or self._advancer.done():
            self._advancer = loop.create_task(self._advance())
        await future

    @asynccontextmanager
    async def hold(self) -> AsyncIterator[None]:
        self._holds += 1
        self._activity += 1
        self._released.clear()
        try:
            yield
        finally:
            self._holds -= 1
            self._activity += 1
            if self._holds == 0:
                self._released.set()

    async def _advance(self) -> None:
        while self._sleepers:
            await self._settle()
            if not self._sleepers:
                break
            wake, _, future = heapq.heappop(self._sleepers)
            if future.done():  # the sleeper was cancelled
                continue
            self._now = max(self._now, wake)
            future.set_result(None)

    async def _settle(self) -> None:
        # Let everything runnable run; wait (without spinning) while time is held.
        # The passes start again after any hold came and went during them: a call that held
        # time and returned at once (ELIZA) starts a chain of hand-offs (the reply, the game's
        # step, the next task) that must run before time may jump.
        while True:
            seen = self._activity
            for _ in range(_SETTLE_PASSES):
                await asyncio.sleep(0)
            if self._holds == 0 and self._activity == seen:
                return
            await self._released.wait()
