"""Redis paused: a person whose game is played on another process hears nothing from it (their
frames go through Redis), and the heartbeat that would notice hangs rather than fails. The
process holding their socket tells them within the 15 s rule that the connection to their
game is delayed, and again once it is back; the game then goes on.

A pause is no death: the heartbeats' TTL runs on Redis's clock, so Redis wakes with every
heartbeat expired, and no process may take a living one's games over for that.
"""

from __future__ import annotations

import asyncio
import signal
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import redis
import redis.asyncio as aioredis
from sqlalchemy import create_engine, text

from arena_fixtures import Person
from fault_fixtures import own_redis, own_redis_process, seat_pair, server_processes, tracebacks
from test_arena_faults import RESUMES, SERVER
from turinglab.arena.cluster.cluster_takeover import Takeover
from turinglab.store.database import store_url

TTL_S = 2.0  # the heartbeats' TTL in test_arena_faults.SERVER (takeover_after_s)

pytestmark = [pytest.mark.database, pytest.mark.slow]


async def _notice(person: Person, code: str, timeout: float) -> float:
    """Seconds until `person` is shown an error frame `code` (other frames passed over)."""
    start = time.monotonic()
    frame = await person.until("error", timeout=timeout, code=code)
    assert frame["message"]
    return time.monotonic() - start


async def test_people_relayed_from_elsewhere_are_told_when_redis_pauses(postgres_url: str) -> None:
    people: list[Person] = []
    with own_redis_process() as (redis_url, redis_proc):
        fmt = {"db": postgres_url, "redis": redis_url, "setup": RESUMES, "max_outage_s": 60}
        async with server_processes(SERVER, 2, **fmt) as servers:
            (one, _), (two, _) = servers
            try:
                waiter, taker = Person(two), Person(one)  # process 1 owns; the waiter is relayed
                people = [waiter, taker]
                for p in people:
                    assert (await p.connect())["type"] == "status"
                await seat_pair(waiter, taker, "three-party", [one, two], "r")
                redis_proc.send_signal(signal.SIGSTOP)
                try:
                    told_s = await _notice(waiter, "relay-delayed", 30)
                finally:
                    redis_proc.send_signal(signal.SIGCONT)
                assert told_s < 15.0, told_s
                await _notice(waiter, "relay-resumed", 30)
                # The owner's own person was never relayed: no such notice for them.
                assert not any(f.get("code") == "relay-delayed" for f in taker.frames)
            finally:
                for p in people:
                    await p.close()


def _forget_heartbeat(redis_url: str, base: str) -> None:
    """Delete the heartbeat of the process at `base` (its name starts with its port), if
    it has one: mostly it has expired, and the beats sent into the pause are lost."""
    client = redis.Redis.from_url(redis_url)
    try:
        port = base.rsplit(":", 1)[1]
        for key in client.scan_iter(f"turinglab:arena:faults:alive:{port}/*"):
            client.delete(key)
    finally:
        client.close()


def _claims(postgres_url: str) -> list[int]:
    """Each arena game's fencing token (owner_epoch): a takeover's claim bumps it."""
    engine = create_engine(store_url(postgres_url))
    try:
        with engine.connect() as conn:
            rows = conn.execute(text("SELECT owner_epoch, setup FROM games ORDER BY id")).all()
    finally:
        engine.dispose()
    return [int(epoch) for epoch, setup in rows if setup.get("arena_game")]


async def test_a_redis_pause_takes_no_living_process_s_games_over(
    postgres_url: str, tmp_path: Path
) -> None:
    """Redis paused well past the heartbeats' TTL; as it comes back, the game's owner is a
    moment late to beat again (stopped 1 s, as a loaded machine may hold it): the other
    process, back first, found its heartbeat expired and claimed its game (seen under load in
    the Chromium Redis-pause test, whose pages then had to follow a takeover of a living
    owner). It must judge nobody dead until a TTL after it is back itself: the owner keeps its
    game, which goes on."""
    logs = [tmp_path / "one.log", tmp_path / "two.log"]
    people: list[Person] = []
    with own_redis_process() as (redis_url, redis_proc):
        fmt = {"db": postgres_url, "redis": redis_url, "setup": RESUMES, "max_outage_s": 60}
        async with server_processes(SERVER, 2, logs=logs, **fmt) as servers:
            (one, proc_one), (two, _) = servers
            try:
                waiter, taker = Person(two), Person(one)  # process 1 owns the game
                people = [waiter, taker]
                for p in people:
                    assert (await p.connect())["type"] == "status"
                await seat_pair(waiter, taker, "three-party", [one, two], "c")
                assert _claims(postgres_url) == [0]
                redis_proc.send_signal(signal.SIGSTOP)
                try:  # told once both heartbeats are silent past the TTL
                    await _notice(waiter, "relay-delayed", 30)
                finally:
                    proc_one.send_signal(signal.SIGSTOP)
                    redis_proc.send_signal(signal.SIGCONT)
                # Redis wakes with the owner's heartbeat expired (one the owner sent into the
                # pause that got through now is taken back: they are mostly lost), and the
                # owner beats again 1 s later: under the TTL, no death.
                await asyncio.sleep(0.2)
                _forget_heartbeat(redis_url, one)
                await asyncio.sleep(0.8)
                proc_one.send_signal(signal.SIGCONT)
                await _notice(waiter, "relay-resumed", 30)  # process 2's heartbeat is back
                await asyncio.sleep(3 * TTL_S)  # past its TTL of judging nobody, and some ticks
                assert _claims(postgres_url) == [0]  # nobody claimed the game
                # And it goes on at its owner: the interrogator's next question is said there.
                games = {p: next(f for f in p.frames if f["type"] == "game") for p in people}
                judge = next(p for p, g in games.items() if g["role"] == "interrogator")
                channel = games[judge]["channels"][0]
                await judge.send(type="message", channel=channel, text="after the pause", id="q")
                said = await judge.until("message", ref="q")
                assert (said["sender"], said["text"]) == ("you", "after the pause")
            finally:
                for p in people:
                    await p.close()
        assert tracebacks(logs) == []


async def test_heartbeats_lapsed_with_this_process_s_own_are_no_deaths() -> None:
    """How a survivor judges a process lost (Takeover.lost_processes), on a Redis of its own:
    a heartbeat missing is a death only while this process's own heartbeat gets through, and
    not within a TTL of its coming back after a silence."""
    with own_redis() as url:
        client = aioredis.from_url(url, decode_responses=True)
        settings = SimpleNamespace(takeover_after_s=TTL_S)
        cluster: Any = SimpleNamespace(
            redis=client, ns="t:", me="here", beat_back=None,
            arena=SimpleNamespace(setup=SimpleNamespace(settings=settings)),
        )  # fmt: skip
        takeover = Takeover(cluster)
        try:
            await client.sadd("t:procs", "here", "there")
            await client.set("t:alive:here", "1")
            assert await takeover.lost_processes() == ["there"]  # its heartbeat gone, ours not
            cluster.beat_back = time.monotonic()  # ours went through again after a silence
            assert await takeover.lost_processes() == []  # theirs lapsed in it too
            cluster.beat_back = time.monotonic() - TTL_S  # a TTL later, still missing: dead
            assert await takeover.lost_processes() == ["there"]
            await client.delete("t:alive:here")  # ours lapsed as well: Redis was silent to us
            assert await takeover.lost_processes() == []
            await client.set("t:alive:there", "1")
            await client.set("t:alive:here", "1")
            assert await takeover.lost_processes() == []  # both alive
        finally:
            await client.aclose()
