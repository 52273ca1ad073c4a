"""A process killed moments before Redis restarts empty is still found lost and taken over.

Redis forgets the process list and every heartbeat; the dead process never lists itself
again, so before this the survivors never judged it and its live games stayed "playing"
forever, their people left without an end (sim seeds 82, 83: killed 2.4 s and 5.5 s before
the restart). A survivor registering again lists every process the store says owns a live
game, each with a heartbeat of one TTL unless it has beaten already: a living one goes on
beating, a dead one lapses and is found lost like any other.
"""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest

from arena_fixtures import make_setup
from test_arena_multiprocess import alive_namespace
from turinglab.arena.cluster.cluster import Cluster

pytestmark = [pytest.mark.slow]


class _Store(SimpleNamespace):
    """What the store says: the owners of the study's live games."""

    def live_workers(self) -> set[str]:
        return {"P-dead", "P-live", "P-me"}


async def _nothing(*_: Any) -> None:
    return None


async def test_after_redis_restarted_empty_a_process_that_died_just_before_is_found_lost(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async with alive_namespace("P-live") as (client, prefix):  # it beat again already
        cluster = Cluster(make_setup(), "unused", prefix.split(":")[2])
        cluster.me, cluster.redis = "P-me", client
        cluster.arena.store = _Store(run_id="run")  # type: ignore[assignment]
        cluster.blind = SimpleNamespace(register_again=_nothing)  # type: ignore[assignment]
        monkeypatch.setattr(cluster, "_give_up_taken", _nothing)
        monkeypatch.setattr(cluster.arena.setup.settings, "takeover_after_s", 0.5)
        cluster._registered = True  # registered before Redis restarted empty
        await cluster._beat(force=True)
        assert await client.smembers(prefix + "procs") == {"P-me", "P-dead", "P-live"}
        assert await client.pttl(prefix + "alive:P-live") == -1  # its own beat, untouched
        assert 0 < await client.pttl(prefix + "alive:P-dead") <= 500  # a TTL to come back
        assert await cluster.takeover.lost_processes() == []
        await asyncio.sleep(0.6)
        await client.set(prefix + "alive:P-me", "1")  # this one goes on beating
        assert await cluster.takeover.lost_processes() == ["P-dead"]
