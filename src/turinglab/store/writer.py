"""One writer thread per process that group-commits what the games produce.

Messages arrive one at a time from the event loop (`Table.sink`); the thread drains whatever is
queued and writes it in one transaction, so a thousand conversations in flight cost a few
transactions per second, not a thousand. Every queued write has a future that resolves after
its commit (operations that need an answer, a new game's id, a claim of trials, read it there).

A transaction costs far more than a row (about half a millisecond of CPU against tens of
microseconds on SQLite), so under a steady trickle of messages a writer that commits whatever
it finds commits a row or two at a time and keeps a core busy, taking the GIL from the event
loop that feeds it. `min_commit_interval_s` spaces the commits out: a writer that committed
less than that long ago waits out the rest before it drains the queue, so under load every
commit carries all that arrived meanwhile; an idle writer still commits at once.

Nothing is dropped. A commit that fails because the database cannot be reached (or is busy)
is retried, the same batch in one transaction, with exponential backoff for up to
`retry_for_s`; after that every write of the batch fails its future, loudly. A commit that
fails for another reason (one bad row) is split in halves, each retried on its own, down to
the write at fault, so one bad row fails only its own future and every other game's rows land.
Each failure is logged with its time and counted in `failures` (for a metrics endpoint).
"""

from __future__ import annotations

import asyncio
import logging
import queue
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, TypeVar

from sqlalchemy import Connection
from sqlalchemy.exc import DBAPIError, DisconnectionError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout

from turinglab.store.database import GameEnd, GameStart, Store
from turinglab.store.fencing import OwnedMessage, Refused, add_owned_messages

T = TypeVar("T")
Op = Callable[[Connection], Any]
_STOP = object()
log = logging.getLogger(__name__)


@dataclass(slots=True)
class _Write:
    what: Any  # a message row (dict), OwnedMessage, GameStart, GameEnd or an op
    future: Future[Any] | None  # None: nobody awaits it (a failure lands in `error`)


class WriteFailed(RuntimeError):
    """A write that could not be committed within the writer's bound (or was rejected)."""


def transient(err: BaseException) -> bool:
    """Whether trying the same transaction again may succeed (the database was unreachable,
    restarting, busy or locked), as opposed to a write the database rejects."""
    if isinstance(err, (OperationalError, DisconnectionError, PoolTimeout, OSError)):
        return True
    return isinstance(err, DBAPIError) and bool(err.connection_invalidated)


class StoreWriter:
    def __init__(
        self,
        store: Store,
        *,
        max_batch: int = 5000,
        min_commit_interval_s: float = 0.0,
        retry_for_s: float = 60.0,
        first_backoff_s: float = 0.05,
        max_backoff_s: float = 2.0,
    ) -> None:
        self.store = store
        self.max_batch = max_batch
        self.min_commit_interval_s = min_commit_interval_s
        self.retry_for_s = retry_for_s
        self.first_backoff_s = first_backoff_s
        self.max_backoff_s = max_backoff_s
        # The first message row that failed for good (nobody awaits those futures: the runner
        # checks this at the end of a run).
        self.error: BaseException | None = None
        self.transactions = 0
        self.failures = 0  # failed commits (each retried or split), for metrics
        self.failed_writes = 0  # writes whose future failed
        self.last_failure_at: float | None = None  # time.time() of the latest failed commit
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._loop, name="turinglab-store", daemon=True)
        self._thread.start()

    def _put(self, what: Any) -> Future[Any]:
        future: Future[Any] = Future()
        self._queue.put(_Write(what, future))
        return future

    def add_message(self, row: dict[str, Any]) -> Future[None]:
        """Queue a message row; it is durable after the next group commit (milliseconds)."""
        return self._put(row)

    def add_message_nowait(self, row: dict[str, Any]) -> None:
        """Queue a message row nobody awaits (the runner's games): as durable as `add_message`,
        without a future per message (a Future costs a lock and a condition; at hundreds of
        messages a second that is a visible share of the runner's CPU). If it cannot be
        written for good, `error` says so and the runner fails the run."""
        self._queue.put(_Write(row, None))

    def add_owned_message(self, row: dict[str, Any], epoch: int) -> Future[None]:
        """A live game's message, written only while `epoch` is still the game's
        (store/fencing.py); its future fails with Fenced or OutOfSequence otherwise."""
        return self._put(OwnedMessage(row, epoch))

    def start_game(self, start: GameStart) -> Future[int]:
        """A new game row; batched with every other game started meanwhile."""
        return self._put(start)

    def end_game(self, end: GameEnd) -> Future[str]:
        return self._put(end)

    def submit(self, op: Op) -> Future[Any]:
        """Run `op` in a coming transaction. An op may raise `Refused` before it writes
        anything: that fails its own future only."""
        return self._put(op)

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

    def _write(self, items: list[_Write]) -> None:
        """Commit `items` in one transaction, retrying while the database is unreachable;
        split them when one of them is at fault."""
        for wait_s in self._attempts(items):
            time.sleep(wait_s)

    def _attempts(self, items: list[_Write]) -> Iterator[float]:
        """`_write`'s steps: each try of the commit, yielding how long to wait before the next
        (the thread sleeps it; the simulator's writer waits it on its virtual clock)."""
        deadline = time.monotonic() + self.retry_for_s
        backoff = self.first_backoff_s
        while True:
            try:
                results = self._commit(items)
            except Exception as err:
                self._failed(err, len(items))
                left = deadline - time.monotonic()
                if transient(err) and left > 0:
                    yield min(backoff, left)  # the last try comes at the deadline
                    backoff = min(backoff * 2, self.max_backoff_s)
                    continue
                if not transient(err) and len(items) > 1:
                    half = len(items) // 2  # order kept: a game's writes stay in order
                    yield from self._attempts(items[:half])
                    yield from self._attempts(items[half:])
                    return
                self._give_up(items, err)
                return
            self.transactions += 1
            for item, result in zip(items, results, strict=True):
                if item.future is None:
                    continue
                if isinstance(result, Refused):
                    item.future.set_exception(result)
                else:
                    item.future.set_result(result)
            return

    def _commit(self, items: list[_Write]) -> list[Any]:
        """One transaction; results in the order of `items` (a Refused for a refused write)."""
        store = self.store
        groups: dict[str, list[int]] = {}
        for i, item in enumerate(items):
            groups.setdefault(_kind(item.what), []).append(i)
        results: list[Any] = [None] * len(items)
        with store.writing() as conn:
            starts = groups.get("start", [])
            if starts:
                ids = store.start_games(conn, [items[i].what for i in starts])
                for i, gid in zip(starts, ids, strict=True):
                    results[i] = gid
            rows = groups.get("row", [])
            if rows:
                store.add_messages(conn, [items[i].what for i in rows])
            owned = groups.get("owned", [])
            if owned:
                refused = add_owned_messages(
                    conn, [items[i].what for i in owned], store.add_messages
                )
                for i, outcome in zip(owned, refused, strict=True):
                    results[i] = outcome
            ends = groups.get("end", [])
            if ends:
                statuses = store.end_games(conn, [items[i].what for i in ends])
                for i, status in zip(ends, statuses, strict=True):
                    results[i] = status
            for i in groups.get("op", []):
                try:
                    results[i] = items[i].what(conn)
                except Refused as err:  # raised before the op wrote anything
                    results[i] = err
        return results

    def _failed(self, err: BaseException, n: int) -> None:
        # Stamped from time.time(), not strftime's own clock: the simulator's is virtual.
        self.failures += 1
        self.last_failure_at = time.time()
        log.warning(
            "store write failed at %s (%d writes, %s): %s",
            time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(time.time())),
            n,
            "will retry" if transient(err) else "rejected",
            str(err).splitlines()[0] if str(err) else type(err).__name__,
        )

    def _give_up(self, items: list[_Write], err: BaseException) -> None:
        self.failed_writes += len(items)
        if any(isinstance(i.what, dict) for i in items):
            self.error = self.error or err
        log.error(
            "store: %d writes NOT saved at %s after retrying for up to %.0f s: %s",
            len(items),
            time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(time.time())),
            self.retry_for_s,
            err,
        )
        failure = WriteFailed(f"not saved: {type(err).__name__}: {err}")
        failure.__cause__ = err
        for item in items:
            if item.future is not None:
                item.future.set_exception(failure)


def _kind(what: Any) -> str:
    if isinstance(what, dict):
        return "row"
    if isinstance(what, OwnedMessage):
        return "owned"
    if isinstance(what, GameStart):
        return "start"
    if isinstance(what, GameEnd):
        return "end"
    return "op"
