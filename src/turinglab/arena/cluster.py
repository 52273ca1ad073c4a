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
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import json
import logging
import random
import secrets
from time import monotonic, time
from typing import TYPE_CHECKING, Any

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from turinglab.arena import frames as F
from turinglab.arena.admin_end import end_by_admin
from turinglab.arena.cluster_store_routes import ENDED_ASK_S, StoreRoutes
from turinglab.arena.cluster_takeover import PLAYER_TTL_S, Takeover
from turinglab.arena.live import SERVER_LOST, InputRejected, LiveGame, Outlet
from turinglab.arena.metrics import fault
from turinglab.arena.queue_adopt import QueueAdopt
from turinglab.arena.redis_outbox import RedisOutbox
from turinglab.arena.resume import ResumePoint
from turinglab.arena.sessions import Participant, Sessions
from turinglab.arena.shared_blind import SharedBlind
from turinglab.arena.shared_rounds import SharedRounds
from turinglab.arena.stored_end import show_stored_end

if TYPE_CHECKING:
    from turinglab.arena.hub import Arena
    from turinglab.arena.modes import ArenaMode
    from turinglab.arena.store_bridge import ArenaStore

log = logging.getLogger(__name__)

CATCHUP_S = 30.0  # after Redis is back, how long a process keeps asking owners for missed frames
BEAT_S = 0.5  # how often the heartbeat is renewed (its TTL is the takeover delay)
# A heartbeat missing this long, as seen here, is a death: after Redis restarts empty every
# heartbeat is missing until its process beats again (within BEAT_S of Redis coming back, or
# later when that process is busy).
HOLDER_GONE_S = 5.0
# Redis silent this long (a heartbeat not through: paused, cut off, restarting), the people
# whose game is played on another process hear nothing from it: they are told, inside the
# 15 s a person may go without a frame or a notice, and told again once it is back.
RELAY_NOTICE_S = 5.0
RELAY_AGAIN_S = 10.0  # and again this often while it lasts
RELAY_DELAYED = "The connection to your game is delayed. Please wait: nothing you typed is lost."
RELAY_RESUMED = "Connected to your game again."
STATE_FRAMES = ("strong", "gtt", "itt-chat")  # the frame types of modes that send their state


class SignedSessions(Sessions):
    """Tokens are "<participant id>.<HMAC>": any process with the secret recognises them."""

    def __init__(self, secret: str) -> None:
        super().__init__()
        self._key = secret.encode()

    def _sign(self, pid: str) -> str:
        return hmac.new(self._key, pid.encode(), hashlib.sha256).hexdigest()

    def derived(self, label: str) -> str:
        """A secret of every process, for `label`: never a token's signature (no pid has
        a NUL), and telling nothing of the key."""
        return self._sign("\0" + label)

    def new(self) -> Participant:
        pid = f"p-{secrets.token_hex(6)}"
        p = Participant(id=pid, token=f"{pid}.{self._sign(pid)}")
        self.by_id[pid] = p
        return p

    def get(self, token: str | None) -> Participant | None:
        pid, _, sig = (token or "").partition(".")
        if not pid or not hmac.compare_digest(sig, self._sign(pid)):
            return None
        return self.ensure(pid)

    def ensure(self, pid: str) -> Participant:
        """This process's record of a person, made on first sight (from another process)."""
        p = self.by_id.get(pid)
        if p is None:
            p = self.by_id[pid] = Participant(id=pid, token=f"{pid}.{self._sign(pid)}")
        return p


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


class Cluster:
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
        # pid -> (mode, waited, monotonic s): taken from the queue here by another process.
        self._taken: dict[str, tuple[str, float, float]] = {}
        self.owners: dict[str, str] = {}  # pid -> the process playing their game, when known
        self.sockets: dict[str, int] = {}  # pid -> sockets of theirs held here
        # One queue change at a time per person: a page that closes and reconnects at once
        # sends a join while its close's leave still awaits Redis, and that leave must not
        # take the new join's entries out after they are written.
        self._queue_turns: dict[str, asyncio.Lock] = {}
        self._pubsub: Any = None
        self.listening = False  # the Redis listener is connected and subscribed (/healthz)
        self._mine = f'{{"o": "{self.me}",'  # how our own payloads begin
        # pid -> the last frame of their game stream relayed here in order (resume.py), and
        # people still to be caught up after Redis came back (pid -> when to stop asking).
        self.seen: dict[str, ResumePoint] = {}
        self.catchup: dict[str, float] = {}
        # pid -> a join they sent while their last game's owner had not answered yet: played
        # once it has (or is known gone), not sent to an owner that may have died with it.
        self._held_joins: dict[str, F.Join] = {}
        self._asking_ended: set[str] = set()  # asked for the end of a game played elsewhere
        self._beat_failing = False
        self._beat_ok = monotonic()  # when a heartbeat last went through
        # When one went through again after a silence (Redis paused or cut off, this process
        # stalled): other processes' heartbeats lapsed in it too (cluster_takeover.py).
        self.beat_back: float | None = None
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
        self._beat_missing: dict[str, float] = {}  # holder -> seen without a heartbeat since
        self._held_tasks: set[asyncio.Task[None]] = set()
        self.takeover = Takeover(self)  # games of processes that die (cluster_takeover.py)
        self.routes = StoreRoutes(self)  # where the store says people are (no route in Redis)
        arena.abandon.present = self._present
        arena.abandon.noted = self._note_gone
        arena.on_game_start = self._game_started
        arena.on_game_end = self._game_ended
        arena.on_rounds_back = self._rounds_back

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

    # ---- outgoing: one ordered stream of Redis commands, pipelined ----------------------------

    def _publisher(self, pid: str) -> Outlet:
        outlet = self._publishers.get(pid)
        if outlet is None:

            def outlet(frame: F.ServerFrame) -> None:
                # Spliced, not re-encoded: pydantic writes the frame's JSON itself. "t": when
                # it was sent, for the relay latency (metrics.py).
                payload = (
                    f'{self._mine} "p": {json.dumps(pid)}, "t": {time():.6f}, '
                    f'"f": {frame.model_dump_json()}}}'
                )

                self.outbox.put("publish", self.ns + "to:" + pid, payload)

            self._publishers[pid] = outlet
        return outlet

    def person(self, pid: str) -> Participant:
        """A participant whose frames also reach their sockets on other processes."""
        sessions = self.arena.sessions
        p = sessions.ensure(pid) if isinstance(sessions, SignedSessions) else sessions.by_id[pid]
        self.arena.outlets.setdefault(pid, set()).add(self._publisher(pid))
        return p

    # ---- incoming --------------------------------------------------------------------------

    async def _listen_supervised(self) -> None:
        """The listener, kept alive: a lost connection (Redis restarted, paused or cut off) is
        logged and retried with jittered backoff; once back, the process subscribes again,
        registers again (its heartbeat, its live games' routes) and asks the owners of its
        people's games for a fresh snapshot, since pub/sub kept nothing sent meanwhile."""
        while True:
            try:
                self.listening = True
                await self._listen(self._pubsub)
                raise ConnectionError("the subscription ended")
            except asyncio.CancelledError:
                raise
            except Exception as err:
                self.listening = False
                fault(log, "redis-listener-lost", logging.ERROR, process=self.me, error=str(err))
            backoff = 0.1
            while True:
                await asyncio.sleep(backoff * random.uniform(0.5, 1.5))
                backoff = min(backoff * 2, 5.0)
                try:
                    await self._resubscribe()
                    break
                except Exception as err:
                    log.warning("redis: still unreachable (%s)", err)
            self.arena.metrics.redis_reconnects += 1
            fault(log, "redis-listener-back", process=self.me, catching_up=len(self.catchup))

    async def _resubscribe(self) -> None:
        assert self.redis is not None
        old, pubsub = self._pubsub, self.redis.pubsub()
        channels = [self.ns + "proc:" + self.me, *(self.ns + "to:" + p for p in self.sockets)]
        await pubsub.subscribe(*channels)
        self._pubsub = pubsub
        with contextlib.suppress(Exception):
            await old.aclose()
        await self._beat(force=True)
        # Frames published while we were away are gone, and so may be any sent before the
        # owner's own listener is back: ask each owner for what we missed until it answers.
        until = monotonic() + CATCHUP_S
        for pid in list(self.sockets):
            self.catchup[pid] = until
            await self._ask_owner(pid)

    async def _ask_owner(self, pid: str) -> None:
        """Ask the owner of `pid`'s game (elsewhere) for the frames after the last relayed
        here in order, or a fresh state; the answer (`resumed`, a snapshot or a status)
        ends the catch-up."""
        # The route first: the cached owner may be one of an earlier game whose end was
        # missed (Redis was down), which would answer with that game or the lobby. Without
        # a route (Redis restarted, owners not registered again yet) the cache is all we have.
        assert self.redis is not None
        route = await self.redis.get(self.ns + "player:" + pid)
        owner = str(json.loads(route)["owner"]) if route is not None else self.owners.get(pid)
        if owner is None or owner == self.me:
            if pid in self._asking_ended:  # where their game ended was found dead meanwhile
                await self._on_from_here(pid)
            else:
                self._answered(pid)
            return
        if await self._route_state(pid, owner) == "stale":
            # A route left by a process that died before it deleted it (the game had ended,
            # so no takeover moved it): nobody will answer. The person is where this process
            # says they are (the lobby, rounds done, ...), or waits for a match: maybe queued
            # on that process (a join after their game there ended), adopted here then.
            assert self.redis is not None
            log.debug(
                "stale route of %s (owner %s), held join %s", pid, owner, pid in self._held_joins
            )
            await self.redis.delete(self.ns + "player:" + pid)
            await self._on_from_here(pid)
            return
        hello: dict[str, Any] = {"p": pid, "hello": True}
        point = self.seen.get(pid)
        if point is not None:
            hello["resume"] = point.as_dict()
        self.arena.metrics.catchups += 1
        self._holding(owner, hello)

    async def _on_from_here(self, pid: str) -> None:
        """Nobody will answer for `pid`'s last game: they are where this process says they
        are (the lobby, rounds done, ...), or wait for a match, maybe queued on a process that
        died (adopted here then). A join held meanwhile answers them itself (_answered)."""
        self.owners.pop(pid, None)  # or a join would be held for it again
        person = self.person(pid)
        point = self.seen.pop(pid, None) if pid in self._asking_ended else None
        if point is not None and await self._end_from_store(person, point.game):
            # The end they missed, from the store, answering their resume as a resume is
            # answered (`resumed` last: a page whose join went with the dead process sends
            # it again then), not the lobby yet.
            self.arena.resume(person, point)
        elif pid not in self._held_joins and not await self._waits(pid):
            await self._counted_right(pid)
            self.arena.send(person, self.arena.state_frame(person))
        self._answered(pid)

    def _answered(self, pid: str) -> None:
        """The owner of `pid`'s last game answered (or is known gone): no more asking, and a
        join held meanwhile is played now."""
        self.catchup.pop(pid, None)
        if pid in self._asking_ended:  # that game is over: what they do next starts here
            self._asking_ended.discard(pid)
            self.owners.pop(pid, None)
        join = self._held_joins.pop(pid, None)
        if join is not None and pid in self.sockets:
            asyncio.get_running_loop().create_task(self._play_held(pid, join))

    async def _play_held(self, pid: str, join: F.Join) -> None:
        person = self.person(pid)
        try:
            await self.handle(person, join)
        except InputRejected as err:
            self.arena.send(person, F.Error(code=err.code, message=str(err)))

    async def _route_state(self, pid: str, owner: str) -> str:
        """Where Redis routes `pid` to `owner`: "stale" when that process has died and been
        taken over (its heartbeat expired, no longer listed: take_over_lost unlists it once
        its games are claimed and their routes moved), "taking-over" while it is dead but
        still listed, else "live". After Redis restarted empty there is no route (and a live
        owner registers again, listing itself before it routes its people)."""
        assert self.redis is not None
        route = await self.redis.get(self.ns + "player:" + pid)
        if route is None or json.loads(route)["owner"] != owner:
            return "live"
        if await self.redis.exists(self.ns + "alive:" + owner):
            return "live"
        listed = await self.redis.sismember(self.ns + "procs", owner)
        return "taking-over" if listed else "stale"

    async def _listen(self, pubsub: Any) -> None:
        async for item in pubsub.listen():
            if item.get("type") != "message":
                continue
            if item["data"].startswith(self._mine):
                continue  # our own publish, to a person who also has a socket here
            try:
                data = json.loads(item["data"])
                if item["channel"].startswith(self.ns + "to:"):
                    if not await self._stale(data):
                        self._deliver(data)
                else:
                    await self._forwarded(data)
            except Exception:
                log.exception("redis: bad message on %s", item.get("channel"))

    async def _stale(self, data: dict[str, Any]) -> bool:
        """Whether a frame comes from a process that no longer plays the person's game: one
        paused past its TTL wakes up with frames still queued, and must not show them to
        people whose game has moved on elsewhere (they may hold words never stored)."""
        pid, sender = data["p"], data["o"]
        if sender == self.me:
            return False
        # A lookup, not `person()`: judging a frame must not create a session or an outlet.
        known_person = self.arena.sessions.by_id.get(pid)
        game = self.arena.games.get((known_person.game if known_person else None) or "")
        if game is not None and game.result is None:
            return True  # their game is played here now
        known = self.owners.get(pid)
        if data["f"].get("type") != "game":
            return known is not None and known != sender
        if known is None or known == sender:
            return False
        # A snapshot from a new owner (a takeover) or from a stale one: the route says which.
        assert self.redis is not None
        try:
            route = await self.redis.get(self.ns + "player:" + pid)
        except Exception:  # Redis unreachable: the owner we know is still our best guess
            return True
        return route is not None and json.loads(route)["owner"] != sender

    def _deliver(self, data: dict[str, Any]) -> None:
        if data["o"] == self.me:
            return
        if "t" in data:
            self.arena.metrics.relay.observe(max(0.0, time() - float(data["t"])))
        frame, pid = data["f"], data["p"]
        kind = frame.get("type")
        if kind == "game":
            self._game_shown[pid] = str(frame.get("game"))
            # Queued here, seated by another process: not waiting here any more (else shown
            # "waiting" if they came back here after that game, until max_wait_s).
            self.waiting.pop(pid, None)
            if self.owners.get(pid) != data["o"] and pid in self.sockets:
                self._holding(data["o"], {"p": pid, "here": True})
            self.owners[pid] = data["o"]
        elif kind == "reveal":
            self.owners.pop(pid, None)  # over: the owner forgets the game too
        elif (
            kind in STATE_FRAMES  # a mode whose frame is its state: no "game" snapshot
            and pid in self.sockets
            and data["o"] not in self._told_holding.get(pid, ())
        ):  # its owner, too, counts this socket present until told it closed (presence.py)
            self._holding(data["o"], {"p": pid, "here": True})
        self._track(pid, frame)
        publisher = self._publishers.get(data["p"])
        for outlet in list(self.arena.outlets.get(data["p"], ())):
            if outlet is not publisher:
                outlet(data["f"])  # sockets take frames already dumped (app.py)

    def _track(self, pid: str, frame: dict[str, Any]) -> None:
        """Where `pid` is in their game stream, as relayed here in order (for a catch-up)."""
        kind, seen = frame.get("type"), self.seen.get(pid)
        if kind in ("game", "resumed", "strong", "gtt", "itt-chat") and frame.get("stream"):
            self.seen[pid] = ResumePoint(frame["game"], frame["stream"], int(frame.get("seq") or 0))
        elif kind == "status":
            self.seen.pop(pid, None)
        elif (
            seen is not None
            and frame.get("seq") == seen.seq + 1
            and frame.get("stream", seen.stream) == seen.stream
        ):
            self.seen[pid] = ResumePoint(seen.game, seen.stream, seen.seq + 1)
        if kind in ("game", "resumed", "status", "strong", "gtt", "itt-chat"):
            self._answered(pid)

    def _note_gone(self, gid: str, seat: str, since: float | None) -> None:
        """Keep when a person was first counted gone (wall time) for a takeover's new owner."""
        key = self.ns + "gone:" + gid
        if since is None:
            self.outbox.put("hdel", key, seat)
        else:
            self.outbox.put("hset", key, seat, f"{time():.3f}")

    def _present(self, view: Any) -> bool:
        """Whether a person has a socket open here or on another (live) process. A socket
        whose connect is still under way here counts: after a takeover the survivor may take
        longer than the grace to connect the dead process's people (their routes, rounds,
        rebuilt games), and they are back, not gone."""
        pid, relay = view.participant.id, self._publishers.get(view.participant.id)
        return (
            self.sockets.get(pid, 0) > 0
            or any(o is not relay for o in view.outlets)
            or bool(self.holders.get(pid))
        )

    async def _forwarded(self, data: dict[str, Any]) -> None:
        if "admin_end" in data:  # the admin, on another process, ended a game played here
            end_by_admin(self.arena, str(data["admin_end"]), str(data.get("reason", "")))
            return
        if data["p"] in self.takeover.rebuilding:  # handled once their game is rebuilt, in order,
            self._later(self._forwarded_after_rebuild(data))  # not holding up the listener
            return
        participant = self.person(data["p"])
        sender = data.get("from")
        if sender is not None:  # a process holding a socket of theirs says so, or that it closed
            held = self.holders.setdefault(participant.id, set())
            if data.get("gone"):
                held.discard(sender)
                return
            held.add(sender)
            if data.get("here"):
                return
        if data.get("hello"):
            point = data.get("resume")
            if point is None or not self.arena.resume(participant, ResumePoint(**point)):
                self.arena.send(participant, self.arena.state_frame(participant))
            return
        frame = None
        try:
            frame = F.parse_client_frame(data["raw"])
            await self.handle(participant, frame, forwarded=True)
        except (InputRejected, F.BadFrame) as err:
            code = getattr(err, "code", "bad-frame")
            ref = getattr(frame, "id", None)  # the input it answers, so the page stops resending
            self.arena.send(participant, F.Error(code=code, message=str(err), ref=ref))

    async def _forwarded_after_rebuild(self, data: dict[str, Any]) -> None:
        await self.takeover.rebuilt(data["p"])
        await self._forwarded(data)

    def _later(self, work: Any) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._held_tasks.add(task)
        task.add_done_callback(self._held_tasks.discard)

    # ---- what people do --------------------------------------------------------------------

    async def owner(self, pid: str) -> str | None:
        known = self.owners.get(pid)
        if known is not None:
            return known
        assert self.redis is not None
        found = await self.redis.get(self.ns + "player:" + pid)
        return None if found is None else str(json.loads(found)["owner"])

    async def connect(
        self, participant: Participant, outlet: Outlet, resume: ResumePoint | None = None
    ) -> None:
        self.person(participant.id)
        self.sockets[participant.id] = self.sockets.get(participant.id, 0) + 1
        if self.sockets[participant.id] == 1:
            await self._pubsub.subscribe(self.ns + "to:" + participant.id)
        self.owners.pop(participant.id, None)  # a (re)connect asks Redis: the owner may be new
        # Their rounds may have been counted by another process since this one last looked.
        await self.books.load(self._run(), participant.id, self.arena.lobby.rounds)
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
        if owner is not None and owner != self.me:  # their game is elsewhere: ask for it
            # Known from now, however found (route, store): it is asked again while it does not
            # answer (_ask_owner) and told when they leave (`disconnect`). Its answer to a page
            # resuming is the frames missed, not a snapshot (which is what set it, in _deliver).
            self.owners[participant.id] = owner
            self.arena.outlets.setdefault(participant.id, set()).add(outlet)
            hello: dict[str, Any] = {"p": participant.id, "hello": True}
            if resume is not None:
                hello["resume"] = resume.as_dict()
            self._holding(owner, hello)
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

    async def _waits(self, pid: str, outlet: Outlet | None = None) -> bool:
        """Whether `pid` waits for a match: here, or on a live process (which may still seat
        them), and is told so; or queued on a process that died, and is queued here now
        (queue_adopt.py). `outlet`: the socket connecting, else all of theirs."""
        found = None
        if pid not in self.waiting and not await self._waits_blind(pid):
            found = await self.queued.find(pid)
            if found.state == "none":
                return False
        if outlet is not None:
            self.arena.outlets.setdefault(pid, set()).add(outlet)
        if found is not None and found.state == "adopted":
            await self._adopt_queued(pid, found.mode, found.waited_s)
        elif outlet is not None:
            outlet(self.arena.waiting_frame(pid))
        else:
            self.arena.send(self.person(pid), self.arena.waiting_frame(pid))
        return True

    async def _ended_elsewhere(self, participant: Participant, resume: ResumePoint) -> str | None:
        """The process to ask for the end of the game the page names, which ended elsewhere
        moments ago (cluster_store_routes.py), asked from the same point while it does not
        answer, for ENDED_ASK_S (_ask_again); `connect` keeps it as their owner."""
        found = await self.routes.ended_owner(participant, resume)
        if found is None:
            return None
        owner, alive = found
        if not alive:  # it died as the game ended: the end is shown here, from the store
            await self._end_from_store(participant, resume.game)
            return None
        self.seen[participant.id] = resume
        self._asking_ended.add(participant.id)
        return owner

    async def _end_from_store(self, participant: Participant, game: str) -> bool:
        """`participant` is in `game` here, already over, rebuilt from the store (stored_end.py):
        what they are sent next is its end, not the lobby. False if it could not be."""
        # Rebuilt once: another of its people may have come back here first.
        found = None if game in self.arena.games else await self.routes.ended_game(game)
        if not show_stored_end(self.arena, participant, game, found, self.person):
            return False
        fault(log, "end-from-store", participant=participant.id, game=game)
        return True

    async def _counted_right(self, pid: str) -> None:
        """Before a person is shown the lobby: if it would tell them their study is done, first
        make sure no round counted is one the store lacks (a game a dying process showed them
        and never stored; a pair it counted and never seated)."""
        book = self.arena.lobby.rounds
        if book.done(pid):
            await self.books.recount(self._run(), pid, book)

    def _left_elsewhere(self, participant: Participant, resume: ResumePoint | None) -> None:
        """A game that ended here (its route deleted), which the page reconnecting does not
        name, was left since, maybe on another process that could not tell this one: show
        the lobby, not its end. Taken for the answer to a join lost with that process, the
        end would stop the page from sending the join again (study.js)."""
        game = self.arena.games.get(participant.game or "")
        named = resume is not None and game is not None and resume.game == game.id
        if game is not None and game.result is not None and not named:
            participant.game = None

    async def _waits_blind(self, pid: str) -> bool:
        """Whether `pid` waits for a blind match, here or on another process; one who waited
        on a process that died is adopted here (shared_blind.py), or their page would show
        the lobby while they believe they wait, and nobody would seat them or time them out."""
        settings = self.arena.setup.settings
        if settings.design is None:
            return False
        book, mode_of = self.arena.lobby.rounds, self.arena.setup.mode
        return await self.blind.watch(self._run(), pid, settings, book, mode_of)

    async def _taken_never_seated(self, after_s: float) -> None:
        """People another process took from the queue here: seated there within `after_s`
        (their game's route, or its frames relayed here), or it died first, and they are
        queued here again rather than left waiting untold."""
        now_m = monotonic()
        for pid, (mode_name, waited, at) in list(self._taken.items()):
            if now_m - at < after_s:
                continue
            del self._taken[pid]
            mode = self.arena.setup.mode(mode_name)
            log.debug(
                "taken %s: socket %s seen %s waiting %s/%s",
                pid,
                pid in self.sockets,
                pid in self.seen,
                pid in self.waiting,
                pid in self.blind.waiting,
            )
            if (
                mode is None
                or pid not in self.sockets
                or pid in self.seen  # a game's frames relayed here since they joined
                or pid in self.waiting
                or pid in self.blind.waiting
                or await self._in_live_game(pid)
            ):
                continue
            fault(log, "taken-never-seated", participant=pid, after_s=after_s)
            # The process that took them counted their round and died: not a round played.
            await self.books.recount(self._run(), pid, self.arena.lobby.rounds)
            await self._queue(self.person(pid), mode, waited + now_m - at)

    async def _in_live_game(self, pid: str) -> bool:
        """Whether `pid` plays a game here, or one routed to a living process. Not the cached
        owner: a reveal relayed from a process that died on the way leaves it stale."""
        person = self.arena.sessions.by_id.get(pid)
        here = None if person is None else self.arena.games.get(person.game or "")
        if here is not None and here.result is None:
            return True
        assert self.redis is not None
        found = await self.redis.get(self.ns + "player:" + pid)
        if found is None:
            return False
        owner = str(json.loads(found)["owner"])  # here, with no live game: over
        return owner != self.me and bool(await self.redis.exists(self.ns + "alive:" + owner))

    async def _plays(self, pid: str) -> bool:
        """Whether `pid` is in a live game: here, routed to a living process, or as the store
        has it (routes are lost when Redis restarts empty, until their owners route again)."""
        if await self._in_live_game(pid):
            return True
        return await self.routes.plays(pid)

    async def _forget_dead_holders(self) -> None:
        """Sockets held on a process that has died died with it. Only the survivor that claims
        its games unlists it (Takeover._forget); with three or more processes the others must
        see it gone themselves, or their players whose socket it held would count as present
        for ever, and a partner of one who left would never be told. Gone means its heartbeat
        stayed missing HOLDER_GONE_S: not merely wiped by a Redis restart, or every player
        whose socket is on another process would count as absent and their game be ended."""
        assert self.redis is not None
        named = sorted({proc for held in self.holders.values() for proc in held})
        beats = await self.redis.mget([self.ns + "alive:" + p for p in named]) if named else []
        now = monotonic()
        missing = {proc for proc, beat in zip(named, beats, strict=True) if beat is None}
        self._beat_missing = {p: self._beat_missing.get(p, now) for p in missing}
        dead = {p for p, since in self._beat_missing.items() if now - since >= HOLDER_GONE_S}
        for held in self.holders.values():
            held -= dead

    async def count_taken_away(self) -> None:
        """People queued here whom another process took from the queue to pair them: one that
        died before seating them told them nothing, and their entry is gone, so nobody else
        would take them. Once a process is lost, those no longer in the queue count as taken
        (`_taken_never_seated` queues them again if no game of theirs shows up)."""
        assert self.redis is not None
        # Only those queued before the queues are read: someone queued while Redis answers
        # is in `waiting` now but not in what it read.
        before = dict(self.waiting)
        if not before:
            return
        modes = sorted({mode for mode, _ in before.values()})
        queues = self.redis.pipeline(transaction=False)
        for mode in modes:
            queues.lrange(self.ns + "queue:" + mode, 0, -1)
        listed = {m: set(q) for m, q in zip(modes, await queues.execute(), strict=True)}
        now_c, now_m = self.arena.clock.now(), monotonic()
        for pid, (mode, since) in before.items():
            if self.waiting.get(pid) == (mode, since) and f"{pid}|{self.me}" not in listed[mode]:
                log.debug("counted as taken: %s", pid)
                del self.waiting[pid]
                self._taken[pid] = (mode, now_c - since, now_m)

    async def _adopt_queued(self, pid: str, mode_name: str, waited_s: float) -> None:
        mode = self.arena.setup.mode(mode_name)
        person = self.person(pid)
        if mode is None:  # not a mode of this arena any more
            self.arena.send(person, self.arena.state_frame(person))
            return
        log.info("open matching: %s adopted from a dead process (waited %.1f s)", pid, waited_s)
        # It may have paired and counted them before it died, seating nobody: undo that.
        await self.books.recount(self._run(), pid, self.arena.lobby.rounds)
        await self._queue(person, mode, waited_s)

    async def disconnect(self, participant: Participant, outlet: Outlet) -> None:
        left = self.sockets.get(participant.id, 0) - 1
        if left > 0:  # another socket of theirs is here, maybe still connecting: they stay
            self.sockets[participant.id] = left
            self.arena.outlets.get(participant.id, set()).discard(outlet)
            return
        self.arena.disconnect(participant, outlet)  # their last page here: out of the lobby
        self.sockets.pop(participant.id, None)
        queued = participant.id in self.waiting or participant.id in self.queued.elsewhere
        if queued or participant.id in self.blind.waiting or participant.id in self.blind.elsewhere:
            try:  # their last page here closed while queued: out of the shared queues now
                await self.leave_queues(participant.id)
            except RedisError as err:  # Redis restarting: their entry lapses with its TTL
                log.warning("redis: %s not taken out of the queue (%s)", participant.id, err)
        self.blind.elsewhere.pop(participant.id, None)  # watched from where they reconnect
        self.queued.elsewhere.discard(participant.id)
        self.seen.pop(participant.id, None)
        self.catchup.pop(participant.id, None)
        self._held_joins.pop(participant.id, None)
        self._game_shown.pop(participant.id, None)
        turn = self._queue_turns.get(participant.id)
        if turn is not None and not turn.locked():  # a join waiting on it keeps it
            del self._queue_turns[participant.id]
        told = self._told_holding.pop(participant.id, set())
        owner = self.owners.get(participant.id)
        if owner is not None:
            told.add(owner)
        for process in told - {self.me}:  # their game's owner counts them gone now
            self._forward(process, {"p": participant.id, "gone": True, "from": self.me})
        with contextlib.suppress(Exception):  # the process may be shutting down
            await self._pubsub.unsubscribe(self.ns + "to:" + participant.id)

    def ask_to_end(self, owner: str, gid: str, reason: str) -> None:
        """Have process `owner` end its game `gid` for the admin (admin_end.py)."""
        self._forward(owner, {"admin_end": gid, "reason": reason})

    def _forward(self, owner: str, data: dict[str, Any]) -> None:
        self.outbox.put("publish", self.ns + "proc:" + owner, json.dumps(data))

    def _holding(self, owner: str, data: dict[str, Any]) -> None:
        """Forward `data` about a person with a socket here: `owner` counts them present
        through us until told they have gone (`disconnect`)."""
        self._told_holding.setdefault(str(data["p"]), set()).add(owner)
        self._forward(owner, {**data, "from": self.me})

    async def handle(
        self, participant: Participant, frame: F.ClientFrame, *, forwarded: bool = False
    ) -> None:
        self.person(participant.id)
        if not forwarded:
            owner = await self.takeover.owner_once_rebuilt(participant.id)
            if owner not in (None, self.me) and isinstance(frame, F.Join):
                assert owner is not None and self.redis is not None
                # That owner has not answered yet, or has died (with a game to be taken over
                # or a route it had no time to delete): a join sent there would be lost.
                waiting = participant.id in self.catchup
                if waiting or not await self.redis.exists(self.ns + "alive:" + owner):
                    self._held_joins[participant.id] = frame
                    self.catchup.setdefault(participant.id, monotonic() + CATCHUP_S)
                    return
            if owner is not None and owner != self.me:
                raw = frame.model_dump_json()
                self._holding(owner, {"p": participant.id, "raw": raw})
                return
        if isinstance(frame, F.Join):
            mode = self.arena.setup.mode(frame.mode)
            if mode is not None and not mode.solo and frame.consent:
                await self._join(participant, frame)
                return
        elif isinstance(frame, F.Leave):
            await self.leave_queues(participant.id, forwarded=forwarded)
        self.arena.handle(participant, frame)

    def _queue_turn(self, pid: str) -> asyncio.Lock:
        return self._queue_turns.setdefault(pid, asyncio.Lock())

    async def leave_queues(self, pid: str, *, forwarded: bool = False) -> None:
        """Out of every queue at once, the shared ones included (a Leave, a page closed while
        queued, consent withdrawn): other processes pair people from Redis, so leaving the
        local lobby alone would leave them matchable there. Someone waiting blind on another
        process is let go of there: that process is told, as if they had sent it a Leave."""
        async with self._queue_turn(pid):
            await self._leave_queues(pid, forwarded=forwarded)

    async def _leave_queues(self, pid: str, *, forwarded: bool) -> None:
        assert self.redis is not None
        # Local state first, before any await: a page reconnecting here meanwhile must not be
        # told they wait when they are being let go.
        blind_here = pid in self.blind.waiting or forwarded
        if blind_here:
            await self.blind.leave(pid)
        if not await self._unqueue(pid):  # queued elsewhere, maybe
            await self.queued.leave(pid)
        if not blind_here:
            await self.blind.leave(pid)  # not adopted back here if a taker dies
            found = await self.redis.get(self.ns + "blind-at:" + pid)
            at = "" if found is None else str(found)
            if at and at != "seated" and not at.startswith("taken:") and at != self.me:
                leave = F.Leave(type="leave").model_dump_json()
                self._forward(at, {"p": pid, "raw": leave})
        await self.books.load(self._run(), pid, self.arena.lobby.rounds)

    async def _join(self, participant: Participant, frame: F.Join) -> None:
        async with self._queue_turn(participant.id):  # after a leave still under way
            await self._join_now(participant, frame)

    async def _join_now(self, participant: Participant, frame: F.Join) -> None:
        participant.consented = True
        current = self.arena.games.get(participant.game or "")
        if current is not None and current.result is None:
            raise InputRejected("in-game", "You are already in a game.")
        mode = self.arena.setup.mode(frame.mode)
        assert mode is not None
        participant.game = None
        pid, book = participant.id, self.arena.lobby.rounds
        self.seen.pop(pid, None)  # their last game is over: any relayed from now is a new one
        settings = self.arena.setup.settings
        if settings.design is not None:  # blind: the design decides, the wait is drawn
            await self._unqueue(pid)
            joined = await self.blind.join(self._run(), pid, mode, settings, book)
            told = self.arena.waiting_frame(pid) if joined else self.arena.state_frame(participant)
            self.arena.send(participant, told)
            return
        await self._queue(participant, mode)

    async def _queue(
        self, participant: Participant, mode: ArenaMode, waited_s: float = 0.0
    ) -> None:
        """Pair `participant` with someone queued, or queue them, `waited_s` into their wait."""
        pid, book = participant.id, self.arena.lobby.rounds
        # Noted first: if this process dies after pairing them but before seating them, the
        # one they reconnect to adopts them (queue_adopt.py); deleted once they are seated.
        await self.queued.queued(pid, mode.name, waited_s)
        shown = self._game_shown.get(pid)
        taken = await self.books.take_or_wait(self._run(), mode.name, pid, self.me, book)
        # "Done" ends their study: first make sure no round counted is one that never existed.
        if taken.outcome == "done" and await self.books.recount(self._run(), pid, book):
            taken = await self.books.take_or_wait(self._run(), mode.name, pid, self.me, book)
        log.debug("queue %s: %s %s", pid, taken.outcome, taken.partner)
        if taken.outcome == "waiting" and self._game_shown.get(pid) != shown:
            # Queued, and taken at once by another process, whose new game has been relayed
            # to them while Redis answered here: "waiting" now would hide it.
            return
        if taken.outcome == "done":  # on to the exit survey
            self.waiting.pop(pid, None)
            self.outbox.put("delete", self.queued.key(pid))
            self.arena.send(participant, self.arena.state_frame(participant))
            return
        if taken.outcome == "waiting":
            self.waiting[pid] = (mode.name, self.arena.clock.now() - waited_s)
            self.arena.send(participant, self.arena.waiting_frame(pid, waited_s))
            return
        self.waiting.pop(pid, None)
        partner = self.person(taken.partner_id)
        people = [participant, partner] if taken.role == "interrogator" else [partner, participant]
        await self._seat(mode, people)
        self.arena.answer_join(participant)

    async def _seat(self, mode: ArenaMode, people: list[Participant]) -> None:
        """Seat people counted in the shared book: people[0] interrogates, with the next AI
        witness groups of their own shared order."""
        free = len(mode.witnesses) - (len(people) - 1)
        n = min(free, mode.ai_groups_per_game or free)  # as lobby.py: an STT session meets one
        lobby, judge = self.arena.lobby, people[0].id
        groups = await self.books.draw_groups(
            self._run(), judge, mode.name, mode.ai_agents, n, lobby.rng
        )
        lobby.seat_counted(mode, people, groups)

    async def _seat_ids(self, mode: ArenaMode, pids: list[str]) -> None:
        await self._seat(mode, [self.person(pid) for pid in pids])

    def _finished_short(self, pid: str, _excused: int) -> None:
        """Their witness rounds were excused (shared_blind.py): on to the exit survey."""
        person = self.person(pid)
        self.arena.send(person, self.arena.state_frame(person))

    def _no_match(self, pid: str, waited: float) -> None:
        self.arena.send(self.person(pid), F.Status(state="no-match", waited_s=waited))

    def _run(self) -> str:
        """Whose books: the study being run (a new study starts fresh books)."""
        store = self.arena.store
        return "-" if store is None else store.run_id

    async def _unqueue(self, pid: str) -> bool:
        """Take a person out of the queue; False when another process took them meanwhile."""
        assert self.redis is not None
        entry = self.waiting.pop(pid, None)
        if entry is None:
            return False
        self.outbox.put("delete", self.queued.key(pid))
        removed = await self.redis.lrem(self.ns + "queue:" + entry[0], 0, f"{pid}|{self.me}")
        return bool(removed)

    async def _beat_loop(self) -> None:
        """The heartbeat on its own, every BEAT_S: never late because a tick is long (a
        takeover, a reconnect storm), or this process would look dead to the others — and
        to the matching script, which drops the queue entries of dead processes."""
        while True:
            await asyncio.sleep(BEAT_S)
            try:
                await self._beat(force=self._register_again)
                self._register_again = False
            except RedisError as err:  # Redis is down: said once (not a traceback each beat)
                if not self._beat_failing:
                    fault(log, "redis-beat-failing", logging.ERROR, process=self.me, error=str(err))
                self._beat_failing = self._register_again = True
                continue
            except Exception:  # the store, asked while registering again: again next beat
                log.exception("heartbeat: registering again failed")
                self._register_again = True
                continue
            now = monotonic()
            # Silent long enough that others' heartbeats may have lapsed, not a late beat.
            silence_s = max(self.arena.setup.settings.takeover_after_s / 2, 2 * BEAT_S)
            if now - self._beat_ok > silence_s:
                self.beat_back = now  # before `_beat_failing` clears: no tick judges first
            self._beat_failing = False
            self._beat_ok = now
            if self._relay_told:
                self._relay_told = False
                self._tell_relayed("relay-resumed", RELAY_RESUMED)

    async def _relay_watch(self) -> None:
        """A heartbeat that hangs (Redis paused) raises nothing: watched apart from it. People
        are told again every RELAY_AGAIN_S while it lasts (a toast fades; nobody is to wait
        15 s untold)."""
        told_at = 0.0
        while True:
            await asyncio.sleep(1.0)
            now = monotonic()
            silent = now - self._beat_ok
            if silent < RELAY_NOTICE_S:
                continue
            if not self._relay_told:
                self._relay_told = True
                fault(log, "relay-delayed", logging.WARNING, process=self.me, silent_s=silent)
            elif now - told_at < RELAY_AGAIN_S:
                continue
            told_at = now
            self._tell_relayed("relay-delayed", RELAY_DELAYED)

    def _tell_relayed(self, code: str, message: str) -> None:
        """Everyone with a socket here whose game is played on another process."""
        for pid, n in list(self.sockets.items()):
            if n > 0 and self.owners.get(pid) not in (None, self.me):
                self.arena.send(self.person(pid), F.Error(code=code, message=message))

    async def tick(self) -> None:
        """Owners asked again, takeovers; a lone waiter meets AI witnesses, or is sent on, if
        nobody took them meanwhile."""
        if self._beat_failing:
            return
        now_m = monotonic()
        asks = asyncio.Semaphore(16)  # at once: after a SIGKILL ~1,000 people ask

        async def ask_again(pid: str, until: float) -> None:
            async with asks:
                await self._ask_again(pid, until, now_m)

        await asyncio.gather(*(ask_again(p, u) for p, u in list(self.catchup.items())))
        try:
            await self.takeover.take_over_lost()
            await self._forget_dead_holders()
        except RedisError as err:  # Redis restarting or paused: expected; no traceback
            log.warning("takeover failed (Redis: %s); trying again", err)
        except Exception:  # the store hiccuped: try again next tick, match people now
            log.exception("takeover failed; trying again")
        settings = self.arena.setup.settings
        book, mode_of = self.arena.lobby.rounds, self.arena.setup.mode
        await self.blind.watch_elsewhere(self._run(), settings, book, mode_of)
        await self.blind.tick(self._run(), book)
        now = self.arena.clock.now()
        for pid, (mode_name, since) in list(self.waiting.items()):
            mode = self.arena.setup.mode(mode_name)
            waited = now - since
            alone = (
                mode is not None
                and len(mode.witnesses) == 1
                and waited >= settings.ai_after_s
                and self.arena.lobby.rounds.may(pid, "interrogator")  # mirrored as they queued
            )
            if mode is None or not (alone or waited >= settings.max_wait_s):
                continue
            if not await self._unqueue(pid):  # matched by another process
                log.debug("unqueue %s: taken by another process", pid)
                self._taken[pid] = (mode_name, waited, monotonic())
                continue
            person = self.person(pid)
            if alone:
                assert mode is not None
                await self.books.count_alone(self._run(), pid, self.arena.lobby.rounds)
                await self._seat(mode, [person])
            else:
                self.arena.send(person, F.Status(state="no-match", waited_s=waited))
        await self._taken_never_seated(settings.takeover_after_s)
        for pid in list(self.queued.elsewhere):  # queued on another process: has it died?
            found = await self.queued.find(pid)
            if found.state == "adopted":
                await self._adopt_queued(pid, found.mode, found.waited_s)

    async def _ask_again(self, pid: str, until: float, now_m: float) -> None:
        """An owner not heard from yet: asked again, or given up on after CATCHUP_S."""
        owner = await self.owner(pid) if now_m > until else None
        if owner is not None and await self._route_state(pid, owner) == "taking-over":
            self.catchup[pid] = now_m + 1.0  # its games are being claimed: wait for that
        elif now_m > until and pid in self._asking_ended:
            # The process where their game ended did not answer (it died): on from here.
            fault(log, "catchup-unanswered", participant=pid, after_s=ENDED_ASK_S)
            await self._on_from_here(pid)
        elif now_m > until:
            self.catchup.pop(pid, None)
            self.owners.pop(pid, None)  # asked of the route again next time
            fault(log, "catchup-unanswered", participant=pid, after_s=CATCHUP_S)
            if self._held_joins.pop(pid, None) is not None:
                message = "The server of your last game did not answer; please try again."
                self.arena.send(self.person(pid), F.Error(code="not-now", message=message))
        else:
            await self._ask_owner(pid)

    # ---- processes that die ----------------------------------------------------------------

    async def _beat(self, force: bool = False) -> None:
        """Renew this process's heartbeat; when it had lapsed (the first beat, a long pause, or
        Redis restarted empty) register again: the process list, its live games' routes."""
        assert self.redis is not None
        key, ttl_ms = (
            self.ns + "alive:" + self.me,
            int(self.arena.setup.settings.takeover_after_s * 1000),
        )
        if force or not await self.redis.set(key, "1", px=ttl_ms, xx=True):
            # The first beat, or this process was silent past its TTL (a long pause) and
            # others may have taken its games over: give those up before going on.
            if self._registered and not force:  # a long pause, or Redis restarted empty
                fault(log, "heartbeat-missing", logging.ERROR, process=self.me)
            self._registered = True
            # Until every step below is done: one that fails half-way (Redis failing again,
            # as it often does just after a restart) is redone by the next beat, or the routes
            # and waiting people after it would stay unregistered.
            self._register_again = True
            await self.redis.set(key, "1", px=ttl_ms)
            await self.redis.sadd(self.ns + "procs", self.me)
            await self._give_up_taken()
            for game in list(self.arena.games.values()):
                if game.result is None:
                    self._announce(game)
            # Its blind waiters too, before `_beat_failing` clears and a tick may match: a tick
            # between the two found them gone with Redis's keys (2 left waiting in a run).
            await self.blind.register_again(self._run(), self.arena.lobby.rounds, self._plays)
            self._register_again = False

    async def _give_up_taken(self) -> None:
        store = self.arena.store
        playing = self.arena.stored_ids()
        if store is None or not playing:
            return
        owners = await asyncio.to_thread(store.owners, list(playing))
        for gid, game in playing.items():
            if owners.get(gid) != self.me:
                log.warning("game %s was taken over by %s; stopped here", game.id, owners.get(gid))
                for view in game.views.values():  # as when fenced: or the new owner's frames
                    self.owners.pop(view.participant.id, None)  # would be dropped as stale
                self.arena.give_up(game)

    async def study_fallbacks(self) -> int:
        """Blind matching's fallbacks on every process of this study (shared_blind.py)."""
        return await self.blind.study_fallbacks(self._run())

    async def live_games(self) -> list[dict[str, Any]]:
        """The live games of every process (from the store), each with its owner and whether
        that owner is alive; without a store, this process's own."""
        store = self.arena.store
        if store is None:
            return [{**g, "owner": self.me, "owner_alive": True} for g in self.arena.live_games()]
        assert self.redis is not None
        await store.flush()  # this process's latest messages count too
        games = await asyncio.to_thread(store.live)
        owners = sorted({g["owner"] for g in games if g["owner"]})
        beats = await self.redis.mget([self.ns + "alive:" + o for o in owners]) if owners else []
        alive = {o for o, beat in zip(owners, beats, strict=True) if beat is not None}
        return [{**g, "owner_alive": g["owner"] in alive} for g in games]

    # ---- games owned here ------------------------------------------------------------------

    def _game_started(self, game: LiveGame) -> None:
        game.on_fenced = self._fenced
        for view in game.views.values():  # who met whom is recorded as they are matched
            self.waiting.pop(view.participant.id, None)
        self._announce(game)
        for view in game.views.values():  # after their route: queued nowhere now
            self.outbox.put("delete", self.queued.key(view.participant.id))

    def _announce(self, game: LiveGame) -> None:
        """Route the game's people here (`player:<pid>` in Redis)."""
        record = json.dumps({"game": game.id, "owner": self.me})
        for view in game.views.values():
            pid = view.participant.id
            self.owners[pid] = self.me
            self.outbox.put("set", self.ns + "player:" + pid, record)

    def _fenced(self, game: LiveGame) -> None:
        """A write of `game` was refused: another process claimed it (this one was paused or
        cut off past its TTL). Stop playing it here; its people were told to reconnect."""
        self.arena.metrics.fenced += 1
        fault(log, "fenced", game=game.id, process=self.me)
        for view in game.views.values():
            self.owners.pop(view.participant.id, None)
        self.arena.give_up(game)

    def _rounds_back(self, game: LiveGame) -> None:
        """The rounds this process's book gave back (hub._finished), given back in the shared
        book too, or the next process to mirror it would count them again."""
        for view in game.views.values():
            pid = view.participant.id
            self._later(self.books.give_back(self._run(), pid, view.role))
            if view.role == "interrogator":  # their AI witness groups are met again, anywhere
                self._later(
                    self.books.give_groups_back(self._run(), pid, game.mode.name, game.ai_groups)
                )

    def _game_ended(self, game: LiveGame) -> None:
        # A game lost with its process keeps its route: whoever reconnects, anywhere, is shown
        # it ended and why, not an empty lobby.
        lost = game.result is not None and SERVER_LOST in game.result.flags
        self.outbox.put("delete", self.ns + "gone:" + game.id)
        for view in game.views.values():
            self.owners.pop(view.participant.id, None)
            if not lost:
                self.outbox.put("delete", self.ns + "player:" + view.participant.id)
