"""Redis for the simulation: one in-memory server (fakeredis, which runs the cluster's Lua
scripts as Redis does) shared by every simulated process. The cluster opens its pool from a URL
(Cluster.start); within `serving`, that pool is made of connections to this server instead,
each marked with the process that opened it, so a crashed process's connections fail from then
on (its commands never arrive) and its heartbeat lapses with its TTL on the virtual clock.

A command that nothing stands in the way of (the process alive, Redis up, the connection current
and idle in its pool) goes the short way: no RESP to encode and parse, the pool's connection
taken and given back without its locks, events and metrics. On that path redis-py and fakeredis
never wait on anything either, so the schedule's interleaving (its awaits that suspend, its loop
steps, its random draws) is the same, only each command costs less; anything else (a refusal, a
reconnect, a pipeline's retry, a listener waiting for a message) goes their whole way."""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from collections.abc import Callable, Iterator
from importlib.metadata import version
from typing import Any

import fakeredis
import fakeredis._clients._async as fake_async
import redis.asyncio as aioredis
from fakeredis._clients._async import FakeAsyncRedisConnection
from redis.exceptions import ConnectionError as RedisConnectionError

# The short way reads private state of redis-py and fakeredis, so it is taken only with the
# versions it was checked against; with any other every command goes the libraries' own way
# (the same schedules, only slower: tests/sim/test_sim_arena.py plays a seed both ways).
SHORT_WAY_CHECKED = (("redis", "8.1.0"), ("fakeredis", "2.41.0"))
SHORT_WAY = all(version(name) == checked for name, checked in SHORT_WAY_CHECKED)
try:
    from fakeredis._typing import RaiseErrorTypes
    from redis.event import AsyncAfterConnectionReleasedEvent as _Released
    from redis.event import AsyncReAuthConnectionListener as _ReAuth
except ImportError:  # another version's insides
    SHORT_WAY = False

try:
    from redis.himport import parse_himport_set_args as _himport_set
except ImportError:  # redis-py before 8.1: no HIMPORT
    _himport_set = None  # type: ignore[assignment]

RESET = "connection reset by a Redis restart"
RESET_BY_CUT = "connection reset: the network to Redis was cut"

Whose = Callable[[], str]  # the process running now
Dead = Callable[[str], bool]


class RedisFaults:
    """Redis's own faults: down for a while (every command fails), a restart that comes
    back empty (no keys, no scripts, no subscriptions; every connection opened before it is
    broken, so clients reconnect and subscribe again, as after a real restart), and a pause
    (SIGSTOP, SIGCONT: sockets stay open and connects succeed, but no command is read until
    it goes on; then they run late, each connection's in order, TTLs expired meanwhile)."""

    def __init__(self, server: fakeredis.FakeServer, now: Callable[[], float]) -> None:
        self.server = server
        self.now = now  # a clock that never goes back (the virtual loop's)
        self.epoch = 0  # restarts so far
        self.down_until = -1.0
        self.paused_until = -1.0
        self._up = True  # seen up since the last restart: up until the next
        # Connections, to reset, in the order they were opened (a WeakSet's order is the
        # objects' addresses, which the seed does not fix).
        self.open: weakref.WeakValueDictionary[int, Any] = weakref.WeakValueDictionary()
        self.opened = 0
        self.cut_until: dict[str, float] = {}  # process: its link to Redis cut until then

    def is_cut(self, process: str) -> bool:
        until = self.cut_until.get(process)
        if until is None:
            return False
        if self.now() < until:
            return True
        del self.cut_until[process]
        return False

    def down(self) -> bool:
        """Whether Redis is restarting now (asked before every command: the clock is read
        only until it is seen up again)."""
        if self._up:
            return False
        if self.now() < self.down_until:
            return True
        self._up = True
        return False

    def paused(self) -> bool:
        return self.paused_until >= 0.0 and self.now() < self.paused_until

    def pause(self, for_s: float) -> None:
        self.paused_until = self.now() + for_s

    async def read_on(self) -> None:
        """Until Redis reads commands again (at once unless it is paused). A command given up
        on meanwhile (its caller cancelled) is not run: only the health check gives up on a
        command, and its PING changes nothing."""
        while self.paused():
            await asyncio.sleep(self.paused_until - self.now())

    def killed(self, process: str) -> None:
        """SIGKILL closes the process's sockets and Redis drops their subscriptions at once
        (a stopped process's stay open, subscribed: how a survivor tells the two apart)."""
        self._unsubscribe(process)

    def cut(self, process: str, for_s: float) -> None:
        """The network between `process` and Redis cut for `for_s` (a partition; Redis keeps
        its keys): both ends see the connections reset (Redis drops their subscriptions, a
        listener gets EOF, a pooled connection fails its next command), and connects are
        refused until the link is back. The other processes go on with Redis as before."""
        self.cut_until[process] = self.now() + for_s
        self._unsubscribe(process)
        for connection in list(self.open.values()):
            if connection.process == process:
                connection.broken = True
                if connection._sock is not None:
                    connection._sock.put_response(RedisConnectionError(RESET_BY_CUT))

    def _unsubscribe(self, process: str) -> None:
        gone = {c._sock for c in self.open.values() if c.process == process and c._sock}
        for subscribers in (self.server.subscribers, self.server.psubscribers):
            for channel, subs in list(subscribers.items()):
                subs -= gone
                if not subs:
                    del subscribers[channel]

    def restart(self, down_s: float) -> None:
        self.epoch += 1
        self.down_until = self.now() + down_s
        self._up = False
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


class _Packed:
    """Commands packed for a fake connection: each its fields (bytes), as fakeredis's RESP
    parser would have made them from the wire; made into RESP only if they take the long way."""

    __slots__ = ("commands",)

    def __init__(self, commands: list[list[bytes]]) -> None:
        self.commands = commands


def _fields(encoder: Any, args: tuple[Any, ...]) -> list[bytes]:
    """What redis-py's `pack_command` puts on the wire, as the fields fakeredis reads off it
    (a str or bytes argument encoded here as its encoder would, any other by the encoder)."""
    assert not isinstance(args[0], float)
    if isinstance(args[0], str):
        args = tuple(args[0].encode().split()) + args[1:]
    elif b" " in args[0]:
        args = tuple(args[0].split()) + args[1:]
    encoding, errors, encode = encoder.encoding, encoder.encoding_errors, encoder.encode
    fields = []
    for arg in args:
        kind = type(arg)
        if kind is str:
            fields.append(arg.encode(encoding, errors))
        elif kind is bytes:
            fields.append(arg)
        else:
            field = encode(arg)
            fields.append(field if type(field) is bytes else bytes(field))
    return fields


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
            self.broken = False  # reset by a cut of its process's link (RedisFaults.cut)
            faults.opened += 1
            faults.open[faults.opened] = self

        def reset_by_restart(self) -> None:
            sock = self._sock
            if sock is not None and self.epoch != faults.epoch:
                sock.put_response(RedisConnectionError(RESET))

        def _open_now(self) -> bool:
            """Whether a command sent now reaches the server at once, as `_refused` and
            redis-py's and fakeredis's checks before a write would find (none raises)."""
            sock = self._sock
            return (
                sock is not None
                and self._reader is not None
                and self._writer is not None
                and self._writer._socket is not None
                and not self.health_check_interval
                and sock._server is not None
                and sock._server.connected
                and not sock._killed
                and not sock._paused
                and self.epoch == faults.epoch
                and not self.broken
                and not dead(self.process)
                and not faults.is_cut(self.process)
                and not faults.down()
                and not faults.paused()
            )

        def pack_command(self, *args: Any) -> Any:
            if not SHORT_WAY:
                return super().pack_command(*args)
            return _Packed([_fields(self.encoder, args)])

        def pack_commands(self, commands: Any) -> Any:
            if not SHORT_WAY:
                return super().pack_commands(commands)
            encoder = self.encoder
            return _Packed([_fields(encoder, tuple(command)) for command in commands])

        def _refused(self) -> None:
            if dead(self.process):
                raise RedisConnectionError(f"{self.process} is dead")
            if faults.down():
                raise RedisConnectionError("Redis is restarting")
            if self.is_connected and self.epoch != faults.epoch:  # opened before the restart
                raise RedisConnectionError(RESET)
            if faults.is_cut(self.process):
                raise RedisConnectionError("the network to Redis is cut")
            if self.is_connected and self.broken:  # opened before the cut
                raise RedisConnectionError(RESET_BY_CUT)

        async def _connect(self) -> None:
            if dead(self.process) or faults.down() or faults.is_cut(self.process):
                raise RedisConnectionError("connection refused")
            self.epoch = faults.epoch  # a new connection, to the Redis running now
            self.broken = False
            await super()._connect()

        async def send_packed_command(self, command: Any, check_health: bool = True) -> None:
            self._refused()
            await faults.read_on()
            self._refused()  # a process killed, or Redis restarted, while it waited
            if type(command) is _Packed:
                sock: Any = self._sock
                if self._open_now():
                    # What fakeredis's socket does with each command once parsed off the wire.
                    process = sock._process_command
                    try:
                        for fields in command.commands:
                            process(fields)
                    except BaseException:
                        await self.disconnect(nowait=True)
                        raise
                    return
                wire = aioredis.Connection.pack_command
                command = [chunk for fields in command.commands for chunk in wire(self, *fields)]
            await super().send_packed_command(command, check_health)

        async def command_now(self, client: Any, args: tuple[Any, ...], options: Any) -> Any:
            """`client._send_command_parse_response(self, args[0], *args, **options)` on a
            connection open now (`_open_now`): its send, as `send_packed_command` would."""
            if _himport_set is not None and _himport_set(args) is not None:  # its own way
                return await client._send_command_parse_response(self, args[0], *args, **options)
            sock: Any = self._sock
            try:
                sock._process_command(_fields(self.encoder, args))
            except BaseException:
                await self.disconnect(nowait=True)
                raise
            return await client.parse_response(self, args[0], **options)

        async def read_response(self, *args: Any, **kwargs: Any) -> Any:
            self._refused()
            sock, server = self._sock, self._server
            if (
                SHORT_WAY
                and not args
                and sock is not None
                and sock.responses is not None
                and not sock.responses.empty()
                and self._reader is not None
                and self._writer is not None
                and server is not None
                and server.connected
            ):
                # A reply already there (a command's, sent above): what fakeredis's
                # read_response returns or raises, without its waits that would not wait.
                response = sock.responses.get_nowait()
                if isinstance(response, RaiseErrorTypes):
                    raise response
                if isinstance(response, RedisConnectionError):
                    await self.disconnect(nowait=True)
                    raise response
                if kwargs.get("disable_decoding", False):
                    return response
                kind = type(response)  # the common replies, decoded as `_decode` would
                if kind is bytes:
                    encoder = self.encoder
                    if encoder.decode_responses:
                        return response.decode(encoder.encoding, encoder.encoding_errors)
                    return response
                if kind is int or response is None:
                    return response
                return self._decode(response)
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


def _free(lock: Any) -> bool:
    """Whether `async with lock` (an asyncio.Lock) would take it at once, as it does when
    nobody holds it or waits for it."""
    return not lock._locked and not lock._waiters


class _Pool(aioredis.BlockingConnectionPool):
    """The cluster's pool, handing out and taking back an idle connection the short way when
    its own way would neither wait nor connect nor find anything to do (same connection, same
    order: the last given back goes out first)."""

    def idle(self) -> Any:
        """The connection `get_connection` would hand out now as it is, taken; or None."""
        available = self._available_connections
        condition: Any = self._condition
        if not available or self._in_maintenance or not _free(condition._lock):
            return None
        connection: Any = available[-1]
        sock = connection._sock
        if sock is None or not connection.is_connected or not sock.responses.empty():
            return None  # to connect, or with something to read: ensure_connection's work
        available.pop()
        self._in_use_connections.add(connection)
        return connection

    async def get_connection(self, *args: Any, **kwargs: Any) -> Any:
        connection = None if args or kwargs else self.idle()
        return connection or await super().get_connection(*args, **kwargs)

    async def release(self, connection: Any) -> None:
        dispatcher: Any = self._event_dispatcher
        condition: Any = self._condition
        listeners = dispatcher._event_listeners_mapping.get(_Released, [])
        if (
            _free(condition._lock)
            and not condition._waiters
            and _free(self._lock)
            and not connection.should_reconnect()
            # The one listener to a release re-authenticates a connection given a new token.
            and connection._re_auth_token is None
            and all(type(listener) is _ReAuth for listener in listeners)
            and (dispatcher._async_lock is None or _free(dispatcher._async_lock))
        ):
            self._in_use_connections.remove(connection)
            self._available_connections.append(connection)
            return
        await super().release(connection)


async def _execute_command(self: aioredis.Redis, *args: Any, **options: Any) -> Any:
    """`Redis.execute_command`, the short way for a pooled command nothing stands in the way
    of, on a connection that retries nothing (the fake's): no timing or error metrics."""
    pool = self.connection_pool
    if type(pool) is _Pool and self.connection is None and not self.single_connection_client:
        connection = pool.idle()
        if connection is not None:
            retry = connection.retry
            if connection._open_now() and retry.get_retries() == 0:
                try:
                    return await connection.command_now(self, args, options)
                except retry._supported_errors as error:  # (none expected on this way)
                    # What call_with_retry does with no retries: the connection closed, raised.
                    await self._close_connection(connection, error, 1, 0.0, args[0])
                    raise
                finally:
                    await pool.release(connection)
            pool._in_use_connections.discard(connection)  # not taken after all
            pool._available_connections.append(connection)
    return await _EXECUTE(self, *args, **options)


_EXECUTE = aioredis.Redis.execute_command


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
        pool = _Pool if SHORT_WAY else aioredis.BlockingConnectionPool
        return pool(
            connection_class=connection,
            max_connections=kwargs.get("max_connections", 50),
            timeout=kwargs.get("timeout"),
            **base.connection_kwargs,
        )

    pools.from_url = staticmethod(from_url)  # type: ignore[method-assign]
    if SHORT_WAY:
        aioredis.Redis.execute_command = _execute_command  # type: ignore[method-assign]
    socket = fake_async.AsyncFakeSocket
    fake_async.AsyncFakeSocket = _NumberedSocket  # type: ignore[misc]
    _NumberedSocket.opened = 0
    try:
        yield
    finally:
        aioredis.Redis.execute_command = _EXECUTE  # type: ignore[method-assign]
        fake_async.AsyncFakeSocket = socket  # type: ignore[misc]
        if own is None:
            del pools.from_url
        else:
            pools.from_url = own  # type: ignore[method-assign]
