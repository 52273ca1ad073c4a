"""Who is there, across processes (PostgreSQL + Redis).

* A person queued on a process that dies leaves the queue with it: process 1 is SIGKILLed
  while someone waits there; once its heartbeat has expired, the next person to join on
  process 2 is not matched with the person who is no longer there, but with the next arrival.
* A person who leaves a game played on another process: the game's owner learns which
  processes hold a socket of theirs, so while they stay (longer than the grace period) the game
  goes on, and once they close their tab it ends `abandoned` and the other person is told.
* A person who leaves shortly before their game's process dies: the process that takes the
  game over counts them gone since they left (the old owner noted it in Redis), not since the
  takeover, so the other person is told within the grace period, not takeover + grace.
* A person whose page was on their game's owner when it was SIGKILLed, and who never comes
  back: the survivor sees that the killed process's connections to Redis closed (no
  subscription left, which a stopped process keeps) and counts them gone from when a page's
  reconnect would have landed, not from a stopped owner's 50 s.
* A route left behind by a process that died before it deleted it (their game had ended, so
  no takeover moved it): a person who connects is not left waiting for a dead owner's answer
  but shown where they are (the lobby) once that process is known gone for good; a join sent
  meanwhile (on connecting, or later in the lobby) is held, not sent to the dead process.
* A person who leaves while their game's owner is away from Redis (its connection cut): the
  `gone` their process publishes reaches nobody (pub/sub keeps nothing); back, the owner asks
  the processes it counts on whether they still hold its people's sockets, and the other
  person is told.
* A game's end is not shown again to someone who left it on another process: connected to
  process 1, they played a game owned by process 2 and went back to the lobby (on 1); process 1
  dies and their page reconnects to 2 without naming the game: 2 shows them the lobby, where the
  page sends again a join lost with process 1 (a game frame would end that join for the page).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
import redis
import redis.asyncio
from yarl import URL

from arena_fixtures import Person
from test_arena_cluster_queue_adopt import _pid
from test_arena_multiprocess import arena_processes
from test_arena_resume import reconnect
from test_arena_takeover import SERVER, _match
from turinglab.arena.core.abandon import TOLD_STAYED
from turinglab.testing.tcp_proxy import TcpProxy

pytestmark = [pytest.mark.database, pytest.mark.slow]


async def _heartbeats(ns: str) -> int:
    client = redis.Redis.from_url("redis://127.0.0.1:6379/0")
    try:
        return len(client.keys(f"turinglab:arena:{ns}:alive:*"))
    finally:
        client.close()


async def test_a_person_queued_on_a_dead_process_is_not_matched(postgres_url: str) -> None:
    async with arena_processes(SERVER, postgres_url) as arena:
        one, two = arena.bases
        gone, late, next_one = Person(one), Person(two), Person(two)
        try:
            for p in (gone, late, next_one):
                assert (await p.connect())["type"] == "status"
            await gone.send(type="join", mode="chat", consent=True)
            assert (await gone.until("status"))["state"] == "waiting"
            arena.procs[0].send_signal(signal.SIGKILL)
            arena.procs[0].wait(10)
            for _ in range(600):  # its heartbeat expires (takeover_after_s)
                if await _heartbeats(arena.ns) == 1:
                    break
                await asyncio.sleep(0.05)
            assert await _heartbeats(arena.ns) == 1

            await late.send(type="join", mode="chat", consent=True)
            first = await late.until_any(("status", "game"))
            assert first["type"] == "status" and first["state"] == "waiting"
            await next_one.send(type="join", mode="chat", consent=True)
            games = [await p.until("game") for p in (late, next_one)]
            assert games[0]["game"] == games[1]["game"]  # the two who are here
        finally:
            for p in (gone, late, next_one):
                await p.close()


GRACE_S = 1.0
LEAVING = """
import sys
sys.path.insert(0, {tests!r})
from arena_fixtures import ADMIN_PASSWORD, make_setup, serve_on_fd
from turinglab.arena import create_app
setup = make_setup(abandon_after_s=1.0, ai_after_s=600)  # GRACE_S
app = create_app(setup, admin_password=ADMIN_PASSWORD, redis_url="redis://127.0.0.1:6379/0",
                 secret="shared test secret", namespace={ns!r})
serve_on_fd(app, {fd})
"""


async def _matched_on_two(away: Person, here: Person) -> dict[Person, dict[str, Any]]:
    """`away` (on process 1) waits first and `here` (on process 2) takes the match, so process
    2 owns the game; each person's game snapshot."""
    for p in (away, here):
        assert (await p.connect())["type"] == "status"
    await away.send(type="join", mode="three-party", consent=True)
    assert (await away.until("status"))["state"] == "waiting"
    await here.send(type="join", mode="three-party", consent=True)
    return {p: await p.until("game") for p in (away, here)}


async def test_a_person_who_leaves_a_game_owned_elsewhere_ends_it_abandoned() -> None:
    async with arena_processes(LEAVING, "") as arena:
        one, two = arena.bases
        away, here = Person(one), Person(two)  # `here` takes the match: process 2 owns it
        try:
            games = await _matched_on_two(away, here)
            judge = away if games[away]["role"] == "interrogator" else here
            witness = here if judge is away else away
            # Several exchanges, together longer than the grace period: `away` is there all
            # along (on process 1), so the game is not abandoned.
            for turn in range(3):
                await judge.send(type="message", channel="A", text=f"question {turn}")
                await judge.send(type="message", channel="B", text=f"question {turn}")
                heard = await witness.until("message", sender="them")
                await witness.send(type="message", channel=heard["channel"], text=f"answer {turn}")
                await judge.until("message", sender="them", text=f"answer {turn}")
                await asyncio.sleep(GRACE_S / 2)  # (time passing is the point here)
            assert not any(f["type"] == "reveal" for p in (away, here) for f in p.frames)

            await away.close()  # closes the tab: no reconnect
            reveal = await asyncio.wait_for(here.until("reveal"), 30)
            assert reveal["flagged"] == TOLD_STAYED
            # Not a round: given back in the shared book too, or the next process to read it
            # would count it again.
            for p in (away, here):
                await _no_rounds(arena.ns, _pid(p))
        finally:
            for p in (away, here):
                await p.close()


async def test_a_person_who_came_back_then_leaves_a_game_owned_elsewhere_ends_it() -> None:
    """A page that reconnected to its process (naming its place: it is sent what it missed,
    no new snapshot) and then closes: the process it was on tells the game's owner, which had
    learnt nothing of it since (a partner in a fault run told after 228 s, at the game's end)."""
    async with arena_processes(LEAVING, "") as arena:
        one, two = arena.bases
        away, here = Person(one), Person(two)  # `here` takes the match: process 2 owns it
        try:
            games = await _matched_on_two(away, here)
            snap = games[away]
            await reconnect(away, game=snap["game"], stream=snap["stream"], seq=snap["seq"])
            await away.until("resumed")
            await away.close()  # closes the tab: no reconnect
            reveal = await asyncio.wait_for(here.until("reveal"), 30)
            assert reveal["flagged"] == TOLD_STAYED
        finally:
            for p in (away, here):
                await p.close()


# LEAVING, each process on a Redis URL of its own (the owner's goes through a proxy).
LEAVING_VIA = LEAVING.replace('redis_url="redis://127.0.0.1:6379/0"', "redis_url={redis!r}")
assert LEAVING_VIA != LEAVING


async def test_a_departure_while_the_owner_was_cut_from_redis_is_told_once_it_is_back() -> None:
    proxy = TcpProxy("127.0.0.1", 6379)
    await proxy.start()
    urls = ["redis://127.0.0.1:6379/0", f"redis://127.0.0.1:{proxy.port}/0"]
    try:
        async with arena_processes(LEAVING_VIA, "", redis_urls=urls) as arena:
            one, two = arena.bases
            away, here = Person(one), Person(two)  # `here` takes the match: process 2 owns it
            try:
                await _matched_on_two(away, here)
                assert proxy.accepted > 0  # process 2 is on Redis through the proxy
                await proxy.refuse()
                proxy.cut()  # process 2's listener is lost, its reconnects refused
                await asyncio.sleep(0.5)
                await away.close()  # process 1 publishes `gone` to nobody
                await asyncio.sleep(1.5)
                assert not any(f["type"] == "reveal" for f in here.frames)
                await proxy.accept()  # process 2 is back: it asks process 1 again
                reveal = await asyncio.wait_for(here.until("reveal"), 20)
                assert reveal["flagged"] == TOLD_STAYED
            finally:
                for p in (away, here):
                    await p.close()
    finally:
        await proxy.stop()


async def _no_rounds(ns: str, pid: str) -> None:
    client = redis.asyncio.Redis.from_url("redis://127.0.0.1:6379/0", decode_responses=True)
    try:
        counts: list[str | None] = []
        for _ in range(100):
            (key,) = await client.keys(f"turinglab:arena:{ns}:book:*:{pid}")
            counts = await client.hmget(key, ["i", "w"])
            if all(int(c or 0) == 0 for c in counts):
                return
            await asyncio.sleep(0.05)
        raise AssertionError(f"{pid}'s shared book still counts the abandoned game: {counts}")
    finally:
        await client.aclose()


TAKEOVER_S, LEFT_BEFORE_S = 3.0, 6.0  # and a grace (abandon_after_s) of 10 s
LEFT_BEFORE_DEATH = """
import sys
sys.path.insert(0, {tests!r})
from dataclasses import replace
from arena_fixtures import ADMIN_PASSWORD, serve_on_fd
from test_arena_takeover import takeover_setup
from turinglab.arena import ArenaSettings, create_app
from turinglab.arena.core.store_bridge import ArenaStore
from turinglab.store.database import Store
settings = ArenaSettings(ai_after_s=600, takeover_after_s=3.0, abandon_after_s=10.0)
setup = replace(takeover_setup(), settings=settings)
app = create_app(
    setup, admin_password=ADMIN_PASSWORD, store=ArenaStore(Store({db!r}), setup, worker={port!r}),
    redis_url="redis://127.0.0.1:6379/0", secret="shared test secret", namespace={ns!r},
)
serve_on_fd(app, {fd})
"""


def _noted_gone(ns: str, game: str) -> bool:
    client = redis.Redis.from_url("redis://127.0.0.1:6379/0")
    try:
        return bool(client.hlen(f"turinglab:arena:{ns}:gone:{game}"))
    finally:
        client.close()


@contextlib.asynccontextmanager
async def _matched_on_the_leavers_process(
    postgres_url: str,
) -> AsyncIterator[tuple[Any, Person, Person, str]]:
    """Two processes; `stays` on process 2, `leaves` on process 1, matched in a three-party
    game (`leaves` takes the match: process 1 owns it)."""
    async with arena_processes(LEFT_BEFORE_DEATH, postgres_url) as arena:
        one, two = arena.bases
        stays, leaves = Person(two), Person(one)
        try:
            for p in (stays, leaves):
                assert (await p.connect())["type"] == "status"
            *_, game = await _match(stays, leaves, "three-party")
            yield arena, stays, leaves, game
        finally:
            for p in (stays, leaves):
                await p.close()


async def test_a_person_who_left_before_a_takeover_counts_as_gone_since_then(
    postgres_url: str,
) -> None:
    async with _matched_on_the_leavers_process(postgres_url) as (arena, stays, leaves, game):
        await leaves.close()  # closes the tab on the owner, for good
        left_at = time.monotonic()
        for _ in range(600):  # the owner counts them gone (and notes when, in Redis)
            if _noted_gone(arena.ns, game):
                break
            await asyncio.sleep(0.05)
        assert _noted_gone(arena.ns, game)
        # Their owner dies well after they left (the scenario, not a wait for a state):
        # only its note says since when they are gone.
        await asyncio.sleep(LEFT_BEFORE_S)
        arena.procs[0].send_signal(signal.SIGKILL)  # the owner dies within the grace
        arena.procs[0].wait(10)
        await stays.until("game", game=game)  # taken over: the game shown again
        taken_at = time.monotonic()
        reveal = await asyncio.wait_for(stays.until("reveal"), 30)
        told_at = time.monotonic()
        assert reveal["flagged"] == TOLD_STAYED
        # Counted from when they left (the note), the told comes the grace after that:
        # ~1 s after the takeover (left + 6 s + 3 s). Without the note, from about when the
        # owner died (takeover_after_s before the takeover): 7 s after it; from the
        # takeover, 10 s. A loaded machine only delays ticks: the bound leaves 4.5 s.
        # The takeover comes takeover_after_s after the owner's last beat, which can be
        # a beat (0.5 s) before the kill: 8.96 s after the departure was seen once.
        assert taken_at - left_at >= LEFT_BEFORE_S + TAKEOVER_S - 1.0
        assert told_at - taken_at < 5.5, (told_at - left_at, taken_at - left_at)


async def test_a_person_whose_page_died_with_a_killed_owner_counts_gone_from_the_takeover(
    postgres_url: str,
) -> None:
    """Their socket was on the owner, SIGKILLed, and they never come back. Redis dropped the
    killed process's subscriptions with its sockets, so the survivor knows its pages' sockets
    closed too (not a stopped owner's, whose pages may need 50 s to give up): the partner is
    told once a reconnect would have landed (the takeover + 5 s, less the grace), not ~37 s
    after the takeover (3 s TTL, 50 s for a stopped owner's pages, 10 s grace)."""
    async with _matched_on_the_leavers_process(postgres_url) as (arena, stays, leaves, game):
        arena.procs[0].send_signal(signal.SIGKILL)  # their page dies with it, for good
        arena.procs[0].wait(10)
        await leaves.close()
        await stays.until("game", game=game)  # taken over: the game shown again
        taken_at = time.monotonic()
        reveal = await asyncio.wait_for(stays.until("reveal"), 90)
        told_s = time.monotonic() - taken_at
        assert reveal["flagged"] == TOLD_STAYED
        assert told_s < 15.0, told_s  # ~1 s; from a stopped owner's estimate, over 37 s


async def test_a_stale_route_to_a_dead_process_is_dropped_and_the_person_shown_the_lobby() -> None:
    async with arena_processes(LEAVING, "") as arena:
        person = Person(arena.bases[0])
        try:
            assert (await person.connect())["type"] == "status"  # a session (cookie) exists
            await person.drop()
            cookie = person.http.cookie_jar.filter_cookies(URL(arena.bases[0]))
            pid = next(iter(cookie.values())).value.partition(".")[0]
            route = f"turinglab:arena:{arena.ns}:player:{pid}"
            client = redis.Redis.from_url("redis://127.0.0.1:6379/0")
            try:  # a process that died before deleting it, never listed again, no heartbeat
                client.set(route, json.dumps({"game": "g-old", "owner": "arena/dead"}))
                # Asks the dead owner, then (next tick) sees it is gone and answers itself.
                status = await asyncio.wait_for(person.connect(), 20)
                assert status["type"] == "status" and status["state"] == "idle", status
                assert client.get(route) is None
                # Again, now joining at once: the join waits for the dead owner's answer
                # (not sent to it, where it would be lost) and is played once it is known gone.
                await person.drop()
                client.set(route, json.dumps({"game": "g-old", "owner": "arena/dead"}))
                person.ws = await person.http.ws_connect(
                    arena.bases[0].replace("http", "ws") + "/ws"
                )
                await person.send(type="join", mode="three-party", consent=True)
                status = await person.until("status", timeout=20)
                assert status["state"] == "waiting", status
                # Connected, in the lobby, when the owner of their last game dies with its
                # route: a join is not sent to it (lost) but played here once it is gone.
                await person.send(type="leave")
                assert (await person.until("status"))["state"] == "idle"
                client.set(route, json.dumps({"game": "g-old", "owner": "arena/dead"}))
                await person.send(type="join", mode="three-party", consent=True)
                status = await person.until("status", timeout=20)
                assert status["state"] == "waiting", status
            finally:
                client.delete(route)
                client.close()
        finally:
            await person.close()


async def test_a_game_left_on_a_dead_process_is_not_shown_again_by_its_owner() -> None:
    async with arena_processes(LEAVING, "") as arena:
        one, two = arena.bases
        away, here = Person(one), Person(two)  # `here` takes the match: process 2 owns it
        client = redis.Redis.from_url("redis://127.0.0.1:6379/0")
        try:
            games = await _matched_on_two(away, here)
            judge = away if games[away]["role"] == "interrogator" else here
            await judge.send(type="end")
            await judge.send(type="verdict", choice="A", confidence=50, reason="a guess")
            for p in (away, here):
                await p.until("reveal")
            route = f"turinglab:arena:{arena.ns}:player:{_pid(away)}"
            for _ in range(200):  # the owner drops the route: the leave is process 1's own
                if not client.exists(route):
                    break
                await asyncio.sleep(0.02)
            await away.send(type="leave")
            assert (await away.until("status"))["state"] == "idle"

            arena.procs[0].send_signal(signal.SIGKILL)  # a join sent now is lost with it
            arena.procs[0].wait(10)
            await away.drop()
            away.base = two  # the page reconnects to the other process, no game named
            back = await away.connect()
            assert back["type"] == "status" and back["state"] == "idle", back
            await away.send(type="join", mode="three-party", consent=True)  # sent again
            assert (await away.until("status"))["state"] == "waiting"
        finally:
            client.close()
            for p in (away, here):
                await p.close()


HOLDER_TTL_S, HOLDER_GRACE_S = 6.0, 10.0
HOLDER_KILLED = LEAVING.replace(
    "make_setup(abandon_after_s=1.0, ai_after_s=600)",
    f"make_setup(abandon_after_s={HOLDER_GRACE_S}, ai_after_s=600, "
    f"takeover_after_s={HOLDER_TTL_S})",
)
assert HOLDER_KILLED != LEAVING


async def test_a_partner_whose_socket_died_with_a_killed_process_counts_gone_from_the_death() -> (
    None
):
    """The game is played on process 2; `away`'s socket is on process 1, which is killed, and
    they do not come back (they gave up on the broken page). Process 2 finds process 1 dead
    only once its heartbeat has been missing for its TTL (and, were another survivor to
    unlist it first, HOLDER_GONE_S more); it counts `away` gone from the death, not from then,
    so `here` is told about a grace after the kill, not a TTL and a grace after (sim, three
    processes, give-up seed 88: 28.4 s)."""
    async with arena_processes(HOLDER_KILLED, "") as arena:
        one, two = arena.bases
        away, here = Person(one), Person(two)  # `here` takes the match: process 2 owns it
        try:
            await _matched_on_two(away, here)
            arena.procs[0].send_signal(signal.SIGKILL)
            killed = time.monotonic()
            reveal = await asyncio.wait_for(here.until("reveal"), 60)
            told_s = time.monotonic() - killed
            assert reveal["flagged"] == TOLD_STAYED
            # From the death: a grace and the ticks (~10.5 s); from the finding, at least
            # TTL + grace (16 s). Room for a loaded machine between the two.
            assert told_s < HOLDER_TTL_S + HOLDER_GRACE_S - 2.5, told_s
        finally:
            for p in (away, here):
                await p.close()
