"""The simulator's Redis cut: one process's network to Redis is cut for a while (what a TCP
proxy between them that resets its connections and refuses new ones gives; not a link that
silently drops packets). That process's connections fail and its subscriptions are gone;
the other processes go on with Redis as before, and Redis keeps its keys throughout.

To the others a process cut off past its heartbeat's TTL is dead: they take its games over
and count the people whose socket it held gone since its last beat. 26 of the first 200
schedules with the cut told someone whose page had stayed open that they had left, or left
a page reconnecting without a word. Fixed:

* at each beat while it is cut off, the process asks the store which of its games were
  taken over, gives them up and closes their people's sockets, so their pages reconnect to
  the new owner (seed 38);
* a connect refused because no process reaches Redis is told why before the socket closes
  (seed 30: the other process killed as this one was cut off, 23 s of retries untold);
* a connect while Redis is away, to the process that plays the person's game, puts them back
  in it (seed 98: the only process left cut off, a witness kept out until counted gone).

* a person whose socket is on the cut-off process and whose game another process plays was
  counted gone by that owner (seeds 4, 51, 58, 91; 11 of 1-200): the cut-off process says in
  the store that it lives, the owner reads it (not a death) and notes that it noticed, and the
  cut-off one, now knowing it is cut off alone, closes those people's sockets for their pages
  to reconnect elsewhere. While Redis is down for everyone nobody notices, and nobody is
  closed (tests/arena/cluster/test_arena_cluster_cut_off.py on the real services).

`benchmarks/sim_recheck.py cut-off-hangs-up back-in-game-here cut-off-alone` plays the seeds
with each fix taken out."""

from __future__ import annotations

import asyncio
from typing import Any

import fakeredis
import pytest
import redis.asyncio as aioredis
from redis.exceptions import ConnectionError as RedisConnectionError

from turinglab.sim.fake_redis import RedisFaults, serving
from turinglab.sim.run import schedule

REDIS_CUT = frozenset({"crash", "redis-restart", "redis-cut"})
TAKEN_HUNG_UP, NOBODY_REACHES_REDIS, BACK_IN_GAME_HERE, RELAYED = 38, 30, 98, (4, 51, 58, 91)


def test_a_cut_process_fails_alone_then_reconnects_to_the_same_keys() -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        server = fakeredis.FakeServer()
        faults = RedisFaults(server, loop.time)
        running = ["p0"]
        with serving(server, lambda: running[0], lambda _: False, faults):

            def client() -> aioredis.Redis:
                pool = aioredis.BlockingConnectionPool.from_url(
                    "redis://sim/0", max_connections=4, timeout=None, decode_responses=True
                )
                return aioredis.Redis(connection_pool=pool)

            cut_off = client()
            await cut_off.set("k", "kept")
            listener = cut_off.pubsub()
            await listener.subscribe("news")
            running[0] = "p1"
            other = client()
            assert await other.publish("news", "1") == 1
            running[0] = "p0"

            faults.cut("p0", 0.5)
            with pytest.raises(RedisConnectionError):
                await cut_off.get("k")
            with pytest.raises(RedisConnectionError):
                await listener.get_message(timeout=0.1)
            with pytest.raises(RedisConnectionError):  # a new connection is refused too
                await client().get("k")
            running[0] = "p1"
            assert await other.get("k") == "kept"  # the others go on as before
            assert await other.publish("news", "2") == 0  # its subscription is gone
            running[0] = "p0"

            await asyncio.sleep(0.6)
            assert await cut_off.get("k") == "kept"  # back: the same Redis, its keys kept
            for closing in (listener, cut_off, other):
                await closing.aclose()

    asyncio.run(main())


def test_without_the_fault_no_process_is_cut_off() -> None:
    result = schedule(1, 2)
    assert result["plan"]["redis_cut"] is None
    assert not any("cut off from redis" in line for line in result["trace"])


@pytest.mark.slow
def test_a_cut_is_drawn_and_played_when_asked_for() -> None:
    cut = [schedule(seed, 2, REDIS_CUT) for seed in range(1, 4)]
    played = [r for r in cut if r["plan"]["redis_cut"]]
    assert played, "none of three schedules drew a cut (p=0.8 each)"
    for result in played:
        who = result["plan"]["redis_cut"][0]
        assert any(f"{who} cut off from redis" in line for line in result["trace"])


def _cut(seed: int) -> dict[str, Any]:
    result = schedule(seed, 2, REDIS_CUT)
    assert any("cut off from redis" in line for line in result["trace"])
    return result


@pytest.mark.slow
def test_a_process_cut_off_hands_over_the_people_of_its_games_taken_over() -> None:
    result = _cut(TAKEN_HUNG_UP)
    assert any('"redis-cut-off"' in line for line in result["trace"])
    assert any("was taken over by" in line for line in result["trace"])
    assert result["violations"] == []


@pytest.mark.slow
def test_a_connect_no_process_can_route_is_told_why() -> None:
    result = _cut(NOBODY_REACHES_REDIS)
    assert any(" killed" in line for line in result["trace"])
    assert any("not connected" in line for line in result["trace"])
    assert result["violations"] == []


@pytest.mark.slow
def test_a_connect_while_redis_is_away_rejoins_a_game_played_there() -> None:
    result = _cut(BACK_IN_GAME_HERE)
    assert any("back in their game here" in line for line in result["trace"])
    assert result["violations"] == []


@pytest.mark.slow
@pytest.mark.parametrize("seed", RELAYED)
def test_a_process_cut_off_alone_hands_over_the_people_whose_game_is_elsewhere(seed: int) -> None:
    result = _cut(seed)
    assert any('"redis-cut-off-alone"' in line for line in result["trace"])
    assert result["violations"] == []
