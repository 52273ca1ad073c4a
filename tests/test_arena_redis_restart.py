"""Redis restarted empty under two arena processes: no game freezes, nothing is lost.

Two `turinglab serve`-style processes share PostgreSQL and a Redis of this test's own; people
on one process play games owned by the other (every frame between them crosses Redis). Redis is
killed mid-game and started again 5 s later with nothing in it (no persistence). `/healthz`
says which service is down while it is, the listeners reconnect and register again, the people
on the other process get fresh snapshots, and every game goes on (before the supervised
listener, games froze for good); the store, read in plain SQL, holds every message anyone was
shown, once, in order. Not yet: a message a person sent while Redis was down can be lost
between the processes (no frame resume or idempotent re-send yet), and that game then waits
on it; in the run that wrote this, 2 of the 4 games did.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from typing import Any

import aiohttp
import pytest
import redis

from arena_fixtures import Person, free_port
from fault_fixtures import Talker, audit, seat_pair, server_processes, shown_is_stored
from test_arena_faults import CHAT, SERVER, _each_progresses, _until

pytestmark = [pytest.mark.database, pytest.mark.slow]


class RestartableRedis:
    """A redis-server on a fixed free port that the test can kill and start again, empty."""

    def __init__(self) -> None:
        exe = shutil.which("redis-server")
        if exe is None:
            pytest.fail("redis-server is not installed (apt-get install redis-server)")
        self.exe, self.port = exe, free_port()
        self.workdir = tempfile.mkdtemp(prefix="turinglab-redis-")
        self.proc: subprocess.Popen[bytes] | None = None
        self.url = f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [
                *(self.exe, "--port", str(self.port), "--save", "", "--appendonly", "no"),
                *("--dir", self.workdir),
            ],
            stdout=subprocess.DEVNULL,
        )
        client = redis.Redis(port=self.port)
        try:
            for _ in range(400):
                with contextlib.suppress(redis.ConnectionError):
                    if client.ping():
                        return
                assert self.proc.poll() is None, "redis-server died"
                subprocess.run(["sleep", "0.05"], check=True)
            raise AssertionError("redis-server did not start")
        finally:
            client.close()

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.kill()
        self.proc.wait(10)

    def keys(self) -> int:
        client = redis.Redis(port=self.port)
        try:
            return int(client.dbsize())
        finally:
            client.close()


@contextlib.contextmanager
def restartable_redis() -> Iterator[RestartableRedis]:
    server = RestartableRedis()
    server.start()
    try:
        yield server
    finally:
        if server.proc is not None and server.proc.poll() is None:
            server.kill()
        shutil.rmtree(server.workdir, ignore_errors=True)


async def _health(base: str) -> tuple[int, dict[str, Any]]:
    async with aiohttp.ClientSession() as http, http.get(base + "/healthz") as r:
        return r.status, await r.json()


async def _until_health(bases: list[str], status: int, timeout: float) -> list[dict[str, Any]]:
    for _ in range(int(timeout / 0.1)):
        found = [await _health(b) for b in bases]
        if all(code == status for code, _ in found):
            return [body for _, body in found]
        await asyncio.sleep(0.1)
    raise AssertionError(f"/healthz never answered {status} on every process: {found}")


async def test_redis_restarted_empty_freezes_no_game_and_loses_nothing(postgres_url: str) -> None:
    people: list[Person] = []
    with restartable_redis() as rds:
        fmt = {"db": postgres_url, "redis": rds.url, "setup": CHAT, "max_outage_s": 60}
        async with server_processes(SERVER, 2, **fmt) as servers:
            (one, _), (two, _) = servers
            try:
                talkers: list[Talker] = []
                for g in range(4):
                    # the waiter on process 2, the taker (whose process owns the game) on 1
                    waiter, taker = Person(two), Person(one)
                    people += [waiter, taker]
                    for p in (waiter, taker):
                        assert (await p.connect())["type"] == "status"
                    talkers += await seat_pair(waiter, taker, "three-party", [one, two], f"g{g}")
                healthy = await _until_health([one, two], 200, 30)
                assert all(h["store"] and h["redis"] and h["listener"] for h in healthy)
                tasks = [asyncio.create_task(t.run()) for t in talkers]
                await _each_progresses(talkers)

                rds.kill()
                down = await _until_health([one, two], 503, 30)
                assert all(not h["redis"] and h["store"] for h in down)
                await asyncio.sleep(5.0)
                rds.start()  # empty: no process list, no heartbeats, no routes
                await _until_health([one, two], 200, 60)
                await _until(lambda: rds.keys() > 0, 30, "the processes to register again")

                await _each_progresses(talkers, timeout=90)  # no game froze
                for t in talkers:
                    t.decide.set()
                # Known gap (issue 15, part 3): without frame resume and idempotent inputs, a
                # person's message sent while Redis was down can be lost between processes, and
                # that game then waits on it; so the ends are awaited, not asserted.
                _done, pending = await asyncio.wait(tasks, timeout=60)
                for task in pending:
                    task.cancel()
            finally:
                for p in people:
                    await p.close()

    stored = audit(postgres_url)
    assert len(stored) == 4
    for t in talkers:  # nothing anyone was shown is missing, duplicated or out of order
        game = stored[t.game]
        assert game.seqs == list(range(len(game.seqs)))
        shown_is_stored(t, game)
