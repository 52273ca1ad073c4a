"""Plays a run's trials concurrently, any game kind, and writes every message as it is said.

A fixed pool of slots pulls trials from a small local queue, refilled by claiming leased
batches from the store, so several processes (on one machine or many, sharing PostgreSQL)
can work through one run. A heartbeat renews this worker's leases; a killed worker's trials
are claimed by another once their lease expires. A trial is attempted up to `max_attempts`
times in all, counting attempts stored by earlier invocations; every attempt is a new game
row, and a failed one is stored with its error and never becomes an outcome.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import socket
import time
import uuid
from collections import deque
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from turinglab.agents.base import Agent
from turinglab.agents.errors import AgentError, RateLimited, TransientError
from turinglab.agents.retry import MAX_HONOURED_RETRY_AFTER_S, Caller, RetryPolicy
from turinglab.games.clock import REAL_CLOCK, Clock
from turinglab.games.kinds import CHOOSES_CLOCK, OUTCOME_COLUMNS, Game
from turinglab.games.table import Seat, Table, TranscriptMessage
from turinglab.store.database import (
    SUPERSEDED,
    GameEnd,
    GameStart,
    PendingTrial,
    RunState,
    SeatRecord,
    Store,
)
from turinglab.store.writer import StoreWriter

DEFAULT_LEASE_S = 60.0
# Under load the writer commits at most every 20 ms, each commit carrying all that arrived
# meanwhile: a transaction costs far more CPU than a row (BEGIN IMMEDIATE and COMMIT on
# SQLite), and a batch run waits on the store only to start a game, once per several seconds.
RUNNER_COMMIT_INTERVAL_S = 0.02


def worker_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


def gone_on_this_host(owners: list[str]) -> list[str]:
    """Lease owners on this machine whose process no longer exists: their leases need not be
    waited out (a rerun after a crash starts at once). Other machines' workers always are."""
    host = socket.gethostname()
    gone = []
    for owner in owners:
        owner_host, _, rest = owner.partition(":")
        pid = rest.partition(":")[0]
        if owner_host != host or not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            gone.append(owner)
        except PermissionError:
            pass  # alive, someone else's
    return gone


@dataclass
class RunCounters:
    planned: int
    already_finished: int
    finished: int = 0  # finished by this invocation
    failed_attempts: int = 0
    failed_before: int = 0  # failed attempts stored by earlier invocations
    waiting: int = 0  # trials backing off before their next attempt
    spent_before_usd: float = 0.0  # what earlier invocations of the run spent (priced agents)
    budget_reached: bool = False  # no new trial was started once the budget was spent
    trial_seconds: float = 0.0  # wall time of the trials finished by this invocation
    trials_timed: int = 0
    max_in_flight: int = 1
    exhausted: int = 0  # trials that used up every attempt
    running: int = 0
    superseded: int = 0  # games whose trial another worker finished first
    last_error: str | None = None
    outcomes: dict[str, int] = field(default_factory=dict)

    @property
    def done(self) -> int:
        return self.already_finished + self.finished


def transient_cause(err: BaseException) -> RateLimited | TransientError | None:
    """The transient agent error behind a failed attempt (a game may wrap it), if any."""
    seen: BaseException | None = err
    while seen is not None:
        if isinstance(seen, (RateLimited, TransientError)):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


def attempt_delay(
    policy: RetryPolicy, failed: int, err: BaseException, rng: random.Random
) -> float:
    """Seconds to wait before the next attempt of a trial whose `failed`-th attempt just
    failed with `err`: none after a fatal error (it fails the same way at once or not at all),
    else exponential with jitter, and never less than the server's Retry-After."""
    cause = transient_cause(err)
    if cause is None:
        return 0.0
    delay = policy.backoff(failed - 1, rng) if policy.base_s > 0 else 0.0
    if cause.retry_after is not None:
        delay = max(delay, min(cause.retry_after, MAX_HONOURED_RETRY_AFTER_S))
    return delay


def clock_for(game: Game, seats: dict[str, Seat]) -> Clock:
    """The clock a game is played on: a kind that chooses its clock decides per table (timed
    games use simulated time when no person is seated, so a batch run never waits for real
    minutes); other games run on real time."""
    chooser = CHOOSES_CLOCK.of(game)
    return chooser.clock_for(seats) if chooser is not None else REAL_CLOCK


class TrialRunner:
    def __init__(
        self,
        store: Store,
        game: Game,
        agents: Mapping[str, Agent],
        caller: Caller,
        *,
        run_id: str,
        max_in_flight: int,
        max_attempts: int,
        environment_id: str | None,
        counters: RunCounters,
        on_change: Callable[[], None] | None = None,
        worker: str | None = None,
        lease_s: float = DEFAULT_LEASE_S,
        heartbeat_s: float | None = None,
        claim_batch: int | None = None,
        attempt_backoff: RetryPolicy | None = None,
        seed: int = 0,
        budget_usd: float | None = None,
    ) -> None:
        self.store = store
        self.game = game
        self.agents = agents
        self.caller = caller
        self.run_id = run_id
        self.max_in_flight = max_in_flight
        self.max_attempts = max_attempts
        self.environment_id = environment_id
        self.counters = counters
        self.on_change = on_change or (lambda: None)
        self.worker = worker or worker_id()
        self.lease_s = lease_s
        # Renew well before expiry; the run's updated_at doubles as a "still running" sign.
        self.heartbeat_s = heartbeat_s or min(10.0, lease_s / 3)
        # Small batches: enough to keep the slots busy, few enough to share a run fairly.
        self.claim_batch = claim_batch or max(1, min(100, max_in_flight // 4))
        self.attempt_backoff = attempt_backoff or RetryPolicy(base_s=0.0)
        self.budget_usd = budget_usd
        self._rng = random.Random(seed)
        self.writer = StoreWriter(store, min_commit_interval_s=RUNNER_COMMIT_INTERVAL_S)
        self._queue: deque[PendingTrial] = deque()
        self._claim_lock = asyncio.Lock()
        self._drained = False
        # Ends of finished games queued for the writer and not yet committed: a slot moves
        # on to its next trial at once instead of waiting a commit per game.
        self._ending: set[Future[str]] = set()
        self._end_error: BaseException | None = None

    async def run(self) -> None:
        """Play until no trial of the run is left to claim and none is leased elsewhere."""
        self._drained = False
        await self._expire_gone_workers()
        heartbeat = asyncio.create_task(self._heartbeat())
        slots = [asyncio.create_task(self._slot()) for _ in range(self.max_in_flight)]
        try:
            await asyncio.gather(*slots)
        finally:
            for task in (*slots, heartbeat):
                task.cancel()
            await asyncio.gather(*slots, heartbeat, return_exceptions=True)
            # Every game that ended is committed before the run is: callers read results next.
            await asyncio.gather(
                *(self.writer.wait(f) for f in list(self._ending)), return_exceptions=True
            )
        if self._end_error is not None:
            raise RuntimeError(f"the store could not end a game: {self._end_error}")
        if self.writer.error is not None:
            raise RuntimeError(f"the store rejected a message: {self.writer.error}")

    def close(self) -> None:
        """Give back unplayed leases and write everything queued (a said message is kept)."""
        self.writer.submit(
            partial(self.store.release_leases, run_id=self.run_id, worker=self.worker)
        )
        self.writer.close()

    def state(self) -> RunState:
        return self.store.state(self.run_id, self.max_attempts, self.worker)

    async def _expire_gone_workers(self) -> None:
        owners = await self.writer.call(partial(self.store.lease_owners, run_id=self.run_id))
        gone = gone_on_this_host(owners)
        if gone:
            await self.writer.call(
                partial(self.store.expire_leases, run_id=self.run_id, owners=gone)
            )

    async def _heartbeat(self) -> None:
        renew = partial(
            self.store.renew_leases, run_id=self.run_id, worker=self.worker, lease_s=self.lease_s
        )
        while True:
            await asyncio.sleep(self.heartbeat_s)
            await self.writer.call(renew)

    async def _slot(self) -> None:
        while (trial := await self._next()) is not None:
            self.counters.running += 1
            try:
                await self._play_until_done(trial)
            finally:
                self.counters.running -= 1
                self.on_change()

    async def _next(self) -> PendingTrial | None:
        async with self._claim_lock:
            if self._over_budget():
                # Trials in flight finish; no new one starts. Leases left are given back.
                self.counters.budget_reached = self._drained = True
                self._queue.clear()
                return None
            while not self._queue:
                if self._drained:
                    return None
                claim = partial(
                    self.store.claim_trials,
                    run_id=self.run_id,
                    worker=self.worker,
                    n=self.claim_batch,
                    lease_s=self.lease_s,
                    max_attempts=self.max_attempts,
                )
                batch = await self.writer.call(claim)
                if batch:
                    self._queue.extend(batch)
                    break
                state = await self.writer.call(
                    partial(
                        self.store.run_state,
                        run_id=self.run_id,
                        max_attempts=self.max_attempts,
                        worker=self.worker,
                    )
                )
                if state.leased_elsewhere == 0:
                    self._drained = True
                    return None
                await self._expire_gone_workers()
                # Another worker holds the rest: wait, and take over what its lease lets go.
                await asyncio.sleep(min(1.0, self.lease_s / 4))
            return self._queue.popleft()

    def _over_budget(self) -> bool:
        if self.budget_usd is None:
            return False
        return self.counters.spent_before_usd + self.caller.stats.cost_usd >= self.budget_usd

    async def _play_until_done(self, trial: PendingTrial) -> None:
        spec = trial.spec
        began = time.monotonic()
        for attempt_no in range(trial.failed_attempts + 1, self.max_attempts + 1):
            seats = self.game.seats(spec, self.agents)
            table = Table(
                seats=seats, caller=self.caller, seed=spec.seed, clock=clock_for(self.game, seats)
            )
            start = GameStart(
                run_id=self.run_id,
                trial_id=trial.trial_id,
                attempt_no=attempt_no,
                game=spec.game,
                started_at=time.time(),
                seats=[SeatRecord(s.id, s.agent_name, s.kind) for s in seats.values()],
                environment_id=self.environment_id,
                worker=self.worker,
            )
            # The game row exists before its first message; then each message is queued for
            # the writer the moment the table appends it.
            game_id = await self.writer.wait(self.writer.start_game(start))
            table.sink = self._sink(game_id)
            try:
                result = await self.game.play(table, spec)
            except asyncio.CancelledError:
                raise  # the game stays `playing`; whoever claims the trial next marks it
            except Exception as err:  # every failure is data: stored, never an outcome
                kind = err.kind if isinstance(err, AgentError) else "error"
                message = f"{type(err).__name__}: {err}"[:2000]
                end = self._end(game_id, trial, table, error_kind=kind, error_message=message)
                await self.writer.wait(self.writer.end_game(end))
                self.counters.failed_attempts += 1
                self.counters.last_error = f"{spec.key}: {message[:200]}"
                self.on_change()
                if attempt_no < self.max_attempts:
                    await self._back_off(attempt_no, err)
                continue
            columns = OUTCOME_COLUMNS.of(self.game)
            extra = columns.outcome_columns(result) if columns is not None else {}
            end = self._end(game_id, trial, table, result=result, extra=extra)
            self.counters.trial_seconds += time.monotonic() - began
            self.counters.trials_timed += 1
            self._end_in_background(self.writer.end_game(end), result.status)
            return
        self.counters.exhausted += 1
        await self.writer.call(
            partial(self.store.release_trial, trial_id=trial.trial_id, worker=self.worker)
        )

    async def _back_off(self, failed: int, err: BaseException) -> None:
        delay = attempt_delay(self.attempt_backoff, failed, err, self._rng)
        if delay <= 0:
            return
        self.counters.waiting += 1
        try:
            await asyncio.sleep(delay)
        finally:
            self.counters.waiting -= 1

    def _end_in_background(self, future: Future[str], outcome: str) -> None:
        """Count a finished game when its end is committed (the writer thread resolves the
        future; the count is taken on the event loop)."""
        loop = asyncio.get_running_loop()
        self._ending.add(future)

        def committed(f: Future[str]) -> None:
            self._ending.discard(f)
            err = f.exception()
            if err is not None:
                self._end_error = self._end_error or err
            elif f.result() == SUPERSEDED:
                self.counters.superseded += 1
            else:
                self.counters.finished += 1
                self.counters.outcomes[outcome] = self.counters.outcomes.get(outcome, 0) + 1
            self.on_change()

        def from_writer(f: Future[str]) -> None:
            # A closed loop (an interrupted run) raises here; the end is still written.
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(committed, f)

        future.add_done_callback(from_writer)

    def _sink(self, game_id: int) -> Callable[[TranscriptMessage], None]:
        add, row = self.writer.add_message_nowait, self.store.message_row

        def sink(message: TranscriptMessage) -> None:
            add(row(game_id, message))

        return sink

    def _end(self, game_id: int, trial: PendingTrial, table: Table, **kw: Any) -> GameEnd:
        msgs = table.messages
        return GameEnd(
            game_id=game_id,
            trial_id=trial.trial_id,
            finished_at=time.time(),
            calls=sum(1 for m in msgs if m.route is not None),
            tokens_in=sum(m.tokens_in or 0 for m in msgs),
            tokens_out=sum(m.tokens_out or 0 for m in msgs),
            worker=self.worker,
            routes=table.routes(),
            # A failed attempt keeps the lease: the trial is replayed at once as a fresh game.
            release=kw.get("result") is not None,
            **kw,
        )
