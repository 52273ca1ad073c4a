"""The simulator's Redis pause (SIGSTOP, then SIGCONT, of `redis-server`): no command is
answered meanwhile and none fails; when it goes on each connection's run in the order sent, and
nothing was lost. Schedules with it keep the arena's promises:

* a page whose connect waits on a paused Redis is told the relay is delayed, as a relayed page
  is, not left without a frame (seeds 18, 40, 43: 16-20 s of silence);
* a connect while the listener is lost subscribes on the live subscription, not on the one
  being replaced (seeds 11, 66, 70: nothing relayed reached that person, and the old
  subscription's connection went back to the pool still subscribed, where the next command
  read its replies and hung);
* a departure the owner noted before it was killed is counted from then by the new owner
  even when Redis restarted empty meanwhile: the stored log's `Away` event says when (seed
  82: the partner told 63 s after, the grace counted anew from the takeover).

`benchmarks/sim_recheck.py told-while-connecting follow-one-at-a-time` plays the seeds with
each fix taken out."""

from __future__ import annotations

import asyncio

import fakeredis
import pytest
import redis.asyncio as aioredis

from turinglab.sim.fake_redis import RedisFaults, serving
from turinglab.sim.run import schedule

REDIS_PAUSE = frozenset({"crash", "redis-restart", "redis-pause"})
TOLD_WHILE_CONNECTING = (18, 40, 43)
FOLLOWED_ONE_AT_A_TIME = (11, 66, 70)
AWAY_STORED = 82


def test_a_paused_redis_answers_nothing_then_everything_in_order() -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        server = fakeredis.FakeServer()
        faults = RedisFaults(server, loop.time)
        with serving(server, lambda: "p0", lambda _: False, faults):
            pool = aioredis.BlockingConnectionPool.from_url(
                "redis://sim/0", max_connections=4, timeout=None, decode_responses=True
            )
            client = aioredis.Redis(connection_pool=pool)
            await client.set("k", "0")
            faults.pause(0.5)
            started = loop.time()
            writes = [asyncio.create_task(client.append("k", str(n))) for n in range(1, 4)]
            await asyncio.sleep(0.2)
            assert not any(w.done() for w in writes)  # waiting, not failed
            await asyncio.gather(*writes)
            assert loop.time() - started == pytest.approx(0.5, abs=0.05)
            # all of them, each once (three connections: their order among them is Redis's)
            assert sorted(await client.get("k")) == list("0123")
            await client.aclose()

    asyncio.run(main())


@pytest.mark.slow
def test_a_connect_waiting_on_a_paused_redis_is_told_why() -> None:
    results = [schedule(seed, 2, REDIS_PAUSE) for seed in TOLD_WHILE_CONNECTING]
    assert all(r["plan"]["redis_pause"] for r in results)
    assert all(any("redis paused" in line for line in r["trace"]) for r in results)
    assert [(r["seed"], r["violations"]) for r in results if r["violations"]] == []


@pytest.mark.slow
def test_a_connect_while_the_listener_is_lost_is_followed_once_it_is_back() -> None:
    results = [schedule(seed, 2, REDIS_PAUSE) for seed in FOLLOWED_ONE_AT_A_TIME]
    assert [(r["seed"], r["violations"]) for r in results if r["violations"]] == []
    again = schedule(FOLLOWED_ONE_AT_A_TIME[0], 2, REDIS_PAUSE)
    assert again["digest"] == results[0]["digest"]  # replays exactly


@pytest.mark.slow
def test_a_departure_noted_before_the_owner_died_outlives_a_redis_restart() -> None:
    result = schedule(AWAY_STORED, 2, REDIS_PAUSE)
    assert any("redis restarted empty" in line for line in result["trace"])
    assert any('"takeover"' in line for line in result["trace"])
    assert result["violations"] == []


def test_without_the_fault_redis_never_pauses() -> None:
    result = schedule(1, 2)
    assert result["plan"]["redis_pause"] is None
    assert not any("redis paused" in line for line in result["trace"])
