"""Redis for the simulation: one in-memory server (fakeredis, which runs the cluster's Lua
scripts as Redis does) shared by every simulated process. The cluster opens its pool from a URL
(Cluster.start); within `serving`, that pool is made of connections to this server instead,
each marked with the process that opened it, so a crashed process's connections fail from then
on (its commands never arrive) and its heartbeat lapses with its TTL on the virtual clock."""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import Callable, Iterator
from typing import Any

import fakeredis
import fakeredis._clients._async as fake_async
import redis.asyncio as aioredis
from fakeredis._clients._async import FakeAsyncRedisConnection
from redis.exceptions import ConnectionError as RedisConnectionError

RESET = "connection reset by a Redis restart"

Whose = Callable[[], str]  # the process running now
Dead = Callable[[str], bool]


class RedisFaults:
    """Redis's own faults: down for a while (every command fails), and a restart that comes
    back empty (no keys, no scripts, no subscriptions; every connection opened before it is
    broken, so clients reconnect and subscribe again, as after a real restart)."""

    def __init__(self, server: fakeredis.FakeServer, now: Callable[[], float]) -> None:
        self.server = server
        self.now = now
        self.epoch = 0  # restarts so far
        self.down_until = -1.0
        # Connections, to reset, in the order they were opened (a WeakSet's order is the
        # objects' addresses, which the seed does not fix).
        self.open: weakref.WeakValueDictionary[int, Any] = weakref.WeakValueDictionary()
        self.opened = 0

    def killed(self, process: str) -> None:
        """SIGKILL closes the process's sockets and Redis drops their subscriptions at once
        (a stopped process's stay open, subscribed: how a survivor tells the two apart)."""
        gone = {c._sock for c in self.open.values() if c.process == process and c._sock}
        for subscribers in (self.server.subscribers, self.server.psubscribers):
            for channel, subs in list(subscribers.items()):
                subs -= gone
                if not subs:
                    del subscribers[channel]

    def restart(self, down_s: float) -> None:
        self.epoch += 1
        self.down_until = self.now() + down_s
        server = self.server
        server.dbs.clear()
        server.script_cache.clear()
        server.subscribers.clear()
        server.psubscribers.clear()
        # A real restart closes every socket: a client blocked reading one (a pub/sub
        # listener) gets EOF at once. An idle one in a pool fails its next command (redis-py
        # 8's pool does not probe it while maintenance notifications are "auto") and
        # connects again for the one after.
        for connection in list(self.open.values()):
            connection.reset_by_restart()


def _connection_class(
    whose: Whose, dead: Dead, faults: RedisFaults
) -> type[FakeAsyncRedisConnection]:
    class ProcessConnection(FakeAsyncRedisConnection):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            # A write to this server never blocks, and redis-py bounds one with `wait_for`,
            # which on Python 3.11 runs the write as a task of its own with a timer: two more
            # loop steps for each command, a third of a schedule's. Reads keep their timeouts.
            self.socket_timeout = None
            self.process = whose()
            self.epoch = faults.epoch
            faults.opened += 1
            faults.open[faults.opened] = self

        def reset_by_restart(self) -> None:
            sock = self._sock
            if sock is not None and self.epoch != faults.epoch:
                sock.put_response(RedisConnectionError(RESET))

        def _refused(self) -> None:
            if dead(self.process):
                raise RedisConnectionError(f"{self.process} is dead")
            if faults.now() < faults.down_until:
                raise RedisConnectionError("Redis is restarting")
            if self.is_connected and self.epoch != faults.epoch:  # opened before the restart
                raise RedisConnectionError(RESET)

        async def _connect(self) -> None:
            if dead(self.process) or faults.now() < faults.down_until:
                raise RedisConnectionError("connection refused")
            self.epoch = faults.epoch  # a new connection, to the Redis running now
            await super()._connect()

        async def send_packed_command(self, command: Any, check_health: bool = True) -> None:
            self._refused()
            await super().send_packed_command(command, check_health)

        async def read_response(self, *args: Any, **kwargs: Any) -> Any:
            self._refused()
            response = await super().read_response(*args, **kwargs)
            if isinstance(response, RedisConnectionError):  # EOF: the server shut the socket
                await self.disconnect(nowait=True)
                raise response
            return response

    return ProcessConnection


class _NumberedSocket(fake_async.AsyncFakeSocket):
    """A server-side socket hashed by the order it was opened in: the server keeps its
    subscribers in sets, and a set of objects hashed by address delivers a publish to them in
    an order that depends on the heap, not the seed."""

    opened = 0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        _NumberedSocket.opened += 1
        self._number = _NumberedSocket.opened

    def __hash__(self) -> int:
        return self._number


@contextlib.contextmanager
def serving(
    server: fakeredis.FakeServer, whose: Whose, dead: Dead, faults: RedisFaults
) -> Iterator[None]:
    """Within: `BlockingConnectionPool.from_url` (the cluster's) opens connections to `server`."""
    connection = _connection_class(whose, dead, faults)
    pools = aioredis.BlockingConnectionPool
    own = vars(pools).get("from_url")  # inherited (ConnectionPool's classmethod) unless set

    def from_url(url: str, **kwargs: Any) -> aioredis.BlockingConnectionPool:
        base = fakeredis.FakeAsyncRedis(
            server=server, decode_responses=kwargs.get("decode_responses", False)
        ).connection_pool
        return aioredis.BlockingConnectionPool(
            connection_class=connection,
            max_connections=kwargs.get("max_connections", 50),
            timeout=kwargs.get("timeout"),
            **base.connection_kwargs,
        )

    pools.from_url = staticmethod(from_url)  # type: ignore[method-assign]
    socket = fake_async.AsyncFakeSocket
    fake_async.AsyncFakeSocket = _NumberedSocket  # type: ignore[misc]
    _NumberedSocket.opened = 0
    try:
        yield
    finally:
        fake_async.AsyncFakeSocket = socket  # type: ignore[misc]
        if own is None:
            del pools.from_url
        else:
            pools.from_url = own  # type: ignore[method-assign]
