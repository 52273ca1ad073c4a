"""One process cut off from Redis alone (PostgreSQL + Redis, a TCP proxy between one process and
Redis that resets its connections and refuses new ones).

The game is played on process 1; one person's socket is on process 2, which is cut off. To
process 1 the cut-off process is as dead as a killed one (its heartbeat lapses, its
subscriptions are gone), so it counts that person gone — and they would be told they had left
while their page stayed open on process 2. Process 2 says in the store that it lives; process 1
reads that instead of counting a death, and notes that it noticed; process 2 then knows it is
cut off alone (not Redis down for everyone, when nobody notices anything and every page stays
put) and closes the socket (1012), and the page reconnects to process 1 and plays on. The
store keeps both sides' notes. Found by the simulator's `redis-cut` fault (seeds 4, 51, 58, 91:
tests/sim/test_sim_redis_cut.py)."""

from __future__ import annotations

import asyncio

import aiohttp
import pytest
from sqlalchemy import select

from arena_fixtures import Person
from test_arena_multiprocess import arena_processes
from test_arena_resume import reconnect
from test_arena_takeover import SERVER, TAKEOVER_AFTER_S, _match
from turinglab.store.database import Store
from turinglab.store.schema import arena_processes as procs
from turinglab.testing.tcp_proxy import TcpProxy

pytestmark = [pytest.mark.database, pytest.mark.slow]

SERVER_VIA = SERVER.replace('redis_url="redis://127.0.0.1:6379/0"', "redis_url={redis!r}")
assert SERVER_VIA != SERVER
GRACE_S = 12.0  # the arena's default abandon_after_s (takeover_setup keeps it)


async def _closed_by_server(person: Person, within_s: float) -> int:
    """Wait for the server to close `person`'s socket; its close code (frames kept)."""
    assert person.ws is not None
    try:
        async with asyncio.timeout(within_s):
            while True:
                msg = await person.ws.receive()
                if msg.type == aiohttp.WSMsgType.TEXT:
                    person.frames.append(msg.json())
                elif msg.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED):
                    return int(person.ws.close_code or 0)
    except TimeoutError:
        kinds = [f["type"] for f in person.frames[-5:]]
        pytest.fail(f"the cut-off process kept the socket {within_s:.0f} s (last frames {kinds})")


async def test_a_process_cut_off_alone_hands_its_relayed_people_to_one_that_reaches_redis(
    postgres_url: str,
) -> None:
    proxy = TcpProxy("127.0.0.1", 6379)
    await proxy.start()
    urls = ["redis://127.0.0.1:6379/0", f"redis://127.0.0.1:{proxy.port}/0"]
    try:
        async with arena_processes(SERVER_VIA, postgres_url, redis_urls=urls) as arena:
            one, two = arena.bases
            relayed, owner_side = Person(two), Person(one)
            try:
                for p in (relayed, owner_side):
                    assert (await p.connect())["type"] == "status"
                # `owner_side` takes the match: process 1 owns the game, `relayed` is on 2.
                judge, witness, gid = await _match(relayed, owner_side, "three-party")
                snap = next(f for f in reversed(relayed.frames) if f["type"] == "game")
                assert proxy.accepted > 0  # process 2 is on Redis through the proxy
                await proxy.refuse()
                proxy.cut()
                # Found missing after a TTL and a holder's grace; the notice and the hang-up
                # follow within a beat or two. Well before the 12 s a departure takes.
                code = await _closed_by_server(relayed, TAKEOVER_AFTER_S + 5.0 + GRACE_S)
                assert code == 1012  # "service restart": the page reconnects
                seen = max((f["seq"] for f in relayed.frames if "seq" in f), default=snap["seq"])
                relayed.base = one  # the balancer sends the page to a process that answers
                await reconnect(relayed, game=gid, stream=snap["stream"], seq=seen)
                assert (await relayed.until("resumed", timeout=15))["type"] == "resumed"
                await asyncio.sleep(GRACE_S)  # the cut lasts past the grace: still present
                await judge.send(type="message", channel="A", text="still there?")
                await judge.send(type="message", channel="B", text="still there?")
                heard = await witness.until("message", sender="them", timeout=15)
                await witness.send(type="message", channel=heard["channel"], text="yes")
                await judge.until("message", sender="them", text="yes", timeout=15)
                assert not any(f["type"] == "reveal" for p in (judge, witness) for f in p.frames)
            finally:
                for p in (relayed, owner_side):
                    await p.close()
                await proxy.accept()
    finally:
        await proxy.stop()
    store = Store(postgres_url)
    with store.engine.connect() as conn:
        rows = conn.execute(select(procs)).all()
    store.engine.dispose()
    assert len(rows) == 1  # process 2 said it lived, process 1 noticed it cut off
    assert rows[0].silent_at is not None and rows[0].noticed_at is not None
