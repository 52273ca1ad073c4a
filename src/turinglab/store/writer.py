"""One writer thread per process that group-commits what the games produce.

Messages arrive one at a time from the event loop (`Table.sink`); the thread drains whatever is
queued and writes it in one transaction, so a thousand conversations in flight cost a few
transactions per second, not a thousand. Operations that need an answer (a new game's id, a
claim of trials) are queued the same way and their futures resolve after the commit.
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

from sqlalchemy import Connection

from turinglab.store.database import Store

T = TypeVar("T")
Op = Callable[[Connection], Any]
_STOP = object()


class StoreWriter:
    def __init__(self, store: Store, *, max_batch: int = 5000) -> None:
        self.store = store
        self.max_batch = max_batch
        self.error: BaseException | None = None  # the first write that failed on its own
        self.transactions = 0
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._loop, name="turinglab-store", daemon=True)
        self._thread.start()

    def add_message(self, row: dict[str, Any]) -> None:
        """Queue a message row; it is durable after the next group commit (milliseconds)."""
        self._queue.put(row)

    def submit(self, op: Op) -> Future[Any]:
        future: Future[Any] = Future()
        self._queue.put((op, future))
        return future

    async def call(self, op: Callable[[Connection], T]) -> T:
        """Run `op` in the writer's next transaction and wait for its commit."""
        # Shielded: a cancelled game still lets a queued write land (and be awaited by close).
        return await asyncio.shield(asyncio.wrap_future(self.submit(op)))

    def close(self) -> None:
        """Write everything queued, then stop."""
        self._queue.put(_STOP)
        self._thread.join()

    def _loop(self) -> None:
        stopping = False
        while not stopping:
            items = [self._queue.get()]
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
        ops = [i for i in items if isinstance(i, tuple)]
        try:
            results = []
            with self.store.writing() as conn:
                self.store.add_messages(conn, rows)
                for op, _future in ops:
                    results.append(op(conn))
            self.transactions += 1
        except Exception:
            # One bad write must not sink the others: redo them one transaction each.
            self._write_one_by_one(rows, ops)
            return
        for (_op, future), result in zip(ops, results, strict=True):
            future.set_result(result)

    def _write_one_by_one(self, rows: list[dict[str, Any]], ops: list[Any]) -> None:
        for row in rows:
            try:
                with self.store.writing() as conn:
                    self.store.add_messages(conn, [row])
            except Exception as err:
                self.error = self.error or err
        for op, future in ops:
            try:
                with self.store.writing() as conn:
                    result = op(conn)
            except Exception as err:
                future.set_exception(err)
            else:
                future.set_result(result)
