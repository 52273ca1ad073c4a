"""The store's writer without its thread: the same group commits (StoreWriter._write, the same
SQL, fencing and results), run on the virtual loop every commit interval, so when a write
lands is part of the seeded schedule. A crashed process's writer drops what it had not yet
committed, as a SIGKILL would."""

from __future__ import annotations

import asyncio
import queue

from turinglab.store.database import Store
from turinglab.store.writer import StoreWriter


class SimWriter(StoreWriter):
    def __init__(self, store: Store, commit_interval_s: float) -> None:
        super().__init__(store)  # its thread starts and ends at once (_loop below)
        self._thread.join()
        self.interval = commit_interval_s
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
        """Commit what was queued, every interval, until the process dies."""
        while not self.dead:
            await asyncio.sleep(self.interval)
            items = [i for i in self.pending() if i is not None and hasattr(i, "future")]
            if items and not self.dead:
                self._write(items)  # type: ignore[arg-type]

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
