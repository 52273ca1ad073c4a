"""The simulator's Redis cut: one process's network to Redis is cut for a while (what a TCP
proxy between them that resets its connections and refuses new ones gives; not a link that
silently drops packets). That process's connections fail and its subscriptions are gone;
the other processes go on with Redis as before, and Redis keeps its keys throughout."""

from __future__ import annotations

import asyncio

import fakeredis
import pytest
import redis.asyncio as aioredis
from redis.exceptions import ConnectionError as RedisConnectionError

from turinglab.sim.fake_redis import RedisFaults, serving
from turinglab.sim.run import schedule

REDIS_CUT = frozenset({"crash", "redis-restart", "redis-cut"})


def test_a_cut_process_fails_alone_then_reconnects_to_the_same_keys() -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        server = fakeredis.FakeServer()
        faults = RedisFaults(server, loop.time)
        running = ["p0"]
        with serving(server, lambda: running[0], lambda _: False, faults):

            def client() -> aioredis.Redis:
                pool = aioredis.BlockingConnectionPool.from_url(
                    "redis://sim/0", max_connections=4, timeout=None, decode_responses=True
                )
                return aioredis.Redis(connection_pool=pool)

            cut_off = client()
            await cut_off.set("k", "kept")
            listener = cut_off.pubsub()
            await listener.subscribe("news")
            running[0] = "p1"
            other = client()
            assert await other.publish("news", "1") == 1
            running[0] = "p0"

            faults.cut("p0", 0.5)
            with pytest.raises(RedisConnectionError):
                await cut_off.get("k")
            with pytest.raises(RedisConnectionError):
                await listener.get_message(timeout=0.1)
            with pytest.raises(RedisConnectionError):  # a new connection is refused too
                await client().get("k")
            running[0] = "p1"
            assert await other.get("k") == "kept"  # the others go on as before
            assert await other.publish("news", "2") == 0  # its subscription is gone
            running[0] = "p0"

            await asyncio.sleep(0.6)
            assert await cut_off.get("k") == "kept"  # back: the same Redis, its keys kept
            for closing in (listener, cut_off, other):
                await closing.aclose()

    asyncio.run(main())


def test_without_the_fault_no_process_is_cut_off() -> None:
    result = schedule(1, 2)
    assert result["plan"]["redis_cut"] is None
    assert not any("cut off from redis" in line for line in result["trace"])


@pytest.mark.slow
def test_a_cut_is_drawn_and_played_when_asked_for() -> None:
    cut = [schedule(seed, 2, REDIS_CUT) for seed in range(1, 4)]
    played = [r for r in cut if r["plan"]["redis_cut"]]
    assert played, "none of three schedules drew a cut (p=0.8 each)"
    for result in played:
        who = result["plan"]["redis_cut"][0]
        assert any(f"{who} cut off from redis" in line for line in result["trace"])
