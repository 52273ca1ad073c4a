"""A person queued on a process that dies leaves the queue with it (PostgreSQL + Redis).

Two server processes. A person waits for a match on process 1, which is then SIGKILLed (its
people's sockets die with it). Once its heartbeat has expired, the next person to join on
process 2 is not matched with the person who is no longer there: they wait for someone else,
and are matched with the next person who really joins.
"""

from __future__ import annotations

import asyncio
import signal

import pytest
import redis

from arena_fixtures import Person
from test_arena_multiprocess import arena_processes
from test_arena_takeover import SERVER

pytestmark = [pytest.mark.database, pytest.mark.slow]


async def _heartbeats(ns: str) -> int:
    client = redis.Redis.from_url("redis://127.0.0.1:6379/0")
    try:
        return len(client.keys(f"turinglab:arena:{ns}:alive:*"))
    finally:
        client.close()


async def test_a_person_queued_on_a_dead_process_is_not_matched(postgres_url: str) -> None:
    async with arena_processes(SERVER, postgres_url) as arena:
        one, two = arena.bases
        gone, late, next_one = Person(one), Person(two), Person(two)
        try:
            for p in (gone, late, next_one):
                assert (await p.connect())["type"] == "status"
            await gone.send(type="join", mode="chat", consent=True)
            assert (await gone.until("status"))["state"] == "waiting"
            arena.procs[0].send_signal(signal.SIGKILL)
            arena.procs[0].wait(10)
            for _ in range(600):  # its heartbeat expires (takeover_after_s)
                if await _heartbeats(arena.ns) == 1:
                    break
                await asyncio.sleep(0.05)
            assert await _heartbeats(arena.ns) == 1

            await late.send(type="join", mode="chat", consent=True)
            first = await late.until_any(("status", "game"))
            assert first["type"] == "status" and first["state"] == "waiting"
            await next_one.send(type="join", mode="chat", consent=True)
            games = [await p.until("game") for p in (late, next_one)]
            assert games[0]["game"] == games[1]["game"]  # the two who are here
        finally:
            for p in (gone, late, next_one):
                await p.close()
