"""Blind matchmaking across arena processes (arena/cluster/shared_blind.py), against a real Redis.

* Waits under bursts, and a draw kept by whoever joins again: test_arena_cluster_blind_bursts.py.
* The scripts' semantics: a witness offered by a dead process is dropped, never taken; a
  three-party person taken by another process is seated there, once; a person who joins again
  on another process is seated once, by that one; one who waited on, or was taken unseated
  by, a process that died is adopted by the process they reconnect to.
* Two real server processes: two people joining a three-party study on different processes
  are matched under the design, after their drawn wait; a person waiting on a process that is
  SIGKILLed is never matched; three people waiting on a process that is SIGKILLed, their
  pages reconnected to the other, are told they wait and matched or sent on there, once.
"""

from __future__ import annotations

import asyncio
import random
import signal
import time
from collections.abc import AsyncIterator

import pytest
import redis.asyncio as aioredis

from arena_fixtures import Person, make_setup
from test_arena_multiprocess import alive_namespace, arena_processes
from test_arena_timing_leaks import ManualClock, Waits
from turinglab.arena.cluster.shared_blind import SharedBlind
from turinglab.arena.cluster.shared_rounds import SharedRounds
from turinglab.arena.core.match_design import Kind, MatchDesign
from turinglab.arena.core.modes import ArenaMode, ArenaSettings
from turinglab.arena.core.rounds import RoundBook
from turinglab.store.arena_people import PastRounds

RUN = "run-1"


def mode_named(name: str) -> ArenaMode:
    return next(m for m in make_setup().modes if m.name == name)


@pytest.fixture
async def namespace() -> AsyncIterator[tuple[aioredis.Redis, str]]:
    async with alive_namespace("P0", "P1") as made:
        yield made


class Processes:
    """SharedBlind matchers standing for arena processes P0, P1, …, on one clock and Redis;
    every game they seat is recorded with each person's wait and process."""

    def __init__(
        self, client: aioredis.Redis, prefix: str, n: int, seed: int, rng_for: type = random.Random
    ) -> None:
        self.clock = ManualClock()
        self.books = SharedRounds(client, prefix, met_ttl_s=3600)
        self.joined: dict[str, tuple[float, int]] = {}  # pid -> (when, which process)
        self.waits = Waits()
        self.seated: list[list[str]] = []
        self.across = 0  # person-to-person games whose people joined on different processes
        self.rounds = [RoundBook(8, random.Random(i)) for i in range(n)]
        self.matchers = [
            SharedBlind(
                client,
                self.books,
                f"P{i}",
                self.clock,
                rng_for(seed * 100 + i),
                self._seat,
                self._timed_out,
            )
            for i in range(n)
        ]

    async def _seat(self, _mode: ArenaMode, pids: list[str]) -> None:
        self.seated.append(pids)
        when = [self.clock.t - self.joined[p][0] for p in pids]
        (self.waits.person if len(pids) == 2 else self.waits.ai).append(when[0])
        self.waits.witness += when[1:]
        if len(pids) == 2 and self.joined[pids[0]][1] != self.joined[pids[1]][1]:
            self.across += 1

    def _timed_out(self, _pid: str, _waited: float) -> None:
        self.waits.timed_out += 1

    async def join(self, pid: str, i: int, mode: ArenaMode, settings: ArenaSettings) -> None:
        self.joined[pid] = (self.clock.t, i)
        assert await self.matchers[i].join(RUN, pid, mode, settings, self.rounds[i])

    async def tick(self) -> None:
        for matcher, book in zip(self.matchers, self.rounds, strict=True):
            await matcher.tick(RUN, book)

    async def tick_one(self, i: int, settings: ArenaSettings) -> None:
        """Process `i`'s ticker, as the server's: the watched people first, then the waiting."""
        matcher, book = self.matchers[i], self.rounds[i]
        await matcher.watch_elsewhere(RUN, settings, book, mode_named)
        await matcher.tick(RUN, book)

    @property
    def waiting(self) -> bool:
        return any(m.waiting for m in self.matchers)


class Drawn(random.Random):
    """Kept for the processes' own generator (three-party tests); draws are set by `fixed`."""


def fixed(procs: Processes, i: int, wants: Kind, wait_s: float = 0.0) -> None:
    """Process `i` draws `wait_s` and `wants` for everyone (MatchDesign.draw_for otherwise)."""
    procs.matchers[i].draw = lambda _design, _key: (wait_s, wants)


async def test_a_dead_process_offers_nobody(namespace: tuple) -> None:
    client, prefix = namespace
    settings = ArenaSettings(
        design=MatchDesign(human_witness_share=1.0, wait_min_s=5, wait_max_s=5)
    )
    mode = mode_named("two-party")
    procs = Processes(client, prefix, n=2, seed=1, rng_for=Drawn)
    for i in (0, 1):
        fixed(procs, i, "person", 5.0)
    await procs.join("a", 0, mode, settings)
    await procs.matchers[0].tick(RUN, procs.rounds[0])  # nobody there: offered by P0 ...
    assert await client.zrange(f"{prefix}blind:two-party", 0, -1) == ["a|P0"]
    await client.delete(f"{prefix}alive:P0")  # ... which dies
    await procs.join("c", 1, mode, settings)
    await procs.matchers[1].tick(RUN, procs.rounds[1])  # "a" is a ghost, never taken
    procs.clock.t = 5.0
    await procs.matchers[1].tick(RUN, procs.rounds[1])
    assert procs.seated == [["c"]]  # an AI witness, at c's due time
    assert await client.zrange(f"{prefix}blind:two-party", 0, -1) == []
    # P0 is back: "a", dropped while P0 was silent, is not left waiting for nobody: their
    # window is over with no witness free, an AI.
    await client.set(f"{prefix}alive:P0", "1")
    await procs.matchers[0].tick(RUN, procs.rounds[0])
    assert procs.seated == [["c"], ["a"]]
    # A person offered on P0 is held by P1 within the window, seated at the due time, both
    # rounds counted then; P0 learns at their window's end and seats them nowhere else.
    await procs.join("b", 0, mode, settings)
    await procs.matchers[0].tick(RUN, procs.rounds[0])
    await procs.join("d", 1, mode, settings)
    await procs.matchers[1].tick(RUN, procs.rounds[1])
    assert await client.get(f"{prefix}blind-at:b") == "taken:P1@P0"
    assert await client.hgetall(f"{prefix}book:{RUN}:b") == {"i": "0", "w": "0"}  # not yet
    procs.clock.t = 10.0
    await procs.tick()
    assert procs.seated[2] == ["d", "b"]
    assert await client.hgetall(f"{prefix}book:{RUN}:b") == {"i": "0", "w": "1"}
    assert await client.hgetall(f"{prefix}book:{RUN}:d") == {"i": "1", "w": "0"}
    assert len(procs.seated) == 3 and not procs.waiting


async def test_a_three_party_person_taken_elsewhere_is_seated_once(namespace: tuple) -> None:
    client, prefix = namespace
    settings = ArenaSettings(design=MatchDesign(wait_min_s=0, wait_max_s=0))
    mode = mode_named("three-party")
    procs = Processes(client, prefix, n=2, seed=1, rng_for=Drawn)
    await procs.join("x", 0, mode, settings)
    await procs.join("y", 1, mode, settings)
    await procs.tick()  # both due: P0 takes y, and P1 finds y taken
    assert procs.seated == [["x", "y"]] and not procs.waiting
    # Alone, a three-party person keeps waiting, offered, past their due time.
    await procs.join("z", 1, mode, settings)
    await procs.tick()
    assert procs.seated == [["x", "y"]]
    assert await client.zrange(f"{prefix}blind:three-party", 0, -1) == ["z|P1"]


async def test_who_joins_again_on_another_process_is_seated_once(namespace: tuple) -> None:
    """A reconnect elsewhere, then a join there: only the second process may seat them."""
    design = MatchDesign(human_witness_share=0.0, wait_min_s=0, wait_max_s=0)
    settings = ArenaSettings(design=design)
    mode = mode_named("two-party")
    procs = Processes(*namespace, n=2, seed=1, rng_for=Drawn)
    for i in (0, 1):
        fixed(procs, i, "ai")  # an interrogator of an AI, due at once
        await procs.join("r", i, mode, settings)
    await procs.tick()
    assert procs.seated == [["r"]] and not procs.waiting
    client, prefix = namespace
    assert await client.get(f"{prefix}blind-at:r") is None  # let go once seated


async def test_who_waited_on_a_dead_process_is_adopted_where_they_reconnect(
    namespace: tuple,
) -> None:
    """Watched while their process lives (it may still seat them), adopted once it has died:
    seated by the adopter only."""
    client, prefix = namespace
    design = MatchDesign(human_witness_share=0.0, wait_min_s=0, wait_max_s=0)
    settings = ArenaSettings(design=design)
    procs = Processes(client, prefix, n=2, seed=1, rng_for=Drawn)
    fixed(procs, 0, "ai")  # an interrogator of an AI, due at once on P0
    await procs.join("a", 0, mode_named("two-party"), settings)
    p1, book1 = procs.matchers[1], procs.rounds[1]
    assert await p1.watch(RUN, "a", settings, book1, mode_named)  # P0 lives: still waits
    assert p1.elsewhere == {"a": "P0"} and "a" not in p1.waiting
    await client.delete(f"{prefix}alive:P0")  # P0 dies
    await p1.watch_elsewhere(RUN, settings, book1, mode_named)
    assert "a" in p1.waiting and not p1.elsewhere
    await procs.tick()  # P1 seats them; P0 (silent, not dead) finds them gone
    assert procs.seated == [["a"]] and not procs.waiting


async def dies_as_it_seats(procs: Processes) -> None:
    """P0 ticks and dies between pairing (rounds counted, people marked taken) and seating."""

    async def killed(_mode: ArenaMode, _pids: list[str]) -> None:
        raise RuntimeError("SIGKILL")

    procs.matchers[0]._seat = killed
    with pytest.raises(RuntimeError):
        await procs.matchers[0].tick(RUN, procs.rounds[0])


async def test_who_was_taken_by_a_process_that_died_unseated_is_adopted(
    namespace: tuple,
) -> None:
    client, prefix = namespace
    settings = ArenaSettings(design=MatchDesign(wait_min_s=0, wait_max_s=0))
    mode = mode_named("three-party")
    procs = Processes(client, prefix, n=2, seed=1, rng_for=Drawn)
    await procs.join("x", 0, mode, settings)
    await procs.join("y", 0, mode, settings)
    await dies_as_it_seats(procs)  # x takes y: counted, not seated
    assert await client.get(f"{prefix}blind-at:x") == "taken:P0@P0"
    p1, book1 = procs.matchers[1], procs.rounds[1]
    assert await p1.watch(RUN, "x", settings, book1, mode_named)  # P0 may still seat them
    await client.delete(f"{prefix}alive:P0")
    await client.set(f"{prefix}player:y", "{}")  # y's game had started: not adopted
    assert not await p1.watch(RUN, "y", settings, book1, mode_named)
    assert await client.get(f"{prefix}blind-at:y") is None
    await p1.watch_elsewhere(RUN, settings, book1, mode_named)
    assert list(p1.waiting) == ["x"]
    assert await client.zrange(f"{prefix}blind:three-party", 0, -1) == ["x|P1"]


async def test_a_witness_taken_by_a_process_that_died_unseated_waits_again_uncounted(
    namespace: tuple,
) -> None:
    """The witness's socket stays on their own process, so nothing makes them reconnect: that
    process learns they were taken (their window's end), watches them, and once the taker is
    dead seats them itself, the round the taker counted given back (the store holds no game)."""
    client, prefix = namespace
    settings = ArenaSettings(
        design=MatchDesign(human_witness_share=1.0, wait_min_s=5, wait_max_s=5)
    )
    mode = mode_named("two-party")
    procs = Processes(client, prefix, n=2, seed=1, rng_for=Drawn)

    async def no_games(_run: str, _pid: str) -> PastRounds:
        return PastRounds(interrogated=0, witnessed=0, met=frozenset())

    procs.books.past = no_games
    for i in (0, 1):
        fixed(procs, i, "person", 5.0)
    await procs.join("w", 1, mode, settings)
    await procs.tick_one(1, settings)  # offered by P1
    await procs.join("i", 0, mode, settings)
    await procs.matchers[0].tick(RUN, procs.rounds[0])  # P0 holds w
    procs.clock.t = 5.0
    await dies_as_it_seats(procs)  # i's due time: counted, not seated
    assert await client.hgetall(f"{prefix}book:{RUN}:w") == {"i": "0", "w": "1"}
    p1, book1 = procs.matchers[1], procs.rounds[1]
    await procs.tick_one(1, settings)  # w's window is over: taken by P0, which may seat them
    assert "w" not in p1.waiting and p1.elsewhere == {"w": "taken"}
    await procs.tick_one(1, settings)
    assert "w" not in p1.waiting and p1.elsewhere == {"w": "taken:P0@P1"}
    await client.delete(f"{prefix}alive:P0")  # P0 is dead
    await procs.tick_one(1, settings)  # adopted, their wait from when they joined
    assert "w" in p1.waiting and not p1.elsewhere
    procs.clock.t = 10.0
    await procs.tick_one(1, settings)  # nobody free: an AI
    assert procs.seated == [["w"]] and not p1.elsewhere and not p1.waiting
    assert await client.hgetall(f"{prefix}book:{RUN}:w") == {"i": "1", "w": "0"}
    progress = book1.progress("w")
    assert (progress.interrogated, progress.witnessed) == (1, 0)


async def test_who_waits_when_redis_restarts_empty_is_noted_and_offered_again(
    namespace: tuple,
) -> None:
    """Their `blind-at` keys and the offer set gone with Redis, the process registers its
    waiting people again (its heartbeat had gone too): each is seated once, by it; one whom
    another process set meanwhile is left to that one. Without it, each was taken for taken
    by another process at their due time and left waiting for nobody (a blind fault run)."""
    client, prefix = namespace
    settings = ArenaSettings(design=MatchDesign(wait_min_s=0, wait_max_s=0))
    mode = mode_named("three-party")
    procs = Processes(client, prefix, n=2, seed=1, rng_for=Drawn)
    for pid in ("x", "y", "z", "w"):
        await procs.join(pid, 0, mode, settings)
    for key in await client.keys(f"{prefix}*"):  # Redis restarted empty ...
        await client.delete(key)
    for proc in ("P0", "P1"):  # ... and the processes beat again
        await client.set(f"{prefix}alive:{proc}", "1")
    await client.set(f"{prefix}blind-at:z", "P1")  # z joined again on P1 meanwhile

    async def plays(pid: str) -> bool:  # w: taken and seated by P1 before the restart
        return pid == "w"

    p0 = procs.matchers[0]
    await p0.register_again(RUN, procs.rounds[0], plays)
    assert set(p0.waiting) == {"x", "y"} and p0.elsewhere == {"z": "taken"}
    assert sorted(await client.zrange(f"{prefix}blind:three-party", 0, -1)) == ["x|P0", "y|P0"]
    await procs.tick()
    assert procs.seated == [["x", "y"]] and not p0.waiting
    # Someone P1 took from P0 and seated is still listed on P0 until their due time: noted
    # again (a second registration, as the listener's and the heartbeat's both do), they
    # are not offered again, so nobody can seat them twice.
    settings = ArenaSettings(
        design=MatchDesign(human_witness_share=1.0, wait_min_s=5, wait_max_s=5)
    )
    for i in (0, 1):
        fixed(procs, i, "person", 5.0)
    start = procs.clock.t
    await procs.join("v", 0, mode_named("two-party"), settings)
    await procs.tick_one(0, settings)  # offered by P0
    await procs.join("u", 1, mode_named("two-party"), settings)
    await procs.matchers[1].tick(RUN, procs.rounds[1])  # held by P1
    procs.clock.t = start + 5.0
    await procs.matchers[1].tick(RUN, procs.rounds[1])
    assert procs.seated[-1] == ["u", "v"] and "v" in p0.waiting
    await p0.register_again(RUN, procs.rounds[0], plays)
    assert "v" not in p0.waiting and await client.zrange(f"{prefix}blind:two-party", 0, -1) == []
    await procs.tick_one(0, settings)
    assert procs.seated[-1] == ["u", "v"] and not p0.waiting and p0.elsewhere == {"z": "P1"}


SERVER = """
import sys
sys.path.insert(0, {tests!r})
from arena_fixtures import serve_on_fd
from arena_fixtures import ADMIN_PASSWORD, make_setup
from turinglab.arena import create_app
from turinglab.arena.core.match_design import Kind, MatchDesign
setup = make_setup(design=MatchDesign(wait_min_s=2.0, wait_max_s=2.5), takeover_after_s=1.0)
app = create_app(
    setup, admin_password=ADMIN_PASSWORD,
    redis_url="redis://127.0.0.1:6379/0", secret="shared test secret", namespace={ns!r},
)
serve_on_fd(app, {fd})
"""


@pytest.mark.server
async def test_two_processes_match_people_under_the_design() -> None:
    """People on different processes are matched blind: after their drawn wait, not at once.
    (A page closed while queued leaves the shared queues at once and joins again with a new
    draw: test_arena_cluster_queue_leave.py. Here nobody leaves, so the two draws meet: with
    a redraw both may be drawn to interrogate, and a pair of people then waits for a third.)"""
    async with arena_processes(SERVER, "") as arena:
        a, b = Person(arena.bases[0]), Person(arena.bases[1])
        try:
            for p in (a, b):
                await p.connect()
            joined = time.monotonic()
            for p in (a, b):
                await p.send(type="join", mode="three-party", consent=True)
                assert (await p.until("status"))["state"] == "waiting"
            ga, gb = await a.until("game", timeout=15), await b.until("game", timeout=15)
            assert time.monotonic() - joined >= 1.9  # no sooner than the shortest draw
            assert ga["game"] == gb["game"]
            assert {ga["role"], gb["role"]} == {"interrogator", "witness"}
        finally:
            for p in (a, b):
                await p.close()


@pytest.mark.server
async def test_a_person_waiting_on_a_dead_process_is_never_matched() -> None:
    """Their process is SIGKILLed while they wait, offered as a witness; once its heartbeat
    has expired, a person due on the other process does not meet them, but the next arrival."""
    async with arena_processes(SERVER, "") as arena:
        gone, late, next_one = (
            Person(arena.bases[0]),
            Person(arena.bases[1]),
            Person(arena.bases[1]),
        )
        try:
            for p in (gone, late, next_one):
                await p.connect()
            await gone.send(type="join", mode="three-party", consent=True)
            assert (await gone.until("status"))["state"] == "waiting"
            arena.procs[0].send_signal(signal.SIGKILL)
            arena.procs[0].wait(10)
            client = aioredis.Redis.from_url("redis://127.0.0.1:6379/0")
            alive = f"turinglab:arena:{arena.ns}:alive:*"
            for _ in range(100):  # its heartbeat expires (takeover_after_s)
                if len(await client.keys(alive)) == 1:
                    break
                await asyncio.sleep(0.05)
            await client.aclose()
            await late.send(type="join", mode="three-party", consent=True)
            assert (await late.until("status"))["state"] == "waiting"
            with pytest.raises(TimeoutError):  # due after 2-2.5 s: nobody alive to take
                await late.until("game", timeout=3.5)
            await next_one.send(type="join", mode="three-party", consent=True)
            games = [await p.until("game", timeout=15) for p in (late, next_one)]
            assert games[0]["game"] == games[1]["game"]
        finally:
            for p in (gone, late, next_one):
                await p.close()


@pytest.mark.server
async def test_people_waiting_on_a_killed_process_are_waited_for_by_the_other() -> None:
    """Three people wait (three-party) on a process that is SIGKILLed before anyone is due;
    their pages reconnect to the other process, as the page does, without joining again. They
    are told they still wait, two are matched there, once, and the third is sent on at
    `max_wait_s` (no-match): nobody is left waiting untold."""
    server = SERVER.replace("wait_min_s=2.0, wait_max_s=2.5", "wait_min_s=3.0, wait_max_s=3.5")
    server = server.replace("takeover_after_s=1.0", "takeover_after_s=1.0, max_wait_s=7.0")
    async with arena_processes(server, "") as arena:
        people = [Person(arena.bases[0]) for _ in range(3)]
        try:
            for p in people:
                await p.connect()
            joined = time.monotonic()
            for p in people:
                await p.send(type="join", mode="three-party", consent=True)
                assert (await p.until("status"))["state"] == "waiting"
            arena.procs[0].send_signal(signal.SIGKILL)  # before the first due time (3 s)
            arena.procs[0].wait(10)
            assert time.monotonic() - joined < 2.9, "too slow to kill before anyone was due"
            for p in people:
                await p.drop()
                p.base = arena.bases[1]  # the same session cookie, on the survivor
                first = await p.connect()
                assert first["type"] == "status" and first["state"] == "waiting", first
            ends = [await p.until_any(("game", "status"), timeout=12) for p in people]
            games = [f["game"] for f in ends if f["type"] == "game"]
            assert len(games) == 2 and games[0] == games[1], ends
            told = [f for f in ends if f["type"] == "status"]
            assert [f["state"] for f in told] == ["no-match"], ends
            assert time.monotonic() - joined < 7.0 + 5.0
            for p in people:  # nobody is seated again meanwhile
                with pytest.raises(TimeoutError):
                    await p.until("game", timeout=0.5)
        finally:
            for p in people:
                await p.close()


async def test_a_witness_back_from_their_game_waits_anew_where_they_joined(
    namespace: tuple,
) -> None:
    """Someone who may only witness, offered on P0 and taken and seated by P1, joins again on
    P0 after that game: P0 has learnt they were taken (one read a tick), so the new join is a
    new wait for their next round, not the stale one (which would have left them waiting for
    nobody)."""
    client, prefix = namespace
    settings = ArenaSettings(
        design=MatchDesign(human_witness_share=1.0, wait_min_s=5, wait_max_s=5)
    )
    mode = mode_named("two-party")
    procs = Processes(client, prefix, n=2, seed=1, rng_for=Drawn)
    for i in (0, 1):
        fixed(procs, i, "person", 5.0)
    await client.hset(f"{prefix}book:{RUN}:w", mapping={"i": 4, "w": 0})  # only witness now
    await procs.join("w", 0, mode, settings)
    await procs.tick_one(0, settings)
    assert procs.matchers[0].waiting["w"].offered
    await procs.join("i", 1, mode, settings)
    await procs.matchers[1].tick(RUN, procs.rounds[1])  # P1 holds w
    procs.clock.t = 5.0
    await procs.matchers[1].tick(RUN, procs.rounds[1])  # and seats them
    assert procs.seated == [["i", "w"]]
    await procs.tick_one(0, settings)  # P0 learns it at once
    assert "w" not in procs.matchers[0].waiting
    await procs.join("w", 0, mode, settings)  # their game over, w joins again on P0
    assert await client.get(f"{prefix}blind-at:w") == "P0"
    assert await client.zrange(f"{prefix}blind:two-party", 0, -1) == ["w|P0"]
    assert procs.matchers[0].waiting["w"].since == 5.0
