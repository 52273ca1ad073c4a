"""The state every part of a cluster process shares, and how it sends to other processes.

A `Cluster` (cluster.py) is built in layers, each a module of one concern that may use the
layers below it, never those above: this base (state, outgoing messages) < routes
(cluster_routes.py) < presence (cluster_presence.py) < queues and inputs (cluster_queues.py)
< heartbeat (cluster_heartbeat.py) < catch-up (cluster_catchup.py) < the listener
(cluster_relay.py) < Cluster (lifecycle, connect, disconnect, tick). `handle`, through which
the catch-up and the listener play inputs, is in the queues layer for that reason.
"""

from __future__ import annotations

import asyncio
import json
import secrets
from time import monotonic, time
from typing import TYPE_CHECKING, Any

import redis.asyncio as aioredis

from turinglab.arena.cluster.cluster_messages import (
    Hello,
    Here,
    Input,
    ToProcess,
    encode,
    own_prefix,
    relayed_payload,
)
from turinglab.arena.cluster.cluster_sessions import SignedSessions
from turinglab.arena.cluster.cluster_store_routes import StoreRoutes
from turinglab.arena.cluster.cluster_takeover import PLAYER_TTL_S, Takeover
from turinglab.arena.cluster.queue_adopt import QueueAdopt
from turinglab.arena.cluster.redis_outbox import RedisOutbox
from turinglab.arena.cluster.shared_blind import SharedBlind
from turinglab.arena.cluster.shared_rounds import SharedRounds
from turinglab.arena.core import frames as F
from turinglab.arena.core.live import Outlet
from turinglab.arena.core.participants import Participant
from turinglab.arena.core.resume import ResumePoint

if TYPE_CHECKING:
    from turinglab.arena.core.hub import Arena

CATCHUP_S = 30.0  # after Redis is back, how long a process keeps asking owners for missed frames


def beat_s(takeover_after_s: float) -> float:
    """How often this process renews its heartbeat, and reads the others' for deaths: a tenth
    of the heartbeat's TTL (the takeover delay, 10 s by default), kept within 0.5-1 s. Beating
    and reading every 0.5 s whatever the TTL was most of an idle process's Redis commands."""
    return min(1.0, max(0.5, takeover_after_s / 10))


class ClusterBase:
    # Made once Redis is there (Cluster.start).
    books: SharedRounds
    blind: SharedBlind
    queued: QueueAdopt
    # Built by Cluster, which they are handed (typed by cluster_view.py's protocol).
    takeover: Takeover  # games of processes that die (cluster_takeover.py)
    routes: StoreRoutes  # where the store says people are (no route in Redis)

    def __init__(self, arena: Arena, url: str, namespace: str, name: str = "arena") -> None:
        self.arena = arena
        self.url = url
        self.ns = f"turinglab:arena:{namespace}:"
        # Unique per process (a restart is a new process): what the store's `games.worker` says.
        self.me = f"{name}/{secrets.token_hex(4)}"
        if arena.store is not None:
            arena.store.worker = self.me
            arena.store.store.name_sessions(self.me)  # what a takeover ends, if need be
        self.redis: aioredis.Redis | None = None
        self.outbox = RedisOutbox(arena.metrics, PLAYER_TTL_S)  # what this process tells Redis
        self._tasks: list[asyncio.Task[None]] = []
        self._publishers: dict[str, Outlet] = {}
        self.waiting: dict[str, tuple[str, float]] = {}  # pid -> (mode, since), queued here
        # pid -> (mode, since): told they wait, not queued yet, as Redis lost their round book
        # and the store could not say what it held (cluster_queues.py: queued at a tick).
        self._unbooked: dict[str, tuple[str, float]] = {}
        # pid -> (socket, its resume point, monotonic s told): a page held as neither Redis nor
        # the store could say where its game is (cluster.py: routed at a tick once it answers).
        self._unrouted: dict[str, tuple[Outlet, ResumePoint, float]] = {}
        # pid -> (mode, waited, monotonic s): taken from the queue here by another process.
        self._taken: dict[str, tuple[str, float, float]] = {}
        # Taken from the queue here by another process just as they were let go: whichever it
        # is (not known yet) counts them present through this one until told (`disconnect`).
        self._taken_as_they_left: set[str] = set()
        self.owners: dict[str, str] = {}  # pid -> the process playing their game, when known
        self.sockets: dict[str, int] = {}  # pid -> sockets of theirs held here
        # One queue change at a time per person: a page that closes and reconnects at once
        # sends a join while its close's leave still awaits Redis, and that leave must not
        # take the new join's entries out after they are written.
        self._queue_turns: dict[str, asyncio.Lock] = {}
        self._pubsub: Any = None
        self.listening = False  # the Redis listener is connected and subscribed (/healthz)
        # Whose channels `_pubsub` holds (ClusterCatchup._follow), changed one at a time; not
        # `_following` while the listener is lost (its resubscribe takes whoever is here).
        self._followed: set[str] = set()
        self._following = False
        self._subscribing = asyncio.Lock()
        self._mine = own_prefix(self.me)  # how our own relayed frames begin
        # pid -> the last frame of their game stream relayed here in order (resume.py), and
        # people still to be caught up after Redis came back (pid -> when to stop asking).
        self.seen: dict[str, ResumePoint] = {}
        self.catchup: dict[str, float] = {}
        self._unanswered: dict[str, tuple[float, float]] = {}  # pid -> (asked since, told at)
        # pid -> when an input of theirs that the owner answers (one with an id: an ack) was
        # sent on to it, with nothing relayed back since.
        self._input_sent: dict[str, float] = {}
        # pid -> when their last socket here closed while their game was played elsewhere:
        # if that owner dies, the survivor taking it over here knows when they left.
        self.left_here: dict[str, float] = {}
        # pid -> when their last socket here closed (monotonic), whoever plays their game: a
        # person back here after a death and gone again left then, not at the death.
        self.closed_here: dict[str, float] = {}
        # pid -> a join they sent while their last game's owner had not answered yet: played
        # once it has (or is known gone), not sent to an owner that may have died with it.
        self._held_joins: dict[str, F.Join] = {}
        self._asking_ended: set[str] = set()  # asked for the end of a game played elsewhere
        self._beat_failing = False
        self._beat_ok = monotonic()  # when a heartbeat last went through
        # When one went through again after a silence (Redis paused or cut off, this process
        # stalled): other processes' heartbeats lapsed in it too (cluster_takeover.py).
        self.beat_back: float | None = None
        # When its heartbeat was last found gone (Redis back empty, or this process stopped
        # past its TTL): nobody's subscriptions were kept through it (cluster_takeover.py).
        self.beat_lapsed: float | None = None
        self._cut_off_said = False  # "redis-cut-off" logged for this outage (said once)
        self._cut_off_alone_said = False  # and "redis-cut-off-alone"
        self._relay_told = False  # people relayed from elsewhere were told Redis is silent
        self._registered = False  # the first beat registered this process
        self._register_again = False  # a registration failed half-way: the next beat redoes it
        self._game_shown: dict[str, str] = {}  # pid -> the last game relayed here from another
        # pid -> the other processes holding a socket of theirs, as they told us (abandon.py).
        self.holders: dict[str, set[str]] = {}
        # pid -> the processes we told we hold a socket of theirs: each is told when we no
        # longer do, or it counts them present for good (not only the owner we know now: one
        # asked during a takeover may answer after the socket closed).
        self._told_holding: dict[str, set[str]] = {}
        # pid -> (the processes told we no longer hold their socket, when): told again when our
        # listener is back, in case theirs was away then (cluster_presence.py).
        self._told_gone: dict[str, tuple[set[str], float]] = {}
        self._beat_missing: dict[str, float] = {}  # holder -> seen without a heartbeat since
        self._deaths_looked = -1e9  # when the others' heartbeats were last read for deaths
        self._held_tasks: set[asyncio.Task[None]] = set()

    def _publisher(self, pid: str) -> Outlet:
        outlet = self._publishers.get(pid)
        if outlet is None:

            def outlet(frame: F.ServerFrame) -> None:
                payload = relayed_payload(self._mine, pid, time(), frame.model_dump_json())
                self.outbox.put("publish", self.ns + "to:" + pid, payload)

            self._publishers[pid] = outlet
        return outlet

    def person(self, pid: str) -> Participant:
        """A participant whose frames also reach their sockets on other processes."""
        sessions = self.arena.sessions
        p = sessions.ensure(pid) if isinstance(sessions, SignedSessions) else sessions.by_id[pid]
        self.arena.outlets.setdefault(pid, set()).add(self._publisher(pid))
        return p

    def _forward(self, owner: str, message: ToProcess) -> None:
        self.outbox.put("publish", self.ns + "proc:" + owner, encode(message))

    async def _say_listening(self) -> None:
        """Once subscribed (at start, and again after Redis came back): `listening:<me>` is
        in this Redis, so its subscriptions are too, and a survivor may judge from them
        whether this process was killed or stopped (Takeover.was_killed)."""
        assert self.redis is not None
        await self.redis.set(self.ns + "listening:" + self.me, "1", ex=PLAYER_TTL_S)

    def _holding(self, owner: str, message: Hello | Here | Input) -> None:
        """Send `message` (from this process) about a person with a socket here: `owner`
        counts them present through us until told they have gone (`disconnect`)."""
        self._told_holding.setdefault(message.pid, set()).add(owner)
        self._forward(owner, message)

    def _later(self, work: Any) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._held_tasks.add(task)
        task.add_done_callback(self._held_tasks.discard)

    def _run(self) -> str:
        """Whose books: the study being run (a new study starts fresh books)."""
        store = self.arena.store
        return "-" if store is None else store.run_id

    async def owner(self, pid: str) -> str | None:
        known = self.owners.get(pid)
        if known is not None:
            return known
        assert self.redis is not None
        found = await self.redis.get(self.ns + "player:" + pid)
        return None if found is None else str(json.loads(found)["owner"])
