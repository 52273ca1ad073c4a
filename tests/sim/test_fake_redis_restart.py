"""The simulator's Redis restart is a real one for its clients: every socket opened before it
is closed by the server, so a pub/sub listener blocked reading one gets EOF at once (a
ConnectionError), as redis-py's does; a command on an
idle connection from before fails once, and the next connects to the Redis running now.
Without that, the arena's listener slept through the restart and never subscribed again."""

from __future__ import annotations

import asyncio

import fakeredis
import pytest
import redis.asyncio as aioredis
from redis.exceptions import ConnectionError as RedisConnectionError

from turinglab.sim.fake_redis import RedisFaults, serving


async def _clients(server: fakeredis.FakeServer) -> aioredis.Redis:
    pool = aioredis.BlockingConnectionPool.from_url(
        "redis://sim/0", max_connections=4, timeout=None, decode_responses=True
    )
    return aioredis.Redis(connection_pool=pool)


def test_a_listener_blocked_on_its_socket_is_cut_off_by_a_restart() -> None:
    async def main() -> None:
        server = fakeredis.FakeServer()
        faults = RedisFaults(server, asyncio.get_running_loop().time)
        with serving(server, lambda: "p0", lambda _: False, faults):
            client = await _clients(server)
            pubsub = client.pubsub()
            await pubsub.subscribe("c")
            await client.set("k", "0")  # a connection, idle in the pool from then on

            async def listen() -> None:
                async for _ in pubsub.listen():
                    pass

            listening = asyncio.create_task(listen())
            await asyncio.sleep(0.05)  # blocked reading, nothing to read
            faults.restart(0.0)
            with pytest.raises(RedisConnectionError):
                await asyncio.wait_for(listening, 2.0)
            with pytest.raises(RedisConnectionError):  # an idle connection from before
                await client.set("k", "1")
            assert await client.set("k", "1") and await client.get("k") == "1"
            await pubsub.aclose()
            await client.aclose()

    asyncio.run(main())
