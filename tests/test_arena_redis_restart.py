"""Redis restarted empty under two arena processes: they say so, reconnect and register again.

Two `turinglab serve`-style processes share PostgreSQL and a Redis of this test's own, which
is killed and started again 5 s later with nothing in it (no persistence). While it is down,
`/healthz` answers 503 naming Redis (the store still answers); once it is back, each process's
listener has reconnected and the process is listed and alive again, so takeover works again.

Not asserted here, because it does not hold yet: games played across the two processes through
the restart. In trial runs with people on one process and their game on the other, the games
went on after the restart in most runs, but a message sent while Redis was down could be lost
between the processes (no frame resume or idempotent re-send yet), and such a game then waited
on it (2 of 4 games in one run).
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

from arena_fixtures import free_port
from fault_fixtures import server_processes
from test_arena_faults import CHAT, SERVER, _until

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


async def test_redis_restarted_empty_the_processes_say_so_and_register_again(
    postgres_url: str,
) -> None:
    with restartable_redis() as rds:
        fmt = {"db": postgres_url, "redis": rds.url, "setup": CHAT, "max_outage_s": 60}
        async with server_processes(SERVER, 2, **fmt) as servers:
            bases = [base for base, _ in servers]
            healthy = await _until_health(bases, 200, 30)
            assert all(h["store"] and h["redis"] and h["listener"] for h in healthy)
            registered = _registered(rds)
            assert len(registered["procs"]) == 2 and len(registered["alive"]) == 2

            rds.kill()
            down = await _until_health(bases, 503, 30)  # and it says which service is down
            assert all(h["store"] and not h["redis"] for h in down)
            await asyncio.sleep(5.0)
            rds.start()  # empty: no process list, no heartbeats
            back = await _until_health(bases, 200, 60)
            assert all(h["redis"] and h["listener"] for h in back)
            await _until(lambda: _registered(rds) == registered, 30, "both to register again")


def _registered(rds: RestartableRedis) -> dict[str, set[str]]:
    client = redis.Redis(port=rds.port, decode_responses=True)
    try:
        procs = {str(p) for key in client.keys("*:procs") for p in client.smembers(key)}
        alive = {str(k).rsplit("alive:", 1)[1] for k in client.keys("*:alive:*")}
        return {"procs": procs, "alive": alive}
    finally:
        client.close()
