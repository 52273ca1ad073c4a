"""Blind matching on two real server processes (PostgreSQL under both, Redis between), the
design's match window deciding roles (arena/cluster/shared_blind.py). Every person draws "person"
(`human_witness_share` 1.0), so within the window pairs must form:

* a burst of eight people joining at once, spread over both processes, are seated as four
  person-to-person games (one interrogator and one witness each), nobody with an AI;
* a person who joins again — closing the page and joining on the same process, reconnecting
  to the other process and joining there, or sending the join twice — keeps their draw and
  meets the other person waiting, never both left to meet AIs (with a redraw, as before, two
  people both drawn to interrogate, or both to witness, each met an AI);
* a page closed and opened again on the same process while its close is still being handled
  (the shared queues answering slowly) keeps its channel: frames relayed to them from the other
  process (their game, when that process seats them) reach them. The close's handler once
  unsubscribed their channel after the new page had subscribed it (failed once in CI).

(Waits independent of the witness kind, over many games: test_arena_cluster_blind_bursts.py.)
"""

from __future__ import annotations

import asyncio

import pytest
import redis.asyncio as aioredis

from arena_fixtures import Person
from test_arena_cluster_queue_leave import _pid
from test_arena_multiprocess import SERVER, arena_processes

pytestmark = pytest.mark.slow

BLIND = SERVER.replace(
    "setup = make_setup(ai_after_s=600)",
    "from turinglab.arena.core.match_design import MatchDesign\n"
    "setup = make_setup(ai_after_s=600, rounds=2, seed=7,"
    " design=MatchDesign(human_witness_share=1.0, wait_min_s=6, wait_max_s=8))",
)
assert BLIND != SERVER

# Letting someone go from the shared queues takes a second more (as under a loaded Redis).
SLOW_LEAVE = BLIND.replace(
    "app = create_app(",
    "import asyncio\n"
    "from turinglab.arena.cluster.cluster import Cluster\n"
    "_leave = Cluster._leave_queues\n"
    "async def _slow_leave(self, pid, *, forwarded):\n"
    "    await _leave(self, pid, forwarded=forwarded)\n"
    "    await asyncio.sleep(1.5)\n"
    "Cluster._leave_queues = _slow_leave\n"
    "app = create_app(",
    1,
)
assert SLOW_LEAVE != BLIND


async def _joined(person: Person) -> None:
    await person.send(type="join", mode="two-party", consent=True)
    frame = await person.until("status")
    while frame["state"] == "idle":  # a lobby frame relayed late (issue 15's known race)
        frame = await person.until("status")
    assert frame["state"] == "waiting", frame


async def _games(people: list[Person]) -> dict[str, dict[str, int]]:
    """Each game's roles: {game: {role: count}}."""
    try:
        frames = await asyncio.gather(*(p.until("game", timeout=60) for p in people))
    except TimeoutError:  # what each page had been told, to tell a stall from a lost seat
        seen = [[(f["type"], f.get("state")) for f in p.frames[-6:]] for p in people]
        raise AssertionError(f"no game within 60 s; last frames: {seen}") from None
    games: dict[str, dict[str, int]] = {}
    for frame in frames:
        roles = games.setdefault(frame["game"], {})
        roles[frame["role"]] = roles.get(frame["role"], 0) + 1
    return games


@pytest.mark.database
async def test_a_burst_over_two_processes_pairs_within_the_window(postgres_url: str) -> None:
    async with arena_processes(BLIND, postgres_url) as arena:
        people = [Person(arena.bases[k % 2]) for k in range(8)]
        try:
            for p in people:
                await p.connect()
            for p in people:
                await _joined(p)
            games = await _games(people)
            assert len(games) == 4, games
            assert all(roles == {"interrogator": 1, "witness": 1} for roles in games.values())
        finally:
            for p in people:
                await p.close()


async def _let_go(ns: str, person: Person) -> None:
    """Until no process holds `person` as waiting (their closed page has been seen)."""
    client = aioredis.Redis.from_url("redis://127.0.0.1:6379/0", decode_responses=True)
    key = f"turinglab:arena:{ns}:blind-at:{_pid(person)}"
    try:
        for _ in range(400):
            if await client.get(key) is None:
                return
            await asyncio.sleep(0.05)
        raise AssertionError(f"{key} still set")
    finally:
        await client.aclose()


async def _listeners(ns: str, person: Person) -> int:
    """How many subscribers their channel has (one per process holding a socket of theirs)."""
    client = aioredis.Redis.from_url("redis://127.0.0.1:6379/0", decode_responses=True)
    try:
        channel = f"turinglab:arena:{ns}:to:{_pid(person)}"
        ((_, count),) = await client.pubsub_numsub(channel)
        return int(count)
    finally:
        await client.aclose()


# How they join again -> the servers: "while-closing" opens the page again while its close is
# still being handled (letting go of them takes a second more).
AGAIN = {
    "close-and-join": BLIND,
    "close-and-join-while-closing": SLOW_LEAVE,
    "reconnect-elsewhere": BLIND,
    "join-twice": BLIND,
}


@pytest.mark.database
@pytest.mark.parametrize("how", list(AGAIN))
async def test_who_joins_again_meets_the_other_person_waiting(postgres_url: str, how: str) -> None:
    async with arena_processes(AGAIN[how], postgres_url) as arena:
        again, other = Person(arena.bases[0]), Person(arena.bases[1])
        try:
            for p in (again, other):
                await p.connect()
            await _joined(again)
            if how == "join-twice":
                await _joined(again)
            else:
                await again.drop()  # the page closed (or lost its connection) ...
                await _let_go(arena.ns, again)
                if how == "reconnect-elsewhere":
                    again.base = arena.bases[1]  # ... and came back on the other process
                first = await again.connect()
                assert first["type"] == "status" and first["state"] == "idle", first
                await _joined(again)
            assert await _listeners(arena.ns, again) >= 1  # frames relayed to them arrive
            await _joined(other)
            games = await _games([again, other])
            assert list(games.values()) == [{"interrogator": 1, "witness": 1}], games
            assert await _listeners(arena.ns, again) >= 1  # once every close was handled
        finally:
            for p in (again, other):
                await p.close()
