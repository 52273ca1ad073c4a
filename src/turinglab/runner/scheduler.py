"""Plays a run's pending trials concurrently and stores each one the moment it finishes.

A fixed pool of workers pulls trials from a queue (cheaper than a task per trial at 10^4
trials). A trial is attempted up to `max_attempts` times in all, counting attempts stored by
earlier invocations; a failed attempt is stored with its error and never becomes an outcome.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from turinglab.agents.base import Agent
from turinglab.agents.errors import AgentError
from turinglab.agents.retry import Caller
from turinglab.games.gtt import DISTINGUISHER, UNKNOWN, GTTRules, GTTSetup, play_gtt
from turinglab.games.gtt_prompts import GTTPrompts
from turinglab.games.query_phase import SPECIMEN
from turinglab.games.spec import GameResult
from turinglab.games.table import Seat, Table
from turinglab.games.variants import SPECIMEN_VARIANTS
from turinglab.runner.plan import TrialSpec
from turinglab.store.database import AttemptRecord, PendingTrial, Store


@dataclass
class RunCounters:
    planned: int
    already_finished: int
    finished: int = 0  # finished by this invocation
    failed_attempts: int = 0
    exhausted: int = 0  # trials that used up every attempt
    running: int = 0
    last_error: str | None = None
    outcomes: dict[str, int] = field(default_factory=dict)

    @property
    def done(self) -> int:
        return self.already_finished + self.finished


def outcome_row(table: Table, result: GameResult) -> dict[str, Any]:
    """What the outcomes table keeps of a finished GTT trial (GTT paper, appendix B.1)."""
    details = dict(result.details)
    return {
        "status": result.status,
        "verdict": result.verdict,
        "correct": result.correct,
        "distinguisher_turns": details.pop("distinguisher_turns"),
        "unknown_turns": details.pop("unknown_turns"),
        "first_distinguisher_message": details.pop("first_distinguisher_message"),
        "raw_final_message": details.pop("raw_final_message"),
        "actor_prompt": details.pop("actor_prompt"),
        "histories": {seat: table.history(seat) for seat in table.seats},
        "routes": table.routes(),
        "details": details,
    }


class TrialRunner:
    def __init__(
        self,
        store: Store,
        agents: dict[str, Agent],
        caller: Caller,
        prompts: GTTPrompts,
        rules: GTTRules,
        *,
        max_in_flight: int,
        max_attempts: int,
        environment_id: str | None,
        counters: RunCounters,
        on_change: Callable[[], None] | None = None,
        display_names: dict[str, str] | None = None,
    ) -> None:
        self.store = store
        self.agents = agents
        self.caller = caller
        self.prompts = prompts
        self.rules = rules
        self.max_in_flight = max_in_flight
        self.max_attempts = max_attempts
        self.environment_id = environment_id
        self.counters = counters
        self.display_names = display_names or {}  # how FD prompts name a target
        self.on_change = on_change or (lambda: None)
        # One writer thread: database calls never block the event loop, and never interleave.
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="turinglab-store")

    async def run(self, pending: list[PendingTrial]) -> None:
        queue = deque(pending)
        workers = [
            asyncio.create_task(self._worker(queue))
            for _ in range(min(self.max_in_flight, len(queue)))
        ]
        try:
            await asyncio.gather(*workers)
        finally:
            for w in workers:
                w.cancel()
            await asyncio.gather(*workers, return_exceptions=True)

    def close(self) -> None:
        # Writes already handed to the writer still land: a finished trial is never lost.
        self._writer.shutdown(wait=True)

    async def _worker(self, queue: deque[PendingTrial]) -> None:
        while queue:
            trial = queue.popleft()
            self.counters.running += 1
            try:
                await self._play_until_done(trial)
            finally:
                self.counters.running -= 1
                self.on_change()

    async def _play_until_done(self, trial: PendingTrial) -> None:
        spec = trial.spec
        for attempt_no in range(trial.failed_attempts + 1, self.max_attempts + 1):
            table = Table(seats=self._seats(spec), caller=self.caller, seed=spec.seed)
            started = time.time()
            record = AttemptRecord(
                trial_id=trial.trial_id,
                attempt_no=attempt_no,
                started_at=started,
                finished_at=started,
                messages=table.messages,
                environment_id=self.environment_id,
            )
            try:
                setup = GTTSetup(
                    x_is_target=spec.x_is_target,
                    variant=spec.variant,
                    target_name=self.display_names.get(spec.target, spec.target),
                    budget=spec.budget,
                )
                result = await play_gtt(table, setup, self.prompts, self.rules)
            except asyncio.CancelledError:
                raise
            except Exception as err:  # every failure is data: stored, never an outcome
                record.error_kind = err.kind if isinstance(err, AgentError) else "error"
                record.error_message = f"{type(err).__name__}: {err}"[:2000]
                record.finished_at = time.time()
                await self._write(record)
                self.counters.failed_attempts += 1
                self.counters.last_error = f"{spec.key}: {record.error_message[:200]}"
                self.on_change()
                continue
            record.outcome = outcome_row(table, result)
            record.outcome["details"]["attempt_seed"] = spec.seed
            record.finished_at = time.time()
            await self._write(record)
            self.counters.finished += 1
            self.counters.outcomes[result.status] = self.counters.outcomes.get(result.status, 0) + 1
            return
        self.counters.exhausted += 1

    def _seats(self, spec: TrialSpec) -> dict[str, Seat]:
        """Fresh instances for the trial's roles; the specimen is a fresh target instance."""
        seats = {
            DISTINGUISHER: Seat(DISTINGUISHER, spec.distinguisher, self.agents[spec.distinguisher]),
            UNKNOWN: Seat(UNKNOWN, spec.unknown, self.agents[spec.unknown]),
        }
        if spec.variant in SPECIMEN_VARIANTS:
            seats[SPECIMEN] = Seat(SPECIMEN, spec.target, self.agents[spec.target])
        return seats

    async def _write(self, record: AttemptRecord) -> None:
        loop = asyncio.get_running_loop()
        # Shielded: if we are cancelled mid-write, the write still completes and is awaited by
        # the executor shutdown in run().
        await asyncio.shield(loop.run_in_executor(self._writer, self.store.record_attempt, record))
