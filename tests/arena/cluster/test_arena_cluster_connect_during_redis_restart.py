"""A connect that Redis fails (it is restarting as the person's page reconnects) closes the
socket with "service restart" (1012), logged in one line, and the page's next connect works;
not an unhandled error in the server (1011) with the person's socket count left behind."""

from __future__ import annotations

import aiohttp
import pytest

from arena_fixtures import Person
from test_arena_multiprocess import arena_processes
from test_arena_takeover import SERVER

pytestmark = [pytest.mark.database, pytest.mark.slow]

FAILING_SERVER = SERVER.replace(
    "setup = takeover_setup()",
    """
from redis.exceptions import ConnectionError as RedisDown
from turinglab.arena.cluster.shared_rounds import SharedRounds
_load = SharedRounds.load
_failed = []
async def _load_failing_once(self, run, pid, book):
    if not _failed:  # the first connect meets a Redis that is restarting
        _failed.append(pid)
        raise RedisDown("Connection closed by server.")
    return await _load(self, run, pid, book)
SharedRounds.load = _load_failing_once
setup = takeover_setup()""",
)


async def test_a_connect_redis_fails_is_closed_for_a_reconnect(postgres_url: str) -> None:
    async with arena_processes(FAILING_SERVER, postgres_url, n=1) as arena:
        (base,) = arena.bases
        person = Person(base)
        try:
            async with person.http.post(base + "/consent", json={"consent": True}) as r:
                r.raise_for_status()
            ws = await person.http.ws_connect(base.replace("http", "ws") + "/ws")
            told = await ws.receive_json(timeout=30)  # why, before the socket closes
            assert told["type"] == "error" and told["code"] == "relay-delayed", told
            closed = await ws.receive(timeout=30)
            assert closed.type == aiohttp.WSMsgType.CLOSE and closed.data == 1012, closed
            assert (await person.connect())["type"] == "status"  # the page's next try
        finally:
            await person.close()
