"""What the cluster's parts (cluster_takeover.py, cluster_store_routes.py) use of their cluster.

The Cluster (cluster.py) builds its parts and hands each itself. They are typed by this
protocol rather than by `Cluster` so that neither imports cluster.py, which imports them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import redis.asyncio as aioredis

    from turinglab.arena.core.hub import Arena
    from turinglab.arena.core.participants import Participant


class Rebuilding(Protocol):
    async def rebuilt(self, pid: str) -> None:
        """Wait while `pid`'s game is being rebuilt here after a takeover."""


class ClusterView(Protocol):
    """One arena process among several: its arena, its Redis, and who plays where."""

    arena: Arena
    redis: aioredis.Redis | None
    me: str  # this process's name
    ns: str  # the prefix of every Redis key
    owners: dict[str, str]  # pid -> the process playing their game, when known
    sockets: dict[str, int]  # pid -> sockets of theirs held here
    catchup: dict[str, float]  # pid -> until when their missed frames are asked of the owner
    left_here: dict[str, float]  # pid -> when their last socket here closed, game elsewhere
    holders: dict[str, set[str]]
    closed_here: dict[str, float]  # pid -> when their last socket here closed (monotonic)
    beat_back: float | None  # when this process's heartbeat went through after a silence
    beat_lapsed: float | None  # when its heartbeat was last found gone

    @property
    def takeover(self) -> Rebuilding: ...

    def person(self, pid: str) -> Participant: ...

    async def owner(self, pid: str) -> str | None: ...

    async def count_taken_away(self) -> None: ...

    def count_gone_from_the_death(self, died_at: dict[str, float], now: float) -> None: ...
