"""The `Hub` of an arena served by several processes: this process's `Cluster` (cluster.py),
which builds and holds its `Arena`, Redis between the processes and the store under them.

Everything the web layer would otherwise ask "is there a cluster?" for is answered here, by
delegating to the cluster's public methods: a person's socket goes through the cluster (their
game may be played elsewhere), the admin sees and ends every process's games, the fallbacks
are the study's (in Redis), and /metrics and /healthz say how the cluster is doing.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError

from turinglab.arena.cluster.cluster import Cluster, SignedSessions, health_checks
from turinglab.arena.cluster.cluster_heartbeat import told_while_waiting
from turinglab.arena.core.admin_end import end_by_admin
from turinglab.arena.core.hub import Arena, FinishedHook
from turinglab.arena.core.hub_port import HERE, HubUnreachable
from turinglab.arena.core.local_hub import blind_fallbacks, plays_here
from turinglab.arena.core.metrics import PREFIX, metric, said_if_slow

if TYPE_CHECKING:
    from turinglab.arena.core import frames as F
    from turinglab.arena.core.modes import ArenaSetup
    from turinglab.arena.core.participants import Participant
    from turinglab.arena.core.person_view import Outlet
    from turinglab.arena.core.resume import ResumePoint
    from turinglab.arena.core.store_bridge import ArenaStore
    from turinglab.games.clock import Clock

log = logging.getLogger(__name__)

STUDY_FIXED = "Several processes serve this arena: restart them with another config."
PEOPLE_HERE = "this process's only: without a store processes cannot see each other's people"


def cluster_hub(
    setup: ArenaSetup,
    clock: Clock,
    on_finished: FinishedHook | None,
    store: ArenaStore | None,
    *,
    redis_url: str,
    secret: str | None,
    namespace: str | None,
) -> ClusterHub:
    """An arena that is one of several processes: sessions signed with `secret` (shared by
    all, so a person is known on each); `namespace` keeps their Redis keys apart from other
    arenas' (default: the store's run, else "arena")."""
    if not secret:
        raise ValueError("a multi-process arena needs a shared session secret")
    name = namespace or (store.run_id if store is not None else "arena")
    worker = store.worker if store is not None else "arena"
    cluster = Cluster(
        setup,
        redis_url,
        name,
        worker,
        clock=clock,
        on_finished=on_finished,
        store=store,
        sessions=SignedSessions(secret),
    )
    return ClusterHub(cluster, store)


class ClusterHub:
    def __init__(self, cluster: Cluster, store: ArenaStore | None) -> None:
        """`store`: the start-up study's, which /healthz asks after (None: none)."""
        self._cluster = cluster
        self._store = store
        self._started = False  # the cluster's shared parts (Redis, blind matching) exist

    @property
    def arena(self) -> Arena:
        return self._cluster.arena

    @property
    def process(self) -> str | None:
        return self._cluster.me

    @property
    def study_fixed(self) -> str | None:
        # Each process would have to switch at once, or they would disagree on the study.
        return STUDY_FIXED

    @property
    def people_scope(self) -> str:
        return PEOPLE_HERE

    async def start(self) -> None:
        await self._cluster.start()
        self._started = True

    async def stop(self) -> None:
        await self._cluster.stop()

    async def tick(self) -> None:
        self.arena.tick()
        try:
            await self._cluster.tick()
        except (RedisConnectionError, RedisTimeoutError) as err:
            # Redis restarting or paused: expected, and the next tick tries again.
            log.warning("cluster tick failed: Redis unreachable (%s)", err)
        except Exception:
            log.exception("cluster tick failed")

    async def connect(
        self, person: Participant, outlet: Outlet, resume: ResumePoint | None
    ) -> None:
        try:
            with (
                said_if_slow(log, "connect-slow", participant=person.id),
                told_while_waiting(outlet),
            ):
                await self._cluster.connect(person, outlet, resume)
        except RedisError as err:
            raise HubUnreachable(str(err)) from err

    async def handle(self, person: Participant, frame: F.ClientFrame) -> None:
        try:
            with said_if_slow(log, "input-slow", participant=person.id, frame=frame.type):
                await self._cluster.handle(person, frame)
        except RedisError as err:
            raise HubUnreachable(str(err)) from err

    async def disconnect(self, person: Participant, outlet: Outlet) -> None:
        await self._cluster.disconnect(person, outlet)

    async def withdraw(self, person: Participant) -> None:
        self.arena.withdraw(person)
        await self._cluster.leave_queues(person.id)  # no other process may seat them now

    async def live_games(self) -> list[dict[str, Any]]:
        return await self._cluster.live_games()

    async def owner_of(self, gid: str) -> str | None:
        if plays_here(self.arena, gid):
            return HERE
        found = [g for g in await self._cluster.live_games() if g["game"] == gid]
        return str(found[0]["owner"]) if found and found[0].get("owner_alive") else None

    async def end_game(self, owner: str, gid: str, reason: str) -> None:
        if owner == HERE:
            end_by_admin(self.arena, gid, reason)
        else:  # its owner ends it (admin_end.py, over Redis)
            self._cluster.ask_to_end(owner, gid, reason)

    def fallbacks_here(self) -> int:
        """The lobby's, and blind matching's across processes (shared_blind.py) once started."""
        shared = self._cluster.blind.fallbacks if self._started else 0
        return blind_fallbacks(self.arena) + shared

    async def study_fallbacks(self) -> int:
        return await self._cluster.study_fallbacks()

    def metric_rows(self) -> list[list[str]]:
        m = self.arena.metrics
        name = PREFIX + "relay_latency_seconds"
        return [
            metric("takeovers_total", "counter", "Games taken over here.", m.takeovers),
            metric("fenced_total", "counter", "Games given up here (fenced).", m.fenced),
            metric(
                "redis_reconnects_total",
                "counter",
                "Times the Redis listener reconnected.",
                m.redis_reconnects,
            ),
            metric(
                "redis_commands_lost_total",
                "counter",
                "Redis commands dropped after retrying.",
                m.redis_commands_lost,
            ),
            metric(
                "catchups_total",
                "counter",
                "Missed frames asked of a game's owner after Redis came back.",
                m.catchups,
            ),
            [
                f"# HELP {name} From a game's owner publishing a frame to its delivery here.",
                f"# TYPE {name} histogram",
                *m.relay.lines(name),
            ],
        ]

    async def health(self) -> dict[str, bool]:
        return await health_checks(self._store, self._cluster)
