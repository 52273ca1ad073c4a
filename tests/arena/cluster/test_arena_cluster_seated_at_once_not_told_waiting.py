"""A person queued by one process and taken at once by another is not told "waiting" after
their game has been shown: the page would hide the game they are in behind the waiting screen.

Two real server processes. The matching script's answer reaches process 0 late (a slow Redis
reply, made 1 s here): meanwhile process 1 takes the person from the queue, starts the game
and relays its snapshot through process 0.
"""

from __future__ import annotations

import pytest
import redis.asyncio as aioredis

from arena_fixtures import Person
from test_arena_cluster_queue_adopt import SERVER, until_redis
from test_arena_multiprocess import arena_processes

SLOW_ANSWER = SERVER.replace(
    "setup = make_setup(",
    """
import asyncio
from turinglab.arena.cluster.shared_rounds import SharedRounds
_take_or_wait = SharedRounds.take_or_wait
async def _late(self, *args, **kwargs):
    taken = await _take_or_wait(self, *args, **kwargs)
    if taken.outcome == "waiting":
        await asyncio.sleep(1.0)  # queued in Redis; the answer is slow to come back
    return taken
SharedRounds.take_or_wait = _late
setup = make_setup(""",
)


async def _queued(ns: str) -> None:
    async def one(client: aioredis.Redis) -> bool:
        return bool(await client.llen(f"turinglab:arena:{ns}:queue:two-party") == 1)

    await until_redis(one, "nobody was queued")


@pytest.mark.server
async def test_a_person_taken_while_their_queueing_is_answered_sees_only_the_game() -> None:
    async with arena_processes(SLOW_ANSWER, "") as arena:
        waiter, taker = Person(arena.bases[0]), Person(arena.bases[1])
        try:
            for p in (waiter, taker):
                await p.connect()
            await waiter.send(type="join", mode="two-party", consent=True)
            await _queued(arena.ns)  # process 0 has queued them, and waits for the answer
            await taker.send(type="join", mode="two-party", consent=True)
            shown = await waiter.until_any(("game", "status"), timeout=10)
            assert shown["type"] == "game", shown
            await taker.until("game", timeout=10)
            with pytest.raises(TimeoutError):  # no "waiting" after it
                await waiter.until("status", timeout=2.0)
        finally:
            for p in (waiter, taker):
                await p.close()
