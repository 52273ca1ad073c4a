"""A batch of Redis commands that failed is sent whole when Redis answers again.

The cluster queues what it tells Redis (frames to publish, people's routes, notes) and sends it
in batches, retrying while Redis is unreachable (redis_outbox.py). redis-py empties a
pipeline whenever it executes it, failed or not: retrying the same pipeline sent nothing and
reported success, so a batch that failed once was lost without a word — people's routes
among them, after a Redis restart (the lobby shown to people whose game went on elsewhere).

Real Redis behind a TCP proxy that stalls (every command times out), then cuts what it held
and lets traffic flow again: the batch lands, every command of it.
"""

from __future__ import annotations

import asyncio
import logging
import secrets

import pytest
import redis.asyncio as aioredis

from turinglab.arena.cluster.redis_outbox import RedisOutbox
from turinglab.arena.core.metrics import ArenaMetrics
from turinglab.testing.tcp_proxy import TcpProxy

pytestmark = [pytest.mark.database]


async def test_a_failed_batch_is_sent_whole_on_the_next_try(
    caplog: pytest.LogCaptureFixture,
) -> None:
    proxy = TcpProxy("127.0.0.1", 6379)
    await proxy.start()
    through = aioredis.Redis(port=proxy.port, socket_timeout=0.3)
    direct = aioredis.Redis(port=6379, decode_responses=True)
    key = f"turinglab:test:send-retry:{secrets.token_hex(4)}"
    try:
        assert await through.ping()  # a pooled connection through the proxy
        outbox = RedisOutbox(ArenaMetrics(), ttl_s=60)
        outbox.redis = through
        batch = [("set", key, "routed"), ("hset", key + ":note", "seat", "1")]

        proxy.stall()
        caplog.set_level(logging.WARNING, logger="turinglab.arena.cluster.redis_outbox")
        sending = asyncio.create_task(outbox.send(batch))
        for _ in range(400):  # until a try has failed whole (redis-py's own retries included)
            if "commands not sent yet" in caplog.text or sending.done():
                break
            await asyncio.sleep(0.05)
        assert "commands not sent yet" in caplog.text
        proxy.cut()  # what the stalled connections held never reaches Redis
        proxy.flow()
        await asyncio.wait_for(sending, 30)

        assert await direct.get(key) == "routed"
        assert await direct.hget(key + ":note", "seat") == "1"
        assert outbox.metrics.redis_commands_lost == 0
    finally:
        await direct.delete(key, key + ":note")
        await through.aclose()
        await direct.aclose()
        await proxy.stop()
