"""What commit-before-show costs in a state-frame mode (live-ITT practice; STT and GTT share
its path): per exchange, the time from a person's send to the state frame that shows their
question (echo) and to the one that shows both answers (answered), with no store, a SQLite
store and a PostgreSQL store (20 ms group commits). One server in a thread, one person over a
real websocket, scripted answers with no delay; 3 sessions x 20 exchanges per configuration.

    PYTHONPATH=src TESTS=tests python benchmarks/state_modes_commit.py [none|sqlite|postgres ...]
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
import time
import uuid
from typing import Any

sys.path.insert(0, os.environ.get("TESTS", "tests"))
import psycopg

from arena_fixtures import Person, running_arena
from turinglab.agents.scripted import ScriptedAgent
from turinglab.arena import ArenaSettings, ArenaSetup
from turinglab.arena.modes.live_itt_mode import live_itt_mode
from turinglab.arena.core.store_bridge import ArenaStore
from turinglab.games.live_itt import LiveITTExperiment
from turinglab.store.database import Store

N = 20
PG = os.environ.get("TURINGLAB_TEST_PG", "postgresql://postgres@127.0.0.1:5432/test")


def setup() -> ArenaSetup:
    cfg = LiveITTExperiment.model_validate(
        {"game": "live-itt", "ai_agents": ["ai"], "stand_ins": ["si"], "exchange_limits": [N]}
    )
    agents: dict[str, Any] = {
        "ai": ScriptedAgent("ai", ["pasta"], cycle=True),
        "si": ScriptedAgent("si", ["toast"], cycle=True),
    }
    settings = ArenaSettings(frames_per_s=1000, frame_burst=1000)  # no flood limit here
    return ArenaSetup([live_itt_mode("p", "P", cfg, solo=True)], agents, {}, settings)


async def until(p: Person, test: Any) -> dict[str, Any]:
    while True:
        frame = await p.until("strong", timeout=30)
        if test(frame):
            return frame


async def session(base: str) -> tuple[list[float], list[float]]:
    p = Person(base)
    await p.connect()
    await p.send(type="join", mode="p", consent=True)
    await until(p, lambda s: s["phase"] == "asking")
    echo, answered = [], []
    for n in range(1, N + 1):
        q = f"q{n}?"
        t0 = time.perf_counter()
        await p.send(type="message", channel="A", text=q)
        await until(p, lambda s, q=q: s["history"] and s["history"][-1]["question"] == q)
        echo.append(time.perf_counter() - t0)
        await until(
            p, lambda s, q=q: s["history"][-1]["question"] == q and s["history"][-1]["replies"]
        )
        answered.append(time.perf_counter() - t0)
    await p.close()
    return echo, answered


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return round(1000 * xs[min(len(xs) - 1, int(q * len(xs)))], 2)


async def run(kind: str) -> dict[str, Any]:
    s = setup()
    store = None
    if kind == "sqlite":
        store = ArenaStore(Store(tempfile.mktemp(suffix=".db")), s)
    elif kind == "postgres":
        name = f"turinglab_bench_{uuid.uuid4().hex[:8]}"
        with psycopg.connect(PG, autocommit=True) as c:
            c.execute(f'CREATE DATABASE "{name}"')
        store = ArenaStore(Store(PG.rsplit("/", 1)[0] + "/" + name), s)
    echo: list[float] = []
    answered: list[float] = []
    with running_arena(s, **({"store": store} if store else {})) as (base, _app):
        for _ in range(3):
            e, a = await session(base)
            echo += e
            answered += a
    if store is not None:
        store.close()
    return {
        "store": kind,
        "samples": len(echo),
        "echo_p50_ms": pct(echo, 0.5),
        "echo_p90_ms": pct(echo, 0.9),
        "answered_p50_ms": pct(answered, 0.5),
        "answered_p90_ms": pct(answered, 0.9),
    }


async def main() -> None:
    for kind in sys.argv[1:] or ["none", "sqlite", "postgres"]:
        print(json.dumps(await run(kind)), flush=True)


if __name__ == "__main__":
    asyncio.run(main())
