"""A page resuming a game that neither Redis nor the store can place is held, not shown the
lobby: Redis restarted empty (no `player:<id>` route) while the store is out (its writer failed
a commit moments ago), and the game may go on on another process. Found by the simulator
(three processes, `postgres` fault, seed 128: the lobby shown mid-game, then the verdict lost).
The page is told to wait, and routed once the store answers (here: the lobby, as the store
knows no live game of theirs). Real Redis (a fresh namespace) and a real store (SQLite)."""

from __future__ import annotations

from time import time

import pytest

from arena_fixtures import make_setup
from test_arena_multiprocess import alive_namespace
from turinglab.arena.cluster.cluster import Cluster
from turinglab.arena.cluster.cluster_sessions import SignedSessions
from turinglab.arena.core import frames as F
from turinglab.arena.core.resume import ResumePoint
from turinglab.arena.core.store_bridge import ArenaStore
from turinglab.store.database import Store

pytestmark = [pytest.mark.slow]
REDIS = "redis://127.0.0.1:6379/0"


async def test_a_page_no_one_can_place_waits_for_the_store_not_the_lobby(tmp_path) -> None:
    setup = make_setup()
    kept = ArenaStore(Store(str(tmp_path / "store.db")), setup)
    try:
        async with alive_namespace() as (_, prefix):
            ns, sessions = prefix.split(":")[2], SignedSessions("secret")
            cluster = Cluster(setup, REDIS, ns, "P1", store=kept, sessions=sessions)
            await cluster.start()
            try:
                await _held_until_the_store_answers(cluster, kept)
            finally:
                await cluster.stop()
    finally:
        kept.close()
        kept.store.close()


async def _held_until_the_store_answers(cluster: Cluster, kept: ArenaStore) -> None:
    person = cluster.person("p-1")
    frames: list[F.ServerFrame] = []
    cluster.sockets["p-1"] = 1
    kept.writer.last_failure_at = time()  # the store failed a commit moments ago
    await cluster._route(person, frames.append, ResumePoint("g-elsewhere", "s-1", 4))
    assert [(f.type, getattr(f, "code", None)) for f in frames] == [("error", "relay-delayed")]
    assert "p-1" in cluster._unrouted
    await cluster._route_unrouted()  # still out: held (told again only after a while)
    assert len(frames) == 1 and "p-1" in cluster._unrouted
    kept.writer.last_failure_at = None  # the store answers again
    await cluster._route_unrouted()
    assert "p-1" not in cluster._unrouted
    assert [getattr(f, "state", None) for f in frames[1:]] == ["idle"]
