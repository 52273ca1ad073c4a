"""The store's writer without its thread: the same group commits (StoreWriter._write, the same
SQL, fencing and results), run on the virtual loop, so when a write lands is part of the seeded
schedule. As the real writer's thread, it sleeps until something is queued and then gathers
what else arrives until the commit interval since its last commit has passed (no wake-ups
while idle: most of a schedule is idle). A crashed process's writer drops what it had not yet
committed, as a SIGKILL would.

Under the `postgres` fault (sim/store_faults.py) a commit takes virtual time (`delay`: its
round trip, or the rest of a stall), and one the database refuses is retried as the real
writer retries it (`StoreWriter._attempts`), its backoff waited on the virtual clock."""

from __future__ import annotations

import asyncio
import queue
from collections.abc import Callable
from typing import Any

from turinglab.store.database import Store
from turinglab.store.writer import StoreWriter


class _Signalling(queue.SimpleQueue[Any]):
    """The writer's queue, telling the pump when something is put in it."""

    def __init__(self) -> None:
        super().__init__()
        self.queued = asyncio.Event()

    def put(self, item: Any, block: bool = True, timeout: float | None = None) -> None:
        super().put(item, block, timeout)
        self.queued.set()


class SimWriter(StoreWriter):
    def __init__(
        self, store: Store, commit_interval_s: float, delay: Callable[[], float] | None = None
    ) -> None:
        super().__init__(store)  # its thread starts and ends at once (_loop below)
        self._thread.join()
        self._queue = self._signalling = _Signalling()
        self.interval = commit_interval_s
        self.delay = delay  # how long the next commit takes to reach the database, if any
        self.dead = False

    def _loop(self) -> None:
        return None  # commits are made by `pump`, on the loop

    def pending(self) -> list[object]:
        items = []
        while True:
            try:
                items.append(self._queue.get_nowait())
            except queue.Empty:
                return items

    async def pump(self) -> None:
        """Commit what was queued (at most once per interval) until the process dies."""
        loop = asyncio.get_running_loop()
        last_commit = float("-inf")
        while not self.dead:
            await self._signalling.queued.wait()
            wait = last_commit + self.interval - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)  # gather what else arrives into this commit
            self._signalling.queued.clear()
            last_commit = loop.time()
            items = [i for i in self.pending() if hasattr(i, "future")]
            if items and not self.dead:
                await self._write_on_loop(items)

    async def _write_on_loop(self, items: list[Any]) -> None:
        if self.delay is not None:
            await asyncio.sleep(self.delay())
            if self.dead:
                return
        for wait_s in self._attempts(items):
            if self.dead:
                return  # killed in the middle: what was not committed never will be
            await asyncio.sleep(wait_s)

    def crash(self) -> None:
        """Its process died: nothing queued is written, and nobody hears back about it."""
        self.dead = True
        self.pending()

    def close(self) -> None:
        if not self.dead:
            items = [i for i in self.pending() if hasattr(i, "future")]
            if items:
                self._write(items)  # type: ignore[arg-type]
        self.dead = True
