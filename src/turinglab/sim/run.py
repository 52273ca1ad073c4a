"""Run schedules: each seed is one whole simulated study (sim/world.py) checked against the
arena's promises (sim/invariants.py). A seed replays exactly: the same plan, the same events
in the same order, the same store, the same digest."""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import gc
import hashlib
import json
import logging
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from turinglab.bench.arena_audit import audit_store
from turinglab.sim import fake_redis
from turinglab.sim.determinism import seeded
from turinglab.sim.invariants import check
from turinglab.sim.virtual_loop import WHOSE, VirtualLoop
from turinglab.sim.world import Plan, World
from turinglab.store.database import Store

FAULTS = frozenset({"crash", "redis-restart"})
# TURINGLAB_SIM_VERBOSE=1: the trace keeps the arena's DEBUG logs too (the cluster's, and each
# frame a simulated page takes), to follow one seed; the digest then covers them as well.
VERBOSE = os.environ.get("TURINGLAB_SIM_VERBOSE", "") not in ("", "0")
LEVEL = logging.DEBUG if VERBOSE else logging.WARNING


class _Trace(logging.Handler):
    """The arena's own warnings, stamped with the virtual time and the process they came from."""

    def __init__(self, loop: VirtualLoop, events: list[str]) -> None:
        super().__init__(LEVEL)
        self.loop, self.events = loop, events

    def emit(self, record: logging.LogRecord) -> None:
        whose = WHOSE.get() or "-"
        self.events.append(f"{self.loop.time():8.3f} {whose} {_timeless(record.getMessage())}")


def _timeless(message: str) -> str:
    """A fault line (metrics.fault: JSON) without its wall-clock stamp, which no seed fixes."""
    if message.startswith("{"):
        try:
            fields = json.loads(message)
        except ValueError:
            return message[:200]
        fields.pop("ts", None)
        return json.dumps(fields)[:200]
    return message[:200]


@contextmanager
def _traced(loop: VirtualLoop, events: list[str]) -> Iterator[None]:
    logger = logging.getLogger("turinglab")
    handler, level, propagate = _Trace(loop, events), logger.level, logger.propagate
    logger.addHandler(handler)
    logger.setLevel(LEVEL)
    logger.propagate = False  # the trace says it; nothing on the terminal
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
        logger.propagate = propagate


def schedule(
    seed: int,
    processes: int = 2,
    faults: frozenset[str] = FAULTS,
    people: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Play schedule `seed`: its plan, the promises it broke, its trace and digest. `people`
    sets the plan's behaviours off by default (`end_early_p`, `give_up_p`) after the draw, so
    the rest of the plan is the seed's own."""
    # The collector's first pass comes after the same allocations in every run, whatever ran
    # before: a pending task only garbage holds is destroyed (and logged) at the same step.
    # What survives (modules, caches) is frozen out of later passes, so each costs what this
    # schedule allocated, not the whole interpreter (a full pass was a fifth of a schedule).
    gc.collect()
    gc.freeze()
    loop = VirtualLoop()
    asyncio.set_event_loop(loop)
    unhandled: list[str] = []
    loop.set_exception_handler(lambda _, context: unhandled.append(_unhandled(loop, context)))
    try:
        with tempfile.TemporaryDirectory() as tmp, seeded(seed, loop) as rng:
            plan = Plan.draw(rng, processes, faults)
            if people:
                plan = dataclasses.replace(plan, **people)
            db = Path(tmp) / "arena.db"
            db.write_bytes(_empty_store())
            world = World(plan, rng, db, seed)
            with (
                fake_redis.serving(
                    world.redis, WHOSE.get, world.dead.__contains__, world.redis_faults
                ),
                _traced(loop, world.events),
            ):
                played = loop.run_until_complete(world.play())
            tally = played["tally"]
            audit = audit_store(world.url, played["run_id"], tally.acked)
            violations = check(
                world.url,
                played["run_id"],
                audit,
                tally,
                played["failures"],
                writes=played["writes"],
                grace_s=played["grace_s"],
                rounds=world.plan.rounds,
            )
            world.events.extend(
                f"  end: {outcome} x{n}" for outcome, n in sorted(tally.outcomes.items())
            )
            trace = world.events + unhandled
            digest = hashlib.sha256(repr((audit, violations, trace)).encode()).hexdigest()
            return {
                "seed": seed,
                "plan": dataclasses.asdict(plan),
                "violations": [v.as_dict() for v in violations],
                "games": audit["games"],
                "by_status": audit["by_status"],
                "messages_acknowledged": audit["acknowledged_messages"],
                "virtual_s": round(loop.time(), 3),
                "steps": loop.steps,
                "trace": trace,
                "digest": digest[:16],
            }
    finally:
        _wind_down(loop)


@functools.cache
def _empty_store() -> bytes:
    """A new store's file, made once an interpreter and copied for each schedule: creating the
    schema (its tables, alembic's stamp) was a twentieth of a schedule. Its processes open it
    as a store at head, as they would one another process had created."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "empty.db"
        Store(str(path)).engine.dispose()  # the last connection closed: the WAL is folded in
        return path.read_bytes()


def _unhandled(loop: VirtualLoop, context: dict[str, Any]) -> str:
    """An exception no task retrieved (a real process would log it): kept in the trace."""
    err = context.get("exception")
    what = f"{type(err).__name__}: {err}" if err is not None else context.get("message", "")
    return f"{loop.time():8.3f} {WHOSE.get() or '-'} unhandled: {what}"[:240]


def _wind_down(loop: VirtualLoop) -> None:
    """End whatever is still running (people's and processes' leftovers), then the loop."""
    left = [t for t in asyncio.all_tasks(loop) if not t.done()]
    for task in left:
        task.cancel()
    if left:
        loop.run_until_complete(asyncio.gather(*left, return_exceptions=True))
    loop.run_until_complete(loop.shutdown_asyncgens())
    asyncio.set_event_loop(None)
    loop.close()
