"""A pair counted by a process that died before it seated them is not a round played.

Two server processes (PostgreSQL + Redis). A waits for the chat mode on process 2. B joins on
process 1, whose matching script pairs B with A — counting a round for each and recording that
they met — and then process 1 dies before it seats them (SIGKILLed inside `_seat`). Process 2
re-queues A (taken, never seated) and adopts B when B's page reconnects to it. Their books are
set back to the store's record (no game): each has one round counted afterwards, the game they
then play together, not two; without that, they could never meet (the met-set said they had),
and the phantom round could be the one that tells someone their study is done.

And before anyone is told their study is done, the count is checked against the store: a book
in Redis that counts every round while the store has none shows the lobby, not the end.

Counting who was taken from the queue (after a process is lost) skips anyone queued while the
queues were being read, and whether a taken person plays is read from their route and its
owner's heartbeat, not from a cached owner (found in a three-process fault run: someone queued
again at the takeover was counted as taken, then dropped for a stale owner, left waiting).
"""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio as aioredis

from arena_fixtures import Person, make_setup
from test_arena_cluster_queue_adopt import _pid
from test_arena_multiprocess import alive_namespace, arena_processes
from test_arena_takeover import SERVER
from turinglab.arena.cluster import cluster_presence
from turinglab.arena.cluster.cluster import Cluster
from turinglab.arena.cluster.cluster_presence import HOLDER_GONE_S

pytestmark = [pytest.mark.database, pytest.mark.slow]

DYING_SERVER = SERVER.replace(
    "setup = takeover_setup()",
    """
import os, signal
from turinglab.arena.cluster.cluster import Cluster
_seat = Cluster._seat
async def _seat_or_die(self, mode, people):
    if os.path.exists({marker!r} + "-" + str({port!r})):  # dies between pairing and seating
        os.kill(os.getpid(), signal.SIGKILL)
    await _seat(self, mode, people)
Cluster._seat = _seat_or_die
setup = takeover_setup()""",
)


async def _rounds(ns: str, pid: str) -> int:
    client = aioredis.Redis.from_url("redis://127.0.0.1:6379/0", decode_responses=True)
    try:
        (key,) = await client.keys(f"turinglab:arena:{ns}:book:*:{pid}")
        i, w = await client.hmget(key, ["i", "w"])
        return int(i or 0) + int(w or 0)
    finally:
        await client.aclose()


async def test_a_pair_whose_process_died_before_seating_them_is_not_counted(
    postgres_url: str, tmp_path: Path
) -> None:
    marker = str(tmp_path / "die")
    server = DYING_SERVER.replace("{marker!r}", repr(marker))
    async with arena_processes(server, postgres_url) as arena:
        one, two = arena.bases
        a, b = Person(two), Person(one)
        try:
            for p in (a, b):
                assert (await p.connect())["type"] == "status"
            await a.send(type="join", mode="chat", consent=True)
            assert (await a.until("status"))["state"] == "waiting"
            Path(f"{marker}-{arena.ports[0]}").touch()  # process 1 dies as it seats a pair
            await b.send(type="join", mode="chat", consent=True)
            arena.procs[0].wait(10)
            assert arena.procs[0].returncode == -signal.SIGKILL
            assert await _rounds(arena.ns, _pid(b)) == 1  # counted by the dead process

            await b.drop()
            b.base = two  # the page reconnects to the process that is left
            await b.connect()
            try:
                gb = await b.until("game", timeout=15)
            except TimeoutError:
                raise AssertionError(f"B: {b.frames}") from None
            ga = await a.until("game", timeout=15)
            assert ga["game"] == gb["game"]  # they meet: they never had
            for p in (a, b):
                assert await _rounds(arena.ns, _pid(p)) == 1  # the game they play, only
        finally:
            for p in (a, b):
                await p.close()


async def test_no_one_is_told_their_study_is_done_for_rounds_the_store_lacks(
    postgres_url: str,
) -> None:
    async with arena_processes(SERVER, postgres_url, n=1) as arena:
        person = Person(arena.bases[0])
        try:
            assert (await person.connect())["type"] == "status"
            client = aioredis.Redis.from_url("redis://127.0.0.1:6379/0", decode_responses=True)
            try:  # every round counted, none stored (a dying process's pairs, say)
                (key,) = await client.keys(f"turinglab:arena:{arena.ns}:book:*:{_pid(person)}")
                await client.hset(key, mapping={"i": 4, "w": 4})
            finally:
                await client.aclose()
            await person.drop()
            lobby = await person.connect()
            assert lobby["state"] == "idle" and lobby["rounds"]["played"] == 0, lobby
            assert await _rounds(arena.ns, _pid(person)) == 0
        finally:
            await person.close()


async def test_who_was_queued_while_the_queues_were_read_is_not_counted_as_taken(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async with alive_namespace("P1") as (client, prefix):
        cluster = Cluster(make_setup(), "unused", prefix.split(":")[2])
        cluster.redis = client
        cluster.waiting["early"] = ("chat", 0.0)  # taken meanwhile: in no queue
        pipeline = client.pipeline

        def answered_late(**kw: Any) -> Any:
            pipe = pipeline(**kw)
            execute = pipe.execute

            async def meanwhile() -> Any:
                read = await execute()
                cluster.waiting["late"] = ("chat", 1.0)  # queued here as Redis answered
                return read

            pipe.execute = meanwhile
            return pipe

        monkeypatch.setattr(client, "pipeline", answered_late)
        await cluster.count_taken_away()
        assert cluster.waiting == {"late": ("chat", 1.0)} and list(cluster._taken) == ["early"]

        cluster.owners["early"] = "P1"  # cached from their last game: says nothing now
        assert not await cluster._in_live_game("early")
        route = json.dumps({"game": "g-1", "owner": "P1"})
        await client.set(f"{prefix}player:early", route)
        assert await cluster._in_live_game("early")  # seated by a living process
        await client.delete(f"{prefix}alive:P1")
        assert not await cluster._in_live_game("early")  # ... that has died


async def test_sockets_held_on_a_dead_process_are_forgotten_by_every_survivor(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With three processes only the one that claims a dead process's games unlists it; the
    others forget its sockets from its heartbeat, or their players whose socket it held would
    count as present for ever (a partner told of a departure after 189 s, in a fault run).
    A heartbeat missing for a moment is Redis restarted empty, not a death: forgetting then
    would count every player whose socket is on another process as gone."""
    now = [100.0]
    monkeypatch.setattr(cluster_presence, "monotonic", lambda: now[0])
    async with alive_namespace("P1") as (client, prefix):
        cluster = Cluster(make_setup(), "unused", prefix.split(":")[2])
        cluster.redis = client
        held = {"a": {"P1", "P2"}, "b": {"P2"}, "c": {"P1", "P3"}}  # P2: dead, unlisted
        cluster.holders = {pid: set(procs) for pid, procs in held.items()}
        await cluster._forget_dead_holders()
        assert cluster.holders == held, "a heartbeat missing once was taken for a death"
        now[0] += HOLDER_GONE_S / 2
        await client.set(f"{prefix}alive:P3", "1")  # P3 beats again (Redis was restarted)
        await cluster._forget_dead_holders()
        now[0] += HOLDER_GONE_S / 2
        await cluster._forget_dead_holders()
        assert cluster.holders == {"a": {"P1"}, "b": set(), "c": {"P1", "P3"}}
