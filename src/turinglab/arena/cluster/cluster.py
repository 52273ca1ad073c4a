"""Several arena processes as one arena: Redis between them, the store (PostgreSQL) under them.

A game is played in the process that created it (its Table lives there). Everything else is
routed through Redis, with no coordination of our own beyond what Redis does atomically:

* matchmaking: one Redis list per mode; a Lua script (atomic in Redis) either takes a waiting
  partner from it or queues the caller, so two processes never take the same person; the
  study's round books (rounds per role, AI witness groups met) are in Redis as well
  (shared_rounds.py), so role quotas and "rounds done" hold whichever process seats a person;
  with a study design, matching is blind instead, over shared offer sets (shared_blind.py);
* who plays where: `player:<id>` names the game and the process that owns it;
* inputs: a person connected to another process has their frames forwarded to the owner's
  channel `proc:<owner>`;
* frames: every frame for a person is published on their channel `to:<id>`, which a process
  subscribes to while it holds a socket of theirs (and it ignores what it published itself).

Each process remembers which process owns a person's game (from the frames it relays, and
from a page's connect), so an input costs a Redis look-up only when that is not known. Where
Redis has no route for someone, the store is asked (cluster_store_routes.py): a page that comes
back after its game ended on another process is sent the end it missed by that process, or,
when that process has died or does not answer at once, shown it here from the store
(stored_end.py).

Session cookies are signed with a secret all processes share, so a person is known everywhere.

A process that dies takes its games' tasks with it, not their data: each process keeps a
heartbeat key `alive:<process>` with a TTL (`takeover_after_s`) and is listed in `procs`. When a
listed process's key has expired, any other process claims its games that are still playing in
the store — one `UPDATE games … WHERE worker = <lost>`, so each game goes to exactly one
claimant — and rebuilds them from the stored messages (cluster_takeover.py, takeover.py); the
claim also moves the people's `player:<id>` routes, so they land on the new owner wherever they
reconnect. Its people connected here are told their game is moving, and their inputs and
reconnects wait until their game is rebuilt (none goes to the dead owner, none is shown the
lobby meanwhile). The heartbeat is renewed by a task of its own: a long tick must not make a
live process look dead. People it had queued or waiting blind reconnect elsewhere without
joining again: the process they reach tells them they wait and, once the dead one's heartbeat
has gone, adopts them (queue_adopt.py, shared_blind.py), so each is matched or timed out
there, not left untold.

Pub/sub keeps nothing for a subscriber that is away, so after the listener reconnects (Redis
restarted or cut off) a process asks the owner of each of its people's games for the frames
after the last one it relayed in order (resume.py), again each tick until the owner answers;
people's pages re-send inputs nobody answered, and the owner applies each input id once. The
owner also learns which processes hold a socket of each of its people (abandon.py).

`Cluster` is built in layers, one module per concern, each using only those below it (so no
module imports one above it): cluster_base.py (shared state, sending to other processes) <
cluster_routes.py (`player:<id>`, the arena's game hooks) < cluster_presence.py < cluster_queues.py
(open matching, `handle`) < cluster_heartbeat.py < cluster_catchup.py < cluster_relay.py (the
listener) < this module (lifecycle, connect, disconnect, tick). The `Cluster` builds this
process's `Arena` itself, handing it those hooks (core/game_hooks.py) as it is built: nothing of
the arena is swapped afterwards, and core never names the cluster.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import secrets
from time import monotonic, time
from typing import TYPE_CHECKING, Any

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from turinglab.arena.cluster.cluster_base import CATCHUP_S, beat_s
from turinglab.arena.cluster.cluster_heartbeat import RELAY_AGAIN_S
from turinglab.arena.cluster.cluster_messages import AdminEnd, Gone, Hello
from turinglab.arena.cluster.cluster_presence import HOLDER_GONE_S
from turinglab.arena.cluster.cluster_relay import STATE_FRAMES, ClusterRelay
from turinglab.arena.cluster.cluster_sessions import SignedSessions
from turinglab.arena.cluster.cluster_store_routes import ENDED_ASK_S, StoreRoutes
from turinglab.arena.cluster.cluster_takeover import PLAYER_TTL_S, Takeover
from turinglab.arena.cluster.queue_adopt import QueueAdopt
from turinglab.arena.cluster.shared_blind import SharedBlind
from turinglab.arena.cluster.shared_rounds import SharedRounds
from turinglab.arena.core import frames as F
from turinglab.arena.core.game_hooks import GameHooks
from turinglab.arena.core.hub import Arena, FinishedHook
from turinglab.arena.core.live import Outlet
from turinglab.arena.core.participants import Participant, Sessions
from turinglab.arena.core.person_view import RELAY_DELAYED
from turinglab.arena.core.resume import ResumePoint
from turinglab.games.clock import REAL_CLOCK, Clock

if TYPE_CHECKING:
    from turinglab.arena.core.modes import ArenaSetup
    from turinglab.arena.core.store_bridge import ArenaStore

log = logging.getLogger(__name__)

# Imported from here by the web layer, tests and benchmarks.
__all__ = [
    "CATCHUP_S",
    "HOLDER_GONE_S",
    "STATE_FRAMES",
    "Cluster",
    "SignedSessions",
    "health_checks",
]

HEALTH_TIMEOUT_S = 2.0


async def health_checks(store: ArenaStore | None, cluster: Cluster | None) -> dict[str, bool]:
    """Whether each service this process needs answers now: the store (one query), Redis (a
    PING) and the Redis listener (connected and subscribed)."""
    checks: dict[str, bool] = {}
    if store is not None:
        checks["store"] = await _answers(asyncio.to_thread(store.store.ping))
    if cluster is not None and cluster.redis is not None:
        checks["redis"] = await _answers(cluster.redis.ping())
        checks["listener"] = cluster.listening
    return checks


async def _answers(call: Any) -> bool:
    try:
        await asyncio.wait_for(call, HEALTH_TIMEOUT_S)
    except Exception:
        return False
    return True


class Cluster(ClusterRelay):
    def __init__(
        self,
        setup: ArenaSetup,
        url: str,
        namespace: str,
        name: str = "arena",
        *,
        clock: Clock = REAL_CLOCK,
        on_finished: FinishedHook | None = None,
        store: ArenaStore | None = None,
        sessions: Sessions | None = None,
    ) -> None:
        """This process's arena is built here, with this cluster's hooks (game_hooks.py): an
        arena takes its hooks as it is built, and these are the cluster's own methods, so the
        cluster builds the arena rather than being handed one. None is called before a game
        opens, long after this returns."""
        hooks = GameHooks(
            game_started=self._game_started,
            game_ended=self._game_ended,
            rounds_given_back=self._rounds_back,
            game_fenced=self._fenced,
            present=self._present,
            seat_gone_since=self._note_gone,
        )
        arena = Arena(setup, clock, on_finished, store, sessions, hooks=hooks)
        super().__init__(arena, url, namespace, name)
        self.takeover = Takeover(self)
        self.routes = StoreRoutes(self)

    # ---- lifecycle -------------------------------------------------------------------------

    async def start(self) -> None:
        # A blocking pool: a burst of look-ups waits for a connection instead of failing.
        pool = aioredis.BlockingConnectionPool.from_url(
            self.url, max_connections=32, timeout=None, decode_responses=True
        )
        self.redis = aioredis.Redis(connection_pool=pool)
        await self.redis.ping()
        self.books = SharedRounds(self.redis, self.ns, PLAYER_TTL_S, self.routes.past_rounds)
        # A study design's blind matching (shared_blind.py); each process draws its own.
        rng = random.Random(f"{self.arena.setup.settings.seed}:{self.me}")
        sessions = self.arena.sessions  # the draws' secret, the same on every process
        draws = secrets.token_hex(16)
        if isinstance(sessions, SignedSessions):
            draws = sessions.derived("blind-draws")
        self.blind = SharedBlind(
            self.redis,
            self.books,
            self.me,
            self.arena.clock,
            rng,
            self._seat_ids,
            self._no_match,
            self._finished_short,
            secret=draws,
        )
        self.queued = QueueAdopt(self.redis, self.ns, self.me)
        pubsub = self._pubsub = self.redis.pubsub()
        await pubsub.subscribe(self.ns + "proc:" + self.me)
        self._following = True
        await self._say_listening()
        await self._beat()
        self._tasks = [
            asyncio.create_task(self._listen_supervised(), name="arena-cluster-listen"),
            asyncio.create_task(self.outbox.run(self.redis), name="arena-cluster-send"),
            asyncio.create_task(self._beat_loop(), name="arena-cluster-beat"),
            asyncio.create_task(self._relay_watch(), name="arena-cluster-relay-watch"),
        ]

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(BaseException):
                await task
        if self.redis is not None:
            await self.redis.aclose()

    async def tick(self) -> None:
        """Owners asked again, takeovers; a lone waiter meets AI witnesses, or is sent on, if
        nobody took them meanwhile."""
        if self._beat_failing:
            return
        now_m, settings = monotonic(), self.arena.setup.settings
        asks = asyncio.Semaphore(16)  # at once: after a SIGKILL ~1,000 people ask

        async def ask_again(pid: str, until: float) -> None:
            async with asks:
                await self._ask_again(pid, until, now_m)

        await asyncio.gather(*(ask_again(p, u) for p, u in list(self.catchup.items())))
        self._tell_unanswered(monotonic())
        await self._route_unrouted()
        try:
            # (a tenth's slack: ticks come every TICK_S, not to the microsecond)
            if now_m - self._deaths_looked >= 0.9 * beat_s(settings.takeover_after_s):
                await self.takeover.take_over_lost()
                await self._forget_dead_holders()
                self._deaths_looked = now_m  # one that failed is tried again next tick
        except RedisError as err:  # Redis restarting or paused: expected; no traceback
            log.warning("takeover failed (Redis: %s); trying again", err)
        except Exception:  # the store hiccuped: try again next tick, match people now
            log.exception("takeover failed; trying again")
        book, mode_of = self.arena.lobby.rounds, self.arena.setup.mode
        await self.blind.watch_elsewhere(self._run(), settings, book, mode_of)
        await self.blind.tick(self._run(), book)
        await self._tick_queues(settings)

    async def study_fallbacks(self) -> int:
        """Blind matching's fallbacks on every process of this study (shared_blind.py)."""
        return await self.blind.study_fallbacks(self._run())

    # ---- what people do --------------------------------------------------------------------

    async def connect(
        self, participant: Participant, outlet: Outlet, resume: ResumePoint | None = None
    ) -> None:
        self.person(participant.id)
        self.sockets[participant.id] = self.sockets.get(participant.id, 0) + 1
        self.left_here.pop(participant.id, None)
        self.outbox.put("delete", self.ns + "left:" + participant.id)  # back: not gone
        await self._follow(participant.id)
        self.owners.pop(participant.id, None)  # a (re)connect asks Redis: the owner may be new
        try:
            # Their rounds may have been counted by another process since this one last looked.
            await self.books.load(self._run(), participant.id, self.arena.lobby.rounds)
            await self._route(participant, outlet, resume)
        except RedisError:
            if not self._back_in_game_here(participant, outlet, resume):
                raise

    def _back_in_game_here(
        self, participant: Participant, outlet: Outlet, resume: ResumePoint | None
    ) -> bool:
        """Redis away as they connect: one whose game is played here, which needs nothing of
        Redis, is back in it, not kept out until counted gone (sim `redis-cut`, seed 98: the
        only process left cut off, a witness reconnecting for 18 s told they had left)."""
        here = self.arena.games.get(participant.game or "")
        if here is None or here.result is not None:
            return False
        log.warning("connect %s: Redis away; back in their game here", participant.id)
        self.arena.connect(participant, outlet, resume)
        return True

    async def _route(
        self, participant: Participant, outlet: Outlet, resume: ResumePoint | None
    ) -> None:
        """Send a page connecting here to its game (here or elsewhere), its wait, or the
        lobby, as Redis's route and else the store say."""
        self.routes.read_failed = False  # only this routing's reads count
        owner = await self.takeover.owner_once_rebuilt(participant.id)
        if owner is None:
            owner = await self.routes.live_owner(participant)
        if owner is None and resume is not None:
            owner = await self._ended_elsewhere(participant, resume)
        # A game taken over here while Redis was asked is known here first.
        here = self.arena.games.get(participant.game or "")
        if here is not None and here.result is None:
            owner = self.me  # a game taken over here while Redis was asked
        log.debug("connect %s: owner %s, game here %s", participant.id, owner, here is not None)
        if owner is None and resume is not None and self._nowhere_known(resume):
            self._hold_unrouted(participant.id, outlet, resume)
        elif owner is not None and owner != self.me:  # their game is elsewhere: ask for it
            # Known from now, however found (route, store): it is asked again while it does not
            # answer (_ask_owner) and told when they leave (`disconnect`). Its answer to a page
            # resuming is the frames missed, not a snapshot (which is what set it, in _deliver).
            self.owners[participant.id] = owner
            self.arena.outlets.setdefault(participant.id, set()).add(outlet)
            self._holding(owner, Hello(pid=participant.id, sender=self.me, resume=resume))
            # Asked again each tick until it answers: the owner may have died (its games are
            # taken over and their routes moved), or died leaving a stale route (_ask_owner).
            asking = ENDED_ASK_S if participant.id in self._asking_ended else CATCHUP_S
            self.catchup[participant.id] = monotonic() + asking
        elif not await self._waits(participant.id, outlet):
            if owner is None:
                self._left_elsewhere(participant, resume)
            if participant.game is None:
                await self._counted_right(participant.id)
            self.arena.connect(participant, outlet, resume)

    def _nowhere_known(self, resume: ResumePoint) -> bool:
        """A page resuming a game not played here that Redis has no route for (it restarted
        empty) while the store cannot say either (out, or its read failed): the game may go
        on elsewhere, so the lobby would be wrong (sim seed 128 under `postgres`: shown the
        lobby mid-game, then its verdict lost)."""
        return resume.game not in self.arena.games and self.routes.unsure()

    def _hold_unrouted(self, pid: str, outlet: Outlet, resume: ResumePoint) -> None:
        """Told to wait, and routed again at a tick once the store answers."""
        if pid not in self._unrouted:
            log.warning("connect %s: no route and the store out; routed once it answers", pid)
        self._unrouted[pid] = (outlet, resume, monotonic())
        outlet(F.Error(code="relay-delayed", message=RELAY_DELAYED))

    async def _route_unrouted(self) -> None:
        now_m = monotonic()
        for pid, (outlet, resume, told_at) in list(self._unrouted.items()):
            if self.routes.out():  # still out: told again while it lasts
                if now_m - told_at >= RELAY_AGAIN_S:
                    self._hold_unrouted(pid, outlet, resume)
                continue
            if self._unrouted.get(pid, (None,))[0] is not outlet:  # another socket meanwhile
                continue
            del self._unrouted[pid]
            if self.sockets.get(pid, 0) > 0:
                await self._route(self.person(pid), outlet, resume)

    async def disconnect(self, participant: Participant, outlet: Outlet) -> None:
        left = self.sockets.get(participant.id, 0) - 1
        if left > 0:  # another socket of theirs is here, maybe still connecting: they stay
            self.sockets[participant.id] = left
            self.arena.outlets.get(participant.id, set()).discard(outlet)
            return
        self.arena.disconnect(participant, outlet)  # their last page here: out of the lobby
        self.sockets.pop(participant.id, None)
        self._unrouted.pop(participant.id, None)
        self.closed_here[participant.id] = monotonic()
        queued = participant.id in self.waiting or participant.id in self.queued.elsewhere
        if queued or participant.id in self.blind.waiting or participant.id in self.blind.elsewhere:
            try:  # their last page here closed while queued: out of the shared queues now
                await self.leave_queues(participant.id)
            except RedisError as err:  # Redis restarting: their entry lapses with its TTL
                log.warning("redis: %s not taken out of the queue (%s)", participant.id, err)
            if self.sockets.get(participant.id, 0) > 0:
                # They connected again here while being let go (a page reloaded): what
                # follows is that new socket's now, its channel above all, or frames relayed
                # to them from another process (their next game's) would reach nobody.
                return
        self.blind.elsewhere.pop(participant.id, None)  # watched from where they reconnect
        self.queued.forget(participant.id)
        self.seen.pop(participant.id, None)
        self.catchup.pop(participant.id, None)
        self._held_joins.pop(participant.id, None)
        self._input_sent.pop(participant.id, None)
        self._game_shown.pop(participant.id, None)
        turn = self._queue_turns.get(participant.id)
        if turn is not None and not turn.locked():  # a join waiting on it keeps it
            del self._queue_turns[participant.id]
        told = self._told_holding.pop(participant.id, set())
        owner = self.owners.get(participant.id)
        if owner is not None:
            told.add(owner)
            if owner != self.me:  # for whoever takes that game over, should its owner die
                self.left_here[participant.id] = time()
                self.outbox.put("set", self.ns + "left:" + participant.id, f"{time():.3f}")
        if participant.id in self._taken_as_they_left:  # seated by a process not known here
            self._taken_as_they_left.discard(participant.id)
            with contextlib.suppress(RedisError):
                assert self.redis is not None
                told |= {str(p) for p in await self.redis.smembers(self.ns + "procs")}
        for process in told - {self.me}:  # their game's owner counts them gone now
            self._forward(process, Gone(pid=participant.id, sender=self.me))
        self._note_told_gone(participant.id, told - {self.me})
        with contextlib.suppress(Exception):  # the process may be shutting down
            await self._follow(participant.id)  # unless connected again meanwhile

    def ask_to_end(self, owner: str, gid: str, reason: str) -> None:
        """Have process `owner` end its game `gid` for the admin (admin_end.py)."""
        self._forward(owner, AdminEnd(game=gid, reason=reason))
