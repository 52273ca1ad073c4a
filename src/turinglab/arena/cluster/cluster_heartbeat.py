"""This process's heartbeat `alive:<process>`: renewed on its own task, registering the process
again (its list entry, its games' routes, its blind waiters) when it had lapsed; and people
whose game is played elsewhere told when Redis goes silent, and when it is back.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterator
from time import monotonic, time

from redis.exceptions import RedisError

from turinglab.arena.cluster.cluster_base import beat_s
from turinglab.arena.cluster.cluster_messages import Here
from turinglab.arena.cluster.cluster_queues import ClusterQueues
from turinglab.arena.core import frames as F
from turinglab.arena.core.metrics import fault
from turinglab.arena.core.person_view import HANG_UP, RELAY_DELAYED, RELAY_RESUMED, Outlet

log = logging.getLogger(__name__)

# Redis silent this long (a heartbeat not through: paused, cut off, restarting), the people
# whose game is played on another process hear nothing from it: they are told, inside the
# 15 s a person may go without a frame or a notice, and told again once it is back.
RELAY_NOTICE_S = 5.0
RELAY_AGAIN_S = 10.0  # and again this often while it lasts


@contextlib.contextmanager
def told_while_waiting(outlet: Outlet) -> Iterator[None]:
    """A page whose connect waits on Redis (paused, cut off: a command neither answered nor
    failed) is told so after RELAY_NOTICE_S and again every RELAY_AGAIN_S, as people whose
    game is relayed are: it has no game frames yet to hear (sim, `redis-pause`: 16-31 s)."""
    loop = asyncio.get_running_loop()
    timer: list[asyncio.TimerHandle] = []  # the one pending

    def tell() -> None:
        outlet(F.Error(code="relay-delayed", message=RELAY_DELAYED))
        timer[:] = [loop.call_later(RELAY_AGAIN_S, tell)]

    timer.append(loop.call_later(RELAY_NOTICE_S, tell))
    try:
        yield
    finally:
        timer[0].cancel()


class ClusterHeartbeat(ClusterQueues):
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
            if self._registered:  # Redis was away or is back empty, or a long pause here
                self.beat_lapsed = monotonic()
            if self._registered and not force:
                fault(log, "heartbeat-missing", logging.ERROR, process=self.me)
            again, self._registered = self._registered, True
            # Until every step below is done: one that fails half-way (Redis failing again,
            # as it often does just after a restart) is redone by the next beat, or the routes
            # and waiting people after it would stay unregistered.
            self._register_again = True
            await self.redis.set(key, "1", px=ttl_ms)
            await self.redis.sadd(self.ns + "procs", self.me)
            if again:
                await self._list_owners_of_live_games(ttl_ms)
                self._tell_holding_again()
            await self._give_up_taken()
            for game in list(self.arena.games.values()):
                if game.result is None:
                    self._announce(game)
            # Its blind waiters too, before `_beat_failing` clears and a tick may match: a tick
            # between the two found them gone with Redis's keys (2 left waiting in a run).
            await self.blind.register_again(self._run(), self.arena.lobby.rounds, self._plays)
            self._register_again = False

    async def _list_owners_of_live_games(self, ttl_ms: int) -> None:
        """List again every process the store says still owns a live game: one killed
        moments before Redis restarted empty never lists itself again, so unlisted it would
        never be found lost and its games never taken over (sim seeds 82, 83). Each is given
        a heartbeat of one TTL first (unless it has beaten already): a living one beats
        again well within it, a dead one lapses and is taken over; one already taken over
        owns no live game."""
        store = self.arena.store
        if store is None:
            return
        owners = await self.routes.read("the owners of live games", store.live_workers)
        others = sorted((owners or set()) - {self.me})
        assert self.redis is not None
        for other in others:
            await self.redis.set(self.ns + "alive:" + other, "1", px=ttl_ms, nx=True)
        if others:
            await self.redis.sadd(self.ns + "procs", *others)

    def _tell_holding_again(self) -> None:
        """Tell the owners of the games of people with a socket here, again, that this process
        holds it: an owner that found this process dead (stopped past its TTL) forgot what it
        held (Takeover._forget, _forget_dead_holders), and would count its people gone and
        end their games, telling them they left while their page is open here (sim `pause`
        seeds 75, 114, 149)."""
        for pid, n in list(self.sockets.items()):
            owner = self.owners.get(pid)
            if n > 0 and owner not in (None, self.me):
                self._holding(owner, Here(pid=pid, sender=self.me))

    async def _beat_loop(self) -> None:
        """The heartbeat on its own, every `beat_s`: never late because a tick is long (a
        takeover, a reconnect storm), or this process would look dead to the others — and
        to the matching script, which drops the queue entries of dead processes."""
        ttl_s = self.arena.setup.settings.takeover_after_s
        while True:
            await asyncio.sleep(beat_s(ttl_s))
            try:
                await self._beat(force=self._register_again)
                self._register_again = False
            except RedisError as err:  # Redis is down: said once (not a traceback each beat)
                if not self._beat_failing:
                    fault(log, "redis-beat-failing", logging.ERROR, process=self.me, error=str(err))
                self._beat_failing = self._register_again = True
                silent_s = monotonic() - self._beat_ok
                if silent_s >= ttl_s / 2:  # before the others can find it dead
                    await self._hang_up_cut_off(silent_s, ttl_s)
                continue
            except Exception:  # the store, asked while registering again: again next beat
                log.exception("heartbeat: registering again failed")
                self._register_again = True
                continue
            now = monotonic()
            # Silent long enough that others' heartbeats may have lapsed, not a late beat.
            silence_s = max(ttl_s / 2, 2 * beat_s(ttl_s))
            if now - self._beat_ok > silence_s:
                self.beat_back = now  # before `_beat_failing` clears: no tick judges first
            self._beat_failing = self._cut_off_said = self._cut_off_alone_said = False
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

    async def _hang_up_cut_off(self, silent_s: float, ttl_s: float) -> None:
        """Redis refusing this process for half its heartbeat's TTL and more (a network cut
        between the two, or Redis down that long). Another process that reaches Redis finds it
        dead and takes its games over, counting their people gone since its last beat; and it
        counts the people with a socket here whose game it plays gone too. Their pages open
        here, they would be told they had left (sim `redis-cut`). So this process says in the
        store at each beat that it lives; a process that finds it missing in Redis reads that
        (`Takeover.was_killed`: it is not dead, its people count gone only from then) and notes
        that it noticed. Once noticed, this one is cut off alone: it closes the sockets of
        everyone here whose game another process plays, and, after a TTL, of the games the
        store says were taken from it (given up here), for their pages to reconnect, through
        the balancer, to a process that reaches Redis. Nothing is closed on a guess: while
        Redis is down for every process nobody notices or takes anything over, and everyone
        stays connected (a page back here is let into a game this process plays,
        `Cluster._back_in_game_here`, else told the relay is delayed)."""
        store = self.arena.store
        if store is None:
            return
        noticed = await self.routes.read("a cut-off heartbeat", store.say_silent, self.me)
        alone = noticed is not None and noticed >= time() - silent_s
        if silent_s < ttl_s and not alone:
            return
        if not self._cut_off_said:
            fault(log, "redis-cut-off", logging.ERROR, process=self.me, silent_s=round(silent_s))
        self._cut_off_said = True
        here = list(self.arena.games.values())
        moved = set(self._relayed_here()) if alone else set()
        if moved and not self._cut_off_alone_said:
            self._cut_off_alone_said = True
            fault(log, "redis-cut-off-alone", logging.ERROR, process=self.me, relayed=len(moved))
        if silent_s >= ttl_s:
            try:
                await self._give_up_taken()
            except Exception as err:  # the store unreachable too: asked again at the next beat
                log.warning("cut off: could not ask the store for takeovers (%s)", err)
            moved |= {
                view.participant.id
                for game in here
                if game.id not in self.arena.games
                for view in game.views.values()
            }
        for pid in moved:
            relay = self._publishers.get(pid)
            for outlet in list(self.arena.outlets.get(pid, ())):
                if outlet is not relay:
                    outlet(HANG_UP)

    def _relayed_here(self) -> list[str]:
        """The people with a socket here whose game is played on another process."""
        return [
            pid
            for pid, n in self.sockets.items()
            if n > 0 and self.owners.get(pid) not in (None, self.me)
        ]

    def _tell_relayed(self, code: str, message: str) -> None:
        """Everyone with a socket here whose game is played on another process."""
        for pid in self._relayed_here():
            self.arena.send(self.person(pid), F.Error(code=code, message=message))
