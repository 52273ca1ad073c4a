"""A person whose route Redis has lost is found through the store, not shown the lobby.

Two server processes (PostgreSQL + Redis). Two people play a game on process 1; the route
that says where one of them plays (`player:<id>`) is deleted, as a Redis restart or a lost
command can. That person's page reconnects to process 2, which asks the store where they play
and shows them their game, relayed from its owner. Before, process 2 showed them the idle
lobby while their game went on: their page took the game for over, they joined again, and
could be seated in a second game while the first still counted them in.
"""

from __future__ import annotations

import pytest
import redis.asyncio as aioredis

from arena_fixtures import Person
from test_arena_cluster_queue_adopt import _pid
from test_arena_multiprocess import arena_processes
from test_arena_takeover import SERVER, _exchange, _match

pytestmark = [pytest.mark.database, pytest.mark.slow]


async def test_a_lost_route_is_found_in_the_store(postgres_url: str) -> None:
    async with arena_processes(SERVER, postgres_url) as arena:
        one, two = arena.bases
        a, b = Person(one), Person(one)
        try:
            for p in (a, b):
                assert (await p.connect())["type"] == "status"
            judge, witness, game = await _match(a, b, "three-party")
            await _exchange(judge, witness, 0)
            client = aioredis.Redis.from_url("redis://127.0.0.1:6379/0", decode_responses=True)
            try:
                assert await client.delete(f"turinglab:arena:{arena.ns}:player:{_pid(witness)}")
            finally:
                await client.aclose()

            await witness.drop()
            witness.base = two
            shown = await witness.connect()
            assert shown["type"] == "game" and shown["game"] == game, witness.frames
            await _exchange(judge, witness, 1)  # and the game goes on, through process 2
        finally:
            for p in (a, b):
                await p.close()
