"""Redis restarted empty under two arena processes: they say so, reconnect and register again.

Two `turinglab serve`-style processes share PostgreSQL and a Redis of this test's own, which
is killed and started again 5 s later with nothing in it (no persistence). While it is down,
`/healthz` answers 503 naming Redis (the store still answers); once it is back, each process's
listener has reconnected and the process is listed and alive again, so takeover works again.

Games played across the two processes through the restart (people on both processes, games
owned by each) all go on and finish: a frame relayed while Redis was down is fetched from its
game's owner once Redis is back (cluster.py, catch-up by resume), and an input forwarded then
is sent again by the participant until answered and applied once (fault_fixtures.Talker, as the
page does). Everything each person was shown is stored, in order, once.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import redis
from sqlalchemy import select

from arena_fixtures import Person
from fault_fixtures import (
    Talker,
    audit,
    seat_pair,
    server_processes,
    shown_is_stored,
    tracebacks,
)
from test_arena_faults import CHAT, SERVER, _until
from test_arena_resume import AUTH, metric_values
from turinglab.bench.arena_services import free_port
from turinglab.store.database import PLAYING, Store
from turinglab.store.schema import games

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
    postgres_url: str, tmp_path: Path
) -> None:
    logs = [tmp_path / "one.log", tmp_path / "two.log"]
    with restartable_redis() as rds:
        fmt = {"db": postgres_url, "redis": rds.url, "setup": CHAT, "max_outage_s": 60}
        async with server_processes(SERVER, 2, logs=logs, **fmt) as servers:
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
    # An expected fault: said in a line (which service, what it does), never a traceback.
    assert tracebacks(logs) == []
    said = "".join(path.read_text() for path in logs)
    assert "redis-beat-failing" in said, said


def _registered(rds: RestartableRedis) -> dict[str, set[str]]:
    client = redis.Redis(port=rds.port, decode_responses=True)
    try:
        procs = {str(p) for key in client.keys("*:procs") for p in client.smembers(key)}
        alive = {str(k).rsplit("alive:", 1)[1] for k in client.keys("*:alive:*")}
        return {"procs": procs, "alive": alive}
    finally:
        client.close()


GAMES = 4  # half owned by each process, each with one person on each process


async def test_games_across_two_processes_go_on_through_a_redis_restart(
    postgres_url: str, tmp_path: Path
) -> None:
    logs = [tmp_path / "one.log", tmp_path / "two.log"]
    with restartable_redis() as rds:
        fmt = {"db": postgres_url, "redis": rds.url, "setup": CHAT, "max_outage_s": 60}
        async with server_processes(SERVER, 2, logs=logs, **fmt) as servers:
            bases = [base for base, _ in servers]
            talkers: list[Talker] = []
            for g in range(GAMES):
                here, there = bases[g % 2], bases[1 - g % 2]
                waiter, taker = Person(here), Person(there)
                for p in (waiter, taker):
                    assert (await p.connect())["type"] == "status"
                pair = await seat_pair(waiter, taker, "three-party", [here, there], f"g{g}")
                for t in pair:
                    t.pace_s = 0.1
                talkers += pair
            tasks = [asyncio.create_task(t.run()) for t in talkers]
            try:
                await _each_progresses(talkers, 60)
                rds.kill()
                await _until_health(bases, 503, 30)
                await asyncio.sleep(5.0)  # the outage itself; people keep writing
                rds.start()
                await _until_health(bases, 200, 60)
                for _ in range(3):  # every game goes on, several messages more
                    await _each_progresses(talkers, 90)
                for t in talkers:
                    t.decide.set()
                await asyncio.wait_for(asyncio.gather(*tasks), 120)
                # What an operator scrapes says so: each process reconnected to Redis and
                # asked owners for what it missed; frames were relayed between them.
                for base in bases:
                    values = await _metrics(base)
                    assert values["turinglab_arena_redis_reconnects_total"] >= 1
                    assert values["turinglab_arena_catchups_total"] >= 1
                    assert values["turinglab_arena_relay_latency_seconds_count"] > 0
            finally:
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
                for t in talkers:
                    await t.person.close()

    stored = audit(postgres_url)
    for t in talkers:
        game = stored[t.game]
        assert game.status == "finished" and not game.flags, (t.name, game.status, game.flags)
        shown_is_stored(t, game, all_of_it=True)
    assert tracebacks(logs) == []  # a restart mid-game is expected: lines, no tracebacks
    caught = sum(t.resent for t in talkers), sum(t.duplicates for t in talkers)
    print(f"inputs re-sent {caught[0]}, duplicate frames dropped {caught[1]}")


async def _each_progresses(talkers: list[Talker], timeout: float) -> None:
    judges = [t for t in talkers if t.role == "interrogator"]
    before = [len(t.seen) for t in judges]
    await _until(
        lambda: all(len(t.seen) > n for t, n in zip(judges, before, strict=True)),
        timeout,
        "every game to go on",
    )


async def _metrics(base: str) -> dict[str, float]:
    async with aiohttp.ClientSession(headers=AUTH) as http, http.get(base + "/metrics") as r:
        assert r.status == 200
        return metric_values(await r.text())


LATE_S = 2.5  # how late the marked process beats again after the restart (< HOLDER_GONE_S)
LATE_SERVER = SERVER.replace(
    "setup = {setup}",
    """
import asyncio, os
from turinglab.arena.cluster.cluster import Cluster
_beat = Cluster._beat
async def _late_beat(self, force=False):
    if self._registered and os.path.exists({marker!r} + "-" + str({port!r})):
        if not await self.redis.exists(self.ns + "alive:" + self.me):  # Redis came back empty
            await asyncio.sleep(LATE_S)
    await _beat(self, force)
Cluster._beat = _late_beat
setup = {setup}""".replace("LATE_S", repr(LATE_S)),
)


async def test_a_silent_person_on_another_process_is_not_counted_gone_after_a_restart(
    postgres_url: str, tmp_path: Path
) -> None:
    """After Redis restarts empty, every heartbeat is missing until its process beats again.
    The owner of a game must not take that for the death of the process holding a person's
    socket: that person, silent (reading, thinking), would count as gone after the grace and
    the game end as abandoned. Here the holder beats again LATE_S late, and the grace is
    shorter than that (its catch-up, once it beats, would tell the owner it holds the socket);
    the person stays silent; the game goes on."""
    grace_s = 1.0
    marker = str(tmp_path / "late")
    with restartable_redis() as rds:
        fmt = {
            "db": postgres_url,
            "redis": rds.url,
            "setup": f"make_setup(ai_after_s=600, abandon_after_s={grace_s})",
            "max_outage_s": 60,
            "marker": marker,
        }
        async with server_processes(LATE_SERVER, 2, **fmt) as servers:
            bases = [base for base, _ in servers]
            waiter, taker = Person(bases[1]), Person(bases[0])
            try:
                for p in (waiter, taker):
                    assert (await p.connect())["type"] == "status"
                await seat_pair(waiter, taker, "three-party", bases, "g")
                # The person whose socket is not on the game's owner is the one at risk.
                owner = _owner_port(postgres_url)
                holder = next(b for b in bases if not b.endswith(f":{owner}"))
                Path(f"{marker}-{holder.rsplit(':', 1)[1]}").touch()
                rds.kill()
                await _until_health(bases, 503, 30)
                await asyncio.sleep(2.0)
                rds.start()
                await _until_health(bases, 200, 60)
                # Nobody writes; both read whatever comes meanwhile.
                watch = LATE_S + grace_s + 3.0
                seen = await asyncio.gather(*(p.frames_within(watch) for p in (waiter, taker)))
                ended = [f for frames in seen for f in frames if f["type"] == "reveal"]
                assert not ended, f"a silent person was counted gone after the restart: {ended}"
                # Read before anyone closes: closing starts a grace that could end it.
                game = next(iter(audit(postgres_url).values()))
                assert game.status == "playing", (game.status, game.flags)
            finally:
                for p in (waiter, taker):
                    await p.close()


def _owner_port(url: str) -> int:
    """The port of the process playing the one live game (its row's worker)."""
    store = Store(url)
    try:
        with store.engine.connect() as conn:
            playing = select(games.c.worker).where(games.c.status == PLAYING)
            (worker,) = [str(w) for (w,) in conn.execute(playing)]
    finally:
        store.close()
    return int(worker.split("/", 1)[0])
