"""How the arena's writes are batched: messages and game starts are group-committed by the
store's writer thread, and what it reports comes back to the event loop once per commit.

`commit_interval_s` is how often the writer commits; `StartBatch` writes every game started
since the last commit in one op; `LoopInbox` runs the writer thread's callbacks on the loop.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

from turinglab.games.spec import TrialSpec
from turinglab.store import arena_games
from turinglab.store.database import GameStart, Store
from turinglab.store.writer import StoreWriter

if TYPE_CHECKING:
    from sqlalchemy import Connection

# A message is shown once committed, so this interval is most of what showing it costs (see
# benchmarks/README.md); shorter buys latency with more transactions.
COMMIT_INTERVAL_ENV = "TURINGLAB_ARENA_COMMIT_INTERVAL_S"


def commit_interval_s() -> float:
    """The arena writer's group-commit interval: 20 ms unless the environment says."""
    raw = os.environ.get(COMMIT_INTERVAL_ENV, "0.02")
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"{COMMIT_INTERVAL_ENV}={raw!r} is not a number of seconds") from None
    if not 0 <= value <= 1:
        raise ValueError(f"{COMMIT_INTERVAL_ENV}={raw!r}: give 0 to 1 seconds")
    return value


class LoopInbox:
    """Calls from the writer thread, run on the event loop: one wake-up per commit, not one
    per message (a group commit settles many futures at once)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self._calls: deque[tuple[Callable[..., None], tuple[Any, ...]]] = deque()
        self._lock = threading.Lock()
        self._woken = False

    def put(self, call: Callable[..., None], *args: Any) -> None:
        with self._lock:
            self._calls.append((call, args))
            if self._woken:
                return
            self._woken = True
        self.loop.call_soon_threadsafe(self._drain)

    def _drain(self) -> None:
        with self._lock:
            calls, self._calls = self._calls, deque()
            self._woken = False
        for call, args in calls:
            call(*args)


class StartBatch:
    """Games started since the writer last took them, written by one op in its next commit
    (arena_games.start_games: a few statements per commit, not per game). A retried commit
    runs the op again on the same batch; games added meanwhile go to the next op."""

    def __init__(self, writer: StoreWriter, store: Store) -> None:
        self.writer = writer
        self.store = store
        self._lock = threading.Lock()
        self._pending: list[tuple[GameStart, TrialSpec, Future[int]]] = []
        self._queued = False

    def add(self, start: GameStart, spec: TrialSpec) -> Future[int]:
        """The game's id once its row is committed."""
        future: Future[int] = Future()
        with self._lock:
            self._pending.append((start, spec, future))
            if self._queued:
                return future
            self._queued = True
        batch: list[tuple[GameStart, TrialSpec, Future[int]]] = []

        def op(conn: Connection) -> list[int]:
            if not batch:
                batch.extend(self._take())
            return arena_games.start_games(self.store, conn, [(st, sp) for st, sp, _ in batch])

        def settle(done: Future[Any]) -> None:
            if not batch:  # the op never ran (its commit failed for good first)
                batch.extend(self._take())
            err = done.exception()
            for i, (_, _, game) in enumerate(batch):
                if err is None:
                    game.set_result(done.result()[i])
                else:
                    game.set_exception(err)

        self.writer.submit(op).add_done_callback(settle)
        return future

    def _take(self) -> list[tuple[GameStart, TrialSpec, Future[int]]]:
        with self._lock:
            taken, self._pending = self._pending, []
            self._queued = False
        return taken
