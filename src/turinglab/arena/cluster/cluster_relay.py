"""The listener: frames published for people with a socket here (`to:<id>`), and what other
processes send this one (`proc:<process>`: inputs, hellos, presence, admin ends), each parsed
once into its type (cluster_messages.py), one this process does not know dropped. A frame from
a process that no longer plays the person's game is dropped (`_stale`); the owner of each
person's game is learnt from the frames it relays.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
from time import time
from typing import Any, cast

from turinglab.arena.cluster.cluster_catchup import ClusterCatchup
from turinglab.arena.cluster.cluster_messages import (
    AdminEnd,
    AskHolding,
    Gone,
    Hello,
    Here,
    Input,
    Relayed,
    ToProcess,
    parse_message,
)
from turinglab.arena.core import frames as F
from turinglab.arena.core.admin_end import end_by_admin
from turinglab.arena.core.live import InputRejected
from turinglab.arena.core.metrics import fault
from turinglab.arena.core.mode_kits import state_frames
from turinglab.arena.core.page_protocol import is_snapshot
from turinglab.arena.core.resume import ResumePoint

log = logging.getLogger(__name__)

# The frame types of the kinds that send their state whole (each kit says its own).
STATE_FRAMES = state_frames()


class ClusterRelay(ClusterCatchup):
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
                self.listening = self._following = False
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

    async def _listen(self, pubsub: Any) -> None:
        async for item in pubsub.listen():
            if item.get("type") != "message":
                continue
            if item["data"].startswith(self._mine):
                continue  # our own publish, to a person who also has a socket here
            message = parse_message(item["data"])
            if message is None:
                continue  # not one of ours: logged once, dropped
            try:
                if isinstance(message, Relayed):
                    if not await self._stale(message):
                        self._deliver(message)
                else:
                    await self._forwarded(message)
            except Exception:
                log.exception("redis: failed handling a message on %s", item.get("channel"))

    async def _stale(self, data: Relayed) -> bool:
        """Whether a frame comes from a process that no longer plays the person's game: one
        paused past its TTL wakes up with frames still queued, and must not show them to
        people whose game has moved on elsewhere (they may hold words never stored)."""
        pid, sender = data.pid, data.origin
        if sender == self.me:
            return False
        # A lookup, not `person()`: judging a frame must not create a session or an outlet.
        known_person = self.arena.sessions.by_id.get(pid)
        game = self.arena.games.get((known_person.game if known_person else None) or "")
        if game is not None and game.result is None:  # their game is played here, we think
            # A snapshot from another process: one of the two was stopped past its TTL and
            # woke up; the store says which (sim seeds 2, 3, 5 under `pause`).
            return not is_snapshot(data.frame) or await self._give_up_if_taken(game) != sender
        known = self.owners.get(pid)
        if not is_snapshot(data.frame):  # a `game` frame, or a whole state marked a snapshot
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

    def _deliver(self, data: Relayed) -> None:
        if data.origin == self.me:
            return
        self.arena.metrics.relay.observe(max(0.0, time() - data.sent_at))
        frame, pid, owner = data.frame, data.pid, data.origin
        kind = frame.get("type")
        self._input_sent.pop(pid, None)  # their game's owner answers them
        if kind == "game":
            self._game_shown[pid] = str(frame.get("game"))
            # Queued here, seated by another process: not waiting here any more (else shown
            # "waiting" if they came back here after that game, until max_wait_s).
            self.waiting.pop(pid, None)
            if self.owners.get(pid) != owner and pid in self.sockets:
                self._holding(owner, Here(pid=pid, sender=self.me))
            self.owners[pid] = owner
        elif kind == "reveal":
            self.owners.pop(pid, None)  # over: the owner forgets the game too
        elif (
            kind in STATE_FRAMES  # a mode whose frame is its state: no "game" snapshot
            and pid in self.sockets
            and owner not in self._told_holding.get(pid, ())
        ):  # its owner, too, counts this socket present until told it closed (presence.py)
            self._holding(owner, Here(pid=pid, sender=self.me))
        if kind == "game" or (kind == "status" and frame.get("state") != "waiting"):
            self.queued.forget(pid)  # answered by the process that queued them, if any
        if kind in STATE_FRAMES and is_snapshot(frame):  # its sender owns the game now
            self.owners[pid] = owner
        self._track(pid, frame)
        publisher, dumped = self._publishers.get(pid), cast(Any, frame)
        for outlet in list(self.arena.outlets.get(pid, ())):
            if outlet is not publisher:
                outlet(dumped)  # sockets take frames already dumped (app.py)

    def _track(self, pid: str, frame: dict[str, Any]) -> None:
        """Where `pid` is in their game stream, as relayed here in order (for a catch-up)."""
        kind, seen = frame.get("type"), self.seen.get(pid)
        if kind in ("game", "resumed", *STATE_FRAMES) and frame.get("stream"):
            self.seen[pid] = ResumePoint(frame["game"], frame["stream"], int(frame.get("seq") or 0))
        elif kind == "status":
            self.seen.pop(pid, None)
        elif (
            seen is not None
            and frame.get("seq") == seen.seq + 1
            and frame.get("stream", seen.stream) == seen.stream
        ):
            self.seen[pid] = ResumePoint(seen.game, seen.stream, seen.seq + 1)
        if kind in ("game", "resumed", "status", *STATE_FRAMES):
            self._answered(pid)

    async def _forwarded(self, data: ToProcess) -> None:
        if isinstance(data, AdminEnd):  # the admin, on another process, ended a game played here
            end_by_admin(self.arena, data.game, data.reason)
            return
        if isinstance(data, AskHolding):  # an owner back on Redis checks what we hold
            self._answer_holding(data)
            return
        if data.pid in self.takeover.rebuilding:  # handled once their game is rebuilt, in order,
            self._later(self._forwarded_after_rebuild(data))  # not holding up the listener
            return
        participant = self.person(data.pid)
        if data.sender is not None:  # a process holding a socket of theirs says so, or it closed
            held = self.holders.setdefault(participant.id, set())
            if isinstance(data, Gone):
                held.discard(data.sender)
                return
            held.add(data.sender)
            if isinstance(data, Here):
                return
        if isinstance(data, Hello):
            if data.resume is None or not self.arena.resume(participant, data.resume):
                self.arena.send(participant, self.arena.state_frame(participant))
            return
        frame = None
        try:
            frame = F.parse_client_frame(data.raw)
            await self.handle(participant, frame, forwarded=True)
        except (InputRejected, F.BadFrame) as err:
            code = getattr(err, "code", "bad-frame")
            ref = getattr(frame, "id", None)  # the input it answers, so the page stops resending
            self.arena.send(participant, F.Error(code=code, message=str(err), ref=ref))

    async def _forwarded_after_rebuild(self, data: Hello | Here | Gone | Input) -> None:
        await self.takeover.rebuilt(data.pid)
        await self._forwarded(data)
