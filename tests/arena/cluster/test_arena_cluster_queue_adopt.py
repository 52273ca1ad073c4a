"""Open matching across two real server processes (queue_adopt.py): people queued on a process
that is SIGKILLed reconnect to the other, as the page does, without joining again; they are
told they still wait, and are matched or sent on (no-match at `max_wait_s`) there, once."""

from __future__ import annotations

import asyncio
import json
import signal
import time
from collections.abc import Awaitable, Callable

import pytest
import redis.asyncio as aioredis
from yarl import URL

from arena_fixtures import Person
from test_arena_multiprocess import arena_processes

SERVER = """
import sys
sys.path.insert(0, {tests!r})
from arena_fixtures import serve_on_fd
from arena_fixtures import ADMIN_PASSWORD, make_setup
from turinglab.arena import create_app
setup = make_setup(takeover_after_s=1.0, max_wait_s=6.0, ai_after_s=60.0)
app = create_app(
    setup, admin_password=ADMIN_PASSWORD,
    redis_url="redis://127.0.0.1:6379/0", secret="shared test secret", namespace={ns!r},
)
serve_on_fd(app, {fd})
"""


async def until_redis(check: Callable[[aioredis.Redis], Awaitable[bool]], failed: str) -> None:
    """Until `check` (on the test's own Redis client) holds, for up to 5 s."""
    client = aioredis.Redis.from_url("redis://127.0.0.1:6379/0")
    try:
        for _ in range(100):
            if await check(client):
                return
            await asyncio.sleep(0.05)
        raise AssertionError(failed)
    finally:
        await client.aclose()


async def heartbeats(ns: str, n: int) -> None:
    """Until `n` processes of the arena have a live heartbeat."""

    async def alive(client: aioredis.Redis) -> bool:
        return len(await client.keys(f"turinglab:arena:{ns}:alive:*")) == n

    await until_redis(alive, "the killed process's heartbeat did not expire")


@pytest.mark.server
async def test_people_queued_on_a_killed_process_are_queued_by_the_other() -> None:
    async with arena_processes(SERVER, "") as arena:
        a, c = Person(arena.bases[0]), Person(arena.bases[0])  # alone in their modes, on P0
        b = Person(arena.bases[1])
        people = [a, b, c]
        try:
            for p in people:
                await p.connect()
            joined = time.monotonic()
            for p, mode in ((a, "two-party"), (c, "three-party")):
                await p.send(type="join", mode=mode, consent=True)
                assert (await p.until("status"))["state"] == "waiting"
            arena.procs[0].send_signal(signal.SIGKILL)
            arena.procs[0].wait(10)
            for p in (a, c):
                await p.drop()
                p.base = arena.bases[1]  # the same session cookie, on the survivor
                first = await p.connect()
                assert first["type"] == "status" and first["state"] == "waiting", first
            await heartbeats(arena.ns, 1)
            await asyncio.sleep(0.5)  # a tick of the survivor
            await b.send(type="join", mode="two-party", consent=True)
            ga, gb = await a.until("game", timeout=10), await b.until("game", timeout=10)
            assert ga["game"] == gb["game"]
            told = await c.until_any(("game", "status"), timeout=10)
            while told["type"] == "status" and told["state"] == "waiting":  # again, adopted
                told = await c.until_any(("game", "status"), timeout=10)
            assert told["type"] == "status" and told["state"] == "no-match", told
            assert 5.9 <= time.monotonic() - joined < 6.0 + 4.0  # from when they first queued
            for p in people:  # nobody is seated again meanwhile
                with pytest.raises(TimeoutError):
                    await p.until("game", timeout=0.5)
        finally:
            for p in people:
                await p.close()


def _pid(person: Person) -> str:
    """A person's participant id: the session cookie is "<id>.<signature>"."""
    cookie = person.http.cookie_jar.filter_cookies(URL(person.base))["turinglab_session"]
    return cookie.value.split(".")[0]


@pytest.mark.server
async def test_a_person_who_leaves_on_another_process_is_not_seated_by_the_first() -> None:
    """Queued on P0, reconnected to P1 (a dropped connection), they go back to the lobby
    there: P0 must not pair them with the next arrival (nor a process adopt them later). The
    closed connection already took them out of the queue (cluster.py, `leave_queues`); a
    leave sent on P1 is answered there all the same."""
    async with arena_processes(SERVER, "") as arena:
        a, b = Person(arena.bases[0]), Person(arena.bases[0])
        try:
            for p in (a, b):
                await p.connect()
            await a.send(type="join", mode="two-party", consent=True)
            assert (await a.until("status"))["state"] == "waiting"
            await a.drop()
            a.base = arena.bases[1]
            # Out of the queue once P0 has the close; P1 may answer before that.
            assert (await a.connect())["state"] in ("idle", "waiting")
            await a.send(type="leave")
            assert (await a.until("status"))["state"] == "idle"
            await b.send(type="join", mode="two-party", consent=True)
            assert (await b.until("status"))["state"] == "waiting"  # nobody to meet
            for p in (a, b):
                with pytest.raises(TimeoutError):
                    await p.until("game", timeout=1.0)
            client = aioredis.Redis.from_url("redis://127.0.0.1:6379/0", decode_responses=True)
            try:
                queue = await client.lrange(f"turinglab:arena:{arena.ns}:queue:two-party", 0, -1)
            finally:
                await client.aclose()
            assert [entry.split("|")[0] for entry in queue] == [_pid(b)]  # b alone
        finally:
            for p in (a, b):
                await p.close()


@pytest.mark.server
async def test_a_person_queued_behind_a_stale_route_is_queued_by_the_other() -> None:
    """Queued on P0, with the route of their last game there never deleted (P0 died with the
    delete unsent): the survivor asks P0 for their game, finds it gone, and queues them —
    they wait on, and meet the next arrival, instead of being shown the lobby."""
    async with arena_processes(SERVER, "") as arena:
        a, b = Person(arena.bases[0]), Person(arena.bases[1])
        try:
            for p in (a, b):
                await p.connect()
            await a.send(type="join", mode="two-party", consent=True)
            assert (await a.until("status"))["state"] == "waiting"
            client = aioredis.Redis.from_url("redis://127.0.0.1:6379/0", decode_responses=True)
            try:
                queued = await client.get(f"turinglab:arena:{arena.ns}:queued:{_pid(a)}")
                p0 = str(queued).split("|")[0]
                stale = json.dumps({"game": "g-ended-there", "owner": p0})
                await client.set(f"turinglab:arena:{arena.ns}:player:{_pid(a)}", stale)
            finally:
                await client.aclose()
            arena.procs[0].send_signal(signal.SIGKILL)
            arena.procs[0].wait(10)
            await a.drop()
            a.base = arena.bases[1]
            first = await a.connect()  # answered once P0 is known gone
            told = first if first["type"] == "status" else await a.until("status", timeout=15)
            assert told["state"] == "waiting", a.frames
            await b.send(type="join", mode="two-party", consent=True)
            ga, gb = await a.until("game", timeout=10), await b.until("game", timeout=10)
            assert ga["game"] == gb["game"]
        finally:
            for p in (a, b):
                await p.close()
