"""Adaptive concurrency per endpoint, taken per API call (not per conversation).

AIMD, as TCP does it: every success widens the window by 1/window (about +1 per round trip of
the whole window); a 429 halves it, at most once per `cooldown_s` so that one burst of 429s
from calls issued together counts as one signal.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque


class AdaptiveLimiter:
    def __init__(self, max_limit: int, *, min_limit: int = 1, cooldown_s: float = 1.0) -> None:
        self.max_limit = max_limit
        self.min_limit = min_limit
        self.limit = float(max_limit)
        self.cooldown_s = cooldown_s
        self.in_use = 0
        self.rate_limited = 0
        self._last_cut = -float("inf")
        self._waiters: deque[asyncio.Future[None]] = deque()

    async def acquire(self) -> None:
        if self.in_use < int(self.limit) and not self._waiters:
            self.in_use += 1
            return
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(fut)
        try:
            await fut
        except asyncio.CancelledError:
            if fut.done() and not fut.cancelled():
                self.release()  # the slot was handed to us just as we were cancelled
            else:
                self._waiters.remove(fut)
            raise

    def release(self) -> None:
        self.in_use -= 1
        self._wake()

    def on_success(self) -> None:
        if self.limit < self.max_limit:
            self.limit = min(self.max_limit, self.limit + 1.0 / self.limit)
            self._wake()

    def on_rate_limited(self) -> None:
        self.rate_limited += 1
        now = time.monotonic()
        if now - self._last_cut >= self.cooldown_s:
            self._last_cut = now
            self.limit = max(self.min_limit, self.limit / 2)

    def _wake(self) -> None:
        while self._waiters and self.in_use < int(self.limit):
            fut = self._waiters.popleft()
            if not fut.done():
                self.in_use += 1
                fut.set_result(None)

    async def __aenter__(self) -> AdaptiveLimiter:
        await self.acquire()
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.release()
