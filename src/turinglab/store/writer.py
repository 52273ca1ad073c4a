"""One writer thread per process that group-commits what the games produce.

Messages arrive one at a time from the event loop (`Table.sink`); the thread drains whatever is
queued and writes it in one transaction, so a thousand conversations in flight cost a few
transactions per second, not a thousand. Operations that need an answer (a new game's id, a
claim of trials) are queued the same way and their futures resolve after the commit.

A transaction costs far more than a row (about half a millisecond of CPU against tens of
microseconds on SQLite), so under a steady trickle of messages a writer that commits whatever
it finds commits a row or two at a time and keeps a core busy, taking the GIL from the event
loop that feeds it. `min_commit_interval_s` spaces the commits out: a writer that committed
less than that long ago waits out the rest before it drains the queue, so under load every
commit carries all that arrived meanwhile; an idle writer still commits at once.
"""

from __future__ import annotations

import asyncio
import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from functools import partial
from typing import Any, TypeVar

from sqlalchemy import Connection

from turinglab.store.database import GameEnd, GameStart, Store

T = TypeVar("T")
Op = Callable[[Connection], Any]
_STOP = object()


class StoreWriter:
    def __init__(
        self, store: Store, *, max_batch: int = 5000, min_commit_interval_s: float = 0.0
    ) -> None:
        self.store = store
        self.max_batch = max_batch
        self.min_commit_interval_s = min_commit_interval_s
        self.error: BaseException | None = None  # the first write that failed on its own
        self.transactions = 0
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._loop, name="turinglab-store", daemon=True)
        self._thread.start()

    def add_message(self, row: dict[str, Any]) -> None:
        """Queue a message row; it is durable after the next group commit (milliseconds)."""
        self._queue.put(row)

    def start_game(self, start: GameStart) -> Future[int]:
        """A new game row; batched with every other game started meanwhile."""
        future: Future[int] = Future()
        self._queue.put((start, future))
        return future

    def end_game(self, end: GameEnd) -> Future[str]:
        future: Future[str] = Future()
        self._queue.put((end, future))
        return future

    def submit(self, op: Op) -> Future[Any]:
        future: Future[Any] = Future()
        self._queue.put((op, future))
        return future

    async def call(self, op: Callable[[Connection], T]) -> T:
        """Run `op` in the writer's next transaction and wait for its commit."""
        return await self.wait(self.submit(op))

    @staticmethod
    async def wait(future: Future[T]) -> T:
        # Shielded: a cancelled game still lets a queued write land (and be awaited by close).
        return await asyncio.shield(asyncio.wrap_future(future))

    def close(self) -> None:
        """Write everything queued, then stop."""
        self._queue.put(_STOP)
        self._thread.join()

    def _loop(self) -> None:
        stopping = False
        last_commit = float("-inf")
        while not stopping:
            items = [self._queue.get()]
            wait = last_commit + self.min_commit_interval_s - time.monotonic()
            if wait > 0 and items[0] is not _STOP:
                time.sleep(wait)  # gather what else arrives into this commit
            last_commit = time.monotonic()
            while len(items) < self.max_batch:
                try:
                    items.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            if any(i is _STOP for i in items):
                stopping = True
                items = [i for i in items if i is not _STOP]
            if items:
                self._write(items)

    def _write(self, items: list[Any]) -> None:
        rows = [i for i in items if isinstance(i, dict)]
        starts = [i for i in items if isinstance(i, tuple) and isinstance(i[0], GameStart)]
        ends = [i for i in items if isinstance(i, tuple) and isinstance(i[0], GameEnd)]
        ops = [i for i in items if isinstance(i, tuple) and callable(i[0])]
        try:
            with self.store.writing() as conn:
                ids = self.store.start_games(conn, [s for s, _ in starts]) if starts else []
                self.store.add_messages(conn, rows)
                statuses = self.store.end_games(conn, [e for e, _ in ends]) if ends else []
                results = [op(conn) for op, _future in ops]
            self.transactions += 1
        except Exception:
            # One bad write must not sink the others: redo them one transaction each.
            self._write_one_by_one(rows, starts, ends, ops)
            return
        for (_item, future), result in zip(
            [*starts, *ends, *ops], [*ids, *statuses, *results], strict=True
        ):
            future.set_result(result)

    def _write_one_by_one(
        self, rows: list[dict[str, Any]], starts: list[Any], ends: list[Any], ops: list[Any]
    ) -> None:
        for row in rows:
            try:
                with self.store.writing() as conn:
                    self.store.add_messages(conn, [row])
            except Exception as err:
                self.error = self.error or err
        single = [
            *((partial(_start_one, self.store, s), f) for s, f in starts),
            *((partial(_end_one, self.store, e), f) for e, f in ends),
            *ops,
        ]
        for op, future in single:
            try:
                with self.store.writing() as conn:
                    result = op(conn)
            except Exception as err:
                future.set_exception(err)
            else:
                future.set_result(result)


def _start_one(store: Store, start: GameStart, conn: Connection) -> int:
    return store.start_game(conn, start)


def _end_one(store: Store, end: GameEnd, conn: Connection) -> str:
    return store.end_game(conn, end)
