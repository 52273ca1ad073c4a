"""Catching up once Redis is back keeps each person's own bound on asking.

A person back on this process after their game ended on another (asked for its end, with the
end from the store after ENDED_ASK_S if that process is silent) is still asked for with that
bound when Redis then restarts, not CATCHUP_S: found by the simulator (seed 38, a process killed
just after a game's end, Redis restarted 2 s later), where a person waited 33 s for that end.
Everyone else is asked again for CATCHUP_S, since their game's owner may be just reconnecting.
"""

from __future__ import annotations

from time import monotonic

import pytest

from arena_fixtures import make_setup
from test_arena_multiprocess import alive_namespace
from turinglab.arena.cluster.cluster import Cluster
from turinglab.arena.cluster.cluster_base import CATCHUP_S
from turinglab.arena.cluster.cluster_store_routes import ENDED_ASK_S
from turinglab.arena.core.resume import ResumePoint

pytestmark = [pytest.mark.slow]


async def test_after_redis_is_back_a_person_asked_for_an_ended_game_keeps_the_short_bound(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async with alive_namespace("P2") as (client, prefix):
        cluster = Cluster(make_setup(), "unused", prefix.split(":")[2])
        cluster.redis = client

        async def beat(force: bool = False) -> None:  # registering again: not what is checked
            return None

        monkeypatch.setattr(cluster, "_beat", beat)
        cluster.sockets = {"ended": 1, "playing": 1}
        cluster.owners = {"ended": "P2", "playing": "P2"}  # no routes: Redis restarted empty
        cluster.seen["ended"] = ResumePoint("g-1", "s-1", 3)
        cluster._asking_ended.add("ended")
        began = monotonic()
        await cluster._resubscribe()
        try:
            assert cluster.catchup["ended"] - began <= ENDED_ASK_S + 1.0
            assert cluster.catchup["playing"] - began >= CATCHUP_S - 1.0
        finally:
            await cluster._pubsub.aclose()
