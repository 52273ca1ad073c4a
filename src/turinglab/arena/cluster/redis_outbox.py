"""What one arena process tells Redis, in the order it says it: frames to publish to people's
sockets on other processes, people's routes (`player:<id>`), departure notes, queue keys to
drop. Commands are queued without waiting (a frame never waits for Redis on the event loop)
and sent in pipelined batches. While Redis is unreachable (restarted, paused, cut off) a batch
is tried again with jittered backoff for up to SEND_RETRY_S, then counted lost and logged.
"""

from __future__ import annotations

import asyncio
import logging
import random
from time import monotonic
from typing import TYPE_CHECKING, Any

from turinglab.arena.core.metrics import ArenaMetrics, fault

if TYPE_CHECKING:
    import redis.asyncio as aioredis

log = logging.getLogger(__name__)

SEND_RETRY_S = 30.0  # how long commands wait for an unreachable Redis before they are dropped
BATCH = 1000  # commands at most in one pipeline


class RedisOutbox:
    """One ordered stream of Redis commands: ("publish", channel, payload), ("set", key,
    value), ("delete", key), ("hset", key, field, value), ("hdel", key, field). Keys set
    expire after `ttl_s`."""

    def __init__(self, metrics: ArenaMetrics, ttl_s: int) -> None:
        self.metrics = metrics
        self.ttl_s = ttl_s
        self.redis: aioredis.Redis | None = None  # the client, once connected (run)
        self._queue: asyncio.Queue[tuple[str, ...]] = asyncio.Queue()

    def put(self, *command: str) -> None:
        self._queue.put_nowait(command)

    async def run(self, client: aioredis.Redis) -> None:
        """Send what is queued, batch after batch, for as long as the process lives."""
        self.redis = client
        while True:
            batch = [await self._queue.get()]
            while not self._queue.empty() and len(batch) < BATCH:
                batch.append(self._queue.get_nowait())
            await self.send(batch)

    async def send(self, batch: list[tuple[str, ...]]) -> None:
        """Send a batch, in order, trying again while Redis is unreachable. Each try builds
        its pipeline anew: redis-py empties a pipeline whenever it executes it, even when it
        fails, and executing it again would send nothing and report success."""
        deadline = monotonic() + SEND_RETRY_S
        backoff = 0.05
        while True:
            try:
                await self._pipeline(batch).execute()
                return
            except Exception as err:
                if monotonic() + backoff > deadline:
                    self.metrics.redis_commands_lost += len(batch)
                    fault(
                        log,
                        "redis-commands-lost",
                        logging.ERROR,
                        commands=len(batch),
                        after_s=SEND_RETRY_S,
                    )
                    return
                log.warning("redis: %d commands not sent yet (%s); retrying", len(batch), err)
                await asyncio.sleep(backoff * random.uniform(0.5, 1.5))
                backoff = min(backoff * 2, 2.0)

    def _pipeline(self, batch: list[tuple[str, ...]]) -> Any:
        assert self.redis is not None
        pipe = self.redis.pipeline(transaction=False)
        for cmd, *args in batch:
            if cmd == "publish":
                pipe.publish(args[0], args[1])
            elif cmd == "set":
                pipe.set(args[0], args[1], ex=self.ttl_s)
            elif cmd == "delete":
                pipe.delete(args[0])
            elif cmd == "hset":
                pipe.hset(args[0], args[1], args[2])
                pipe.expire(args[0], self.ttl_s)
            elif cmd == "hdel":
                pipe.hdel(args[0], args[1])
        return pipe
