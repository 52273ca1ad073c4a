"""The cluster's side of a takeover: noticing a process has died, claiming its games, moving
its people here, and holding their inputs and reconnects until their game is rebuilt.

A process is lost once its heartbeat key `alive:<process>` has expired while it is still listed
in `procs` (cluster.py renews this one's). Not when Redis itself was silent: a heartbeat's TTL
runs on Redis's clock, so a Redis paused past it wakes with every process's heartbeat expired,
living ones included, and whichever survivor got through first would claim the games of a
process that merely had not beaten again yet (seen under load: both games of a live process
taken over after a 22 s pause). So a survivor whose own heartbeat was silent judges nobody
until a whole TTL after it got through again, and a look-up that itself hung is not taken as
an answer. The live games it played are claimed in one store
update (each goes to exactly one claimant), their people's routes `player:<id>` are moved here
at once, and each game is rebuilt from its committed messages (takeover.py). Until a person's
game is rebuilt, the cache and the route may still name the dead owner, and an input sent
there would be lost: so their inputs and reconnects wait for it (`owner_once_rebuilt`, capped).
People connected here whose game is moving are told so the moment the loss is noticed.

Absence carries over: someone the dead owner had already counted gone (its `gone:<game>`
note) stays counted from then, and anyone else from about when it died, so a partner of
someone who left is told at about the time they would have been without the takeover.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
from time import monotonic, time
from typing import TYPE_CHECKING

from redis.exceptions import RedisError

from turinglab.arena.cluster.cluster_store_routes import STORE_LOOKUP_S
from turinglab.arena.core import frames as F
from turinglab.arena.core import page_protocol
from turinglab.arena.core.live import LiveGame
from turinglab.arena.core.live_reveal import SERVER_LOST
from turinglab.arena.core.metrics import fault
from turinglab.arena.core.takeover import restore
from turinglab.games.spec import FLAGGED, GameResult

if TYPE_CHECKING:
    from sqlalchemy import Connection

    from turinglab.arena.cluster.cluster_view import ClusterView
    from turinglab.arena.core.store_bridge import ArenaStore
    from turinglab.store.arena_games import StoredGame

log = logging.getLogger(__name__)

PLAYER_TTL_S = 6 * 3600  # how long a person's route `player:<id>` is kept
# After a takeover, how long someone not counted gone before has to show up on some process: a
# page whose socket closed reconnects within its 5 s backoff cap, mostly long before.
RECONNECT_AFTER_TAKEOVER_S = 5.0
# From the old owner's death, how long a page whose socket stayed open on it (a paused process)
# takes to give it up and be back (protocol.js): silent past DEAD_MS, noticed at the next beat,
# then the longest backoff — with a beat to spare on a loaded machine. Behind a balancer its
# reconnect may land on the paused process again (it accepts connections and never answers):
# that handshake is given up after OPEN_MS (with a beat to spare; the backoffs between are short).
_GIVE_UP_MS = page_protocol.DEAD_MS + page_protocol.PING_MS
_HUNG_OPEN_MS = page_protocol.OPEN_MS + page_protocol.PING_MS
PAGE_BACK_AFTER_DEATH_S = (
    _GIVE_UP_MS + _HUNG_OPEN_MS + page_protocol.PING_MS + page_protocol.MAX_BACKOFF_MS
) / 1000
# A page whose socket closed and whose reconnect landed on a process stopped meanwhile: its
# backoff, the handshake given up after OPEN_MS, and a beat to spare, before it is elsewhere.
MAX_BACKOFF_S = page_protocol.MAX_BACKOFF_MS / 1000
HUNG_RECONNECT_S = (page_protocol.MAX_BACKOFF_MS + _HUNG_OPEN_MS) / 1000
# How long a person's input or reconnect waits for their game to be rebuilt here after a claim
# (hundreds of games take seconds); past that it goes on as if the game were not coming.
REBUILD_WAIT_S = 30.0
MOVING_TEXT = (
    "The server running your game stopped; another one is picking your game up. "
    "You will be back in a few seconds, with everything said so far."
)


def _end_lost(store: ArenaStore, gid: int, conn: Connection) -> None:
    """A game that could not even be rebuilt: kept as it is, flagged."""
    store.end(conn, gid, GameResult(FLAGGED, flags=[SERVER_LOST]), time())


class Takeover:
    """Takes over the games of processes that died, for one cluster process."""

    def __init__(self, cluster: ClusterView) -> None:
        self.cluster = cluster
        # pid -> set once their game, claimed here from a dead process, is rebuilt.
        self.rebuilding: dict[str, asyncio.Event] = {}

    async def owner_once_rebuilt(self, pid: str) -> str | None:
        """The process playing `pid`'s game; while it is being rebuilt here after a takeover,
        this one once it is. Checked after the look-up: a takeover that began meanwhile has
        marked its people before it moved their routes here, and a route here with no game
        here yet would show them the lobby, or their input would go to the dead owner."""
        owner = await self.cluster.owner(pid)
        if pid in self.rebuilding:
            await self.rebuilt(pid)
            owner = await self.cluster.owner(pid)
        return owner

    async def rebuilt(self, pid: str) -> None:
        """Wait while `pid`'s game is being rebuilt here after a takeover."""
        pending = self.rebuilding.get(pid)
        if pending is None:
            return
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(REBUILD_WAIT_S):
                await pending.wait()
        self.rebuilding.pop(pid, None)

    async def lost_processes(self) -> list[str]:
        """Listed processes whose heartbeat has expired, as seen through a Redis that has
        answered this process for a whole TTL (the module docstring)."""
        cluster = self.cluster
        assert cluster.redis is not None
        ttl_s = cluster.arena.setup.settings.takeover_after_s
        if cluster.beat_back is not None and monotonic() - cluster.beat_back < ttl_s:
            return []  # their heartbeats lapsed with ours: each gets a TTL to beat again
        asked = monotonic()
        listed = await cluster.redis.smembers(cluster.ns + "procs")
        others = sorted(str(p) for p in listed if p != cluster.me)
        if not others:
            return []
        keys = [cluster.ns + "alive:" + p for p in [cluster.me, *others]]
        mine, *beats = await cluster.redis.mget(keys)
        if mine is None or monotonic() - asked > ttl_s / 2:
            return []  # asked into a silence (ours lapsed too, or Redis answered late)
        return [p for p, beat in zip(others, beats, strict=True) if beat is None]

    async def take_over_lost(self) -> list[LiveGame]:
        """Claim and rebuild the live games of every process that has died."""
        cluster = self.cluster
        lost_ones = await self.lost_processes()
        if lost_ones:  # it may have taken people queued here, and died before seating them
            await cluster.count_taken_away()
        store = cluster.arena.store
        if store is None:  # nothing durable to rebuild from: only known gone
            for lost in lost_ones:
                await self._forget(lost)
            return []
        adopted = []
        for lost in lost_ones:
            await self._tell_moving(lost)
            began = monotonic()
            claimed = await asyncio.to_thread(store.take_over, lost)
            if claimed:
                cluster.arena.metrics.takeovers += len(claimed)
                took = round(monotonic() - began, 3)
                fault(log, "takeover", lost=lost, by=cluster.me, games=len(claimed), claim_s=took)
            # Until each game is rebuilt, its people's inputs and reconnects wait for it here.
            rebuilt = {stored.game: asyncio.Event() for stored in claimed}
            for stored in claimed:
                for pid in stored.people.values():
                    self.rebuilding[pid] = rebuilt[stored.game]
            began = monotonic()
            try:
                adopted += await self._rebuild(lost, claimed, rebuilt)
                if claimed:
                    took = round(monotonic() - began, 3)
                    fault(log, "takeover-rebuilt", lost=lost, games=len(claimed), seconds=took)
            finally:
                for pending in rebuilt.values():
                    pending.set()
                for stored in claimed:
                    for pid in stored.people.values():
                        if self.rebuilding.get(pid) is rebuilt[stored.game]:
                            del self.rebuilding[pid]
            await self._forget(lost)  # its games are all claimed now
        return adopted

    async def _forget(self, lost: str) -> None:
        """`lost` is unlisted: known gone, so routes naming it are stale (Cluster._route_state)."""
        cluster = self.cluster
        assert cluster.redis is not None
        await cluster.redis.srem(cluster.ns + "procs", lost)
        now = monotonic()  # its heartbeat was found missing just now
        killed = await self.was_killed(lost)
        held_there = {pid: now for pid, held in cluster.holders.items() if killed and lost in held}
        for held in cluster.holders.values():  # its sockets died with it
            held.discard(lost)
        cluster.count_gone_from_the_death(held_there, now)
        cluster.owners = {p: o for p, o in cluster.owners.items() if o != lost}

    async def _tell_moving(self, lost: str) -> None:
        """Tell the people connected here whose game `lost` played that it is being moved: it
        went silent up to `takeover_after_s` ago, and claiming and rebuilding hundreds of
        games takes seconds more."""
        cluster = self.cluster
        assert cluster.redis is not None
        moving = {pid for pid in cluster.sockets if cluster.owners.get(pid) == lost}
        # People who reconnected here and wait for their game's owner: the route names it.
        asking = [pid for pid in cluster.catchup if pid in cluster.sockets and pid not in moving]
        routes = (
            await cluster.redis.mget([cluster.ns + "player:" + p for p in asking]) if asking else []
        )
        for pid, route in zip(asking, routes, strict=True):
            if route is not None and json.loads(route)["owner"] == lost:
                moving.add(pid)
        for pid in moving:
            cluster.arena.send(cluster.person(pid), F.Error(code="moving", message=MOVING_TEXT))

    async def _route_here(
        self, claimed: list[StoredGame]
    ) -> tuple[dict[str, dict[str, str]], dict[str, float]]:
        """Routes first, at once (not queued): whoever reconnects now is sent here. Returns
        each game's departure notes (`gone:<game>`: seat -> when they were counted gone) and
        when each of their people's last socket closed on a process other than their game's
        owner, where one did and they have not connected since (`left:<pid>`)."""
        cluster = self.cluster
        assert cluster.redis is not None
        routes = cluster.redis.pipeline(transaction=False)
        for stored in claimed:
            route = json.dumps({"game": stored.game, "owner": cluster.me})
            for pid in stored.people.values():
                routes.set(cluster.ns + "player:" + pid, route, ex=PLAYER_TTL_S)
        await routes.execute()
        notes = cluster.redis.pipeline(transaction=False)
        for stored in claimed:
            notes.hgetall(cluster.ns + "gone:" + stored.game)
        people = sorted({pid for stored in claimed for pid in stored.people.values()})
        for pid in people:
            notes.get(cluster.ns + "left:" + pid)
        got = await notes.execute()
        gone = dict(zip((g.game for g in claimed), got[: len(claimed)], strict=True))
        left = {pid: float(at) for pid, at in zip(people, got[len(claimed) :], strict=True) if at}
        return gone, left

    async def was_killed(self, lost: str) -> bool:
        """Whether `lost` was killed rather than stopped or cut off (one cut off from Redis
        says in the store that it lives, read first): a killed process's sockets close with
        it and Redis drops its subscriptions at once, a stopped one's stay open, subscribed
        (sim seeds 161, 958: a partner told ~50 s after a departure, the takeover waiting for
        pages that might be on a stopped owner). Not to be told when
        Redis came back empty within a few TTLs, unless `lost` had subscribed again since
        (its `listening:` key is in this Redis: give-up seeds 156, 294 on three processes, a
        partner told 43 s after, the restart seconds before the kill), nor when Redis cannot
        say: then it may be stopped, and its pages still on it."""
        cluster = self.cluster
        assert cluster.redis is not None
        ttl_s = cluster.arena.setup.settings.takeover_after_s
        store = cluster.arena.store
        try:  # ClusterHeartbeat._hang_up_cut_off
            async with asyncio.timeout(STORE_LOOKUP_S):
                if store is not None and await asyncio.to_thread(
                    store.notice_silent, lost, ttl_s / 2
                ):
                    return False
        except Exception as err:  # the store out too: Redis alone decides, as before
            log.warning("store: whether %s is cut off could not be read (%r)", lost, err)
        wiped = cluster.beat_lapsed
        try:
            wiped_lately = wiped is not None and monotonic() - wiped < 3 * ttl_s
            if wiped_lately and not await cluster.redis.exists(cluster.ns + "listening:" + lost):
                return False
            [(_, subscribed)] = await cluster.redis.pubsub_numsub(cluster.ns + "proc:" + lost)
        except RedisError:
            return False
        return int(subscribed) == 0

    async def _rebuild(
        self, lost: str, claimed: list[StoredGame], rebuilt: dict[str, asyncio.Event]
    ) -> list[LiveGame]:
        """Route the claimed games' people here and rebuild the games, setting each game's
        event once it is played here."""
        cluster = self.cluster
        store = cluster.arena.store
        assert store is not None
        adopted = []
        gone, left_elsewhere = await self._route_here(claimed)
        killed = await self.was_killed(lost)
        # Who was counted gone: Redis's notes, or, where it lost them (restarted empty), the
        # stored log's (redis-pause seed 82: told 63 s after, the grace counted anew).
        noted = {
            g.game: {**{k: f"{v:.3f}" for k, v in g.controls.away_since().items()}, **gone[g.game]}
            for g in claimed
        }
        # Games where someone had already left first: their partners have waited longest.
        for n, stored in enumerate(sorted(claimed, key=lambda g: not noted[g.game])):
            if n % 25 == 24:
                await asyncio.sleep(0)  # hundreds to rebuild: let the live games go on
            try:
                game = restore(cluster.arena, stored, cluster.person)
                adopted.append(game)
                self._carry_absence(game, noted[stored.game], killed, left_elsewhere)
            except Exception:
                log.exception("takeover: game %s of %s could not be rebuilt", stored.game, lost)
                await store.writer.call(functools.partial(_end_lost, store, stored.store_id))
            rebuilt[stored.game].set()
        return adopted

    def _carry_absence(
        self, game: LiveGame, noted: dict[str, str], killed: bool, left_elsewhere: dict[str, float]
    ) -> None:
        """A game taken over here: its people who are not back count as gone since the old
        owner counted them gone (`noted`: its `gone:<game>` note), or else from the moment that
        leaves a live page time to be back — a page whose socket stayed open on a paused
        process notices only after its heartbeat's limit (PAGE_BACK_AFTER_DEATH_S from the
        death), one whose socket closed (`killed`: they all did) within its backoff — not from
        now, or the partner of someone who left would wait a whole grace more before being
        told; someone whose last socket closed while the dead process played this game, here
        or on another process (`left_elsewhere`: that one noted it in Redis), from then.
        Someone whose socket is open here is present, however long their connect takes
        (Cluster.present)."""
        arena = self.cluster.arena
        watch, settings = arena.abandon, arena.setup.settings
        now_c, now_w = arena.clock.now(), time()
        back = now_w + RECONNECT_AFTER_TAKEOVER_S - watch.grace_s
        paused = now_w - settings.takeover_after_s + PAGE_BACK_AFTER_DEATH_S - watch.grace_s
        died = back if killed else max(paused, back)
        stopped_at = now_w - settings.takeover_after_s - 1.0  # its last heartbeat, about
        started = now_w - (now_c - game.started_at)  # the game's start, on the wall clock
        for seat, view in game.views.items():
            # Someone whose last socket closed while the game was on the dead owner left then
            # (sim seed 157: told 52 s after, the estimate waiting for a page that might
            # still be on a paused owner; three processes, give-up seed 83: they had given up
            # on a third process, whose note alone says so).
            pid = view.participant.id
            left = left_elsewhere.get(pid, self.cluster.left_here.get(pid, died))
            if left < started:  # they left an earlier game here: not a departure from this one
                left = died
            seen_leaving = seat in noted or left == left_elsewhere.get(pid)
            since = float(noted[seat]) if seat in noted else min(left, died)
            if seen_leaving and not killed and since >= stopped_at - MAX_BACKOFF_S:
                # Their socket closed just before the owner stopped: the page's reconnect
                # may have landed on the stopped process and hung there until given up
                # (sim pause seed 156: told "you left" 1 s before the page was back).
                since = max(since, since + HUNG_RECONNECT_S - watch.grace_s)
            watch.carry_over(game.id, seat, now_c - (now_w - since))
