"""Catching up after Redis was away: pub/sub keeps nothing for a subscriber that is away, so a
process asks the owner of each of its people's games for the frames after the last one relayed
here in order (resume.py), again each tick until it answers; joins sent meanwhile are held and
played once it has. A game that ended elsewhere, on a process that died or does not answer, is
shown here from the store (stored_end.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from time import monotonic

from turinglab.arena.cluster.cluster_base import CATCHUP_S
from turinglab.arena.cluster.cluster_heartbeat import (
    RELAY_AGAIN_S,
    RELAY_NOTICE_S,
    ClusterHeartbeat,
)
from turinglab.arena.cluster.cluster_messages import Hello
from turinglab.arena.cluster.cluster_store_routes import ENDED_ASK_S
from turinglab.arena.core import frames as F
from turinglab.arena.core.live import InputRejected
from turinglab.arena.core.metrics import fault
from turinglab.arena.core.participants import Participant
from turinglab.arena.core.person_view import RELAY_DELAYED
from turinglab.arena.core.resume import ResumePoint
from turinglab.arena.core.stored_end import show_stored_end

log = logging.getLogger(__name__)


class ClusterCatchup(ClusterHeartbeat):
    def _channel(self, pid: str) -> str:
        return self.ns + "to:" + pid

    async def _follow(self, pid: str) -> None:
        """Subscribe to `pid`'s channel while a socket of theirs is here, and leave it after,
        on the listener's subscription. One change at a time, the listener's resubscribing
        included: a connect while Redis was away subscribed on the subscription being replaced,
        so nothing relayed reached them, and its connection went back to the pool still
        subscribed, where the next command read its replies (sim, `redis-pause` seed 11).
        While the listener is away nothing is sent: its resubscribe takes whoever is here."""
        async with self._subscribing:
            if not self._following:
                return
            want, have = self.sockets.get(pid, 0) > 0, pid in self._followed
            if want and not have:
                await self._pubsub.subscribe(self._channel(pid))
                self._followed.add(pid)
            elif have and not want:
                self._followed.discard(pid)
                await self._pubsub.unsubscribe(self._channel(pid))

    async def _resubscribe(self) -> None:
        assert self.redis is not None
        async with self._subscribing:  # no person's channel changes on either meanwhile
            old, pubsub = self._pubsub, self.redis.pubsub()
            people = set(self.sockets)
            await pubsub.subscribe(self.ns + "proc:" + self.me, *(self._channel(p) for p in people))
            await self._say_listening()
            self._pubsub, self._followed, self._following = pubsub, people, True
            with contextlib.suppress(Exception):
                await old.aclose()
        await self._beat(force=True)
        self._check_holders_again()
        # Frames published while we were away are gone, and so may be any sent before the
        # owner's own listener is back: ask each owner for what we missed until it answers.
        # Someone asking for the end of a game that ended elsewhere keeps the shorter bound
        # (connect): the store has that end if its process does not answer (it died).
        now_m = monotonic()
        for pid in list(self.sockets):
            ended = pid in self._asking_ended
            self.catchup[pid] = now_m + (ENDED_ASK_S if ended else CATCHUP_S)
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
        self.arena.metrics.catchups += 1
        self._holding(owner, Hello(pid=pid, sender=self.me, resume=self.seen.get(pid)))

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

    def _tell_unanswered(self, now_m: float) -> None:
        """Someone whose game's owner has not answered them for RELAY_NOTICE_S is told to
        wait, and again every RELAY_AGAIN_S: an owner that died just before Redis restarted
        empty is found dead only a whole TTL after Redis is back (cluster_takeover.py), and
        their page heard nothing for 20 s (sim seed 260). So is someone whose input sent on to
        the owner has had no answer, nor any frame, for as long: the owner may have died with
        it (sim seed 999: a message sent just after the owner was killed, its answer 17.9 s
        later, from the process that took the game over)."""
        asked = {pid: now_m for pid in self.catchup}
        for pid, sent in self._input_sent.items():
            asked[pid] = min(sent, asked.get(pid, sent))
        for pid in self._unanswered.keys() - asked.keys():
            del self._unanswered[pid]
        for pid, first in asked.items():
            since, told_at = self._unanswered.setdefault(pid, (first, 0.0))
            if now_m - since >= RELAY_NOTICE_S and now_m - told_at >= RELAY_AGAIN_S:
                self._unanswered[pid] = (since, now_m)
                if self.owners.get(pid) not in (None, self.me) and self.sockets.get(pid, 0) > 0:
                    self.arena.send(
                        self.person(pid), F.Error(code="relay-delayed", message=RELAY_DELAYED)
                    )

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

    def _left_elsewhere(self, participant: Participant, resume: ResumePoint | None) -> None:
        """A game that ended here (its route deleted), which the page reconnecting does not
        name, was left since, maybe on another process that could not tell this one: show
        the lobby, not its end. Taken for the answer to a join lost with that process, the
        end would stop the page from sending the join again (study.js)."""
        game = self.arena.games.get(participant.game or "")
        named = resume is not None and game is not None and resume.game == game.id
        if game is not None and game.result is not None and not named:
            participant.game = None
