"""Who plays where: the `player:<id>` routes of the games played here, and the hooks the arena
calls as its games start, end, are fenced or give rounds back (given to it as the `Cluster`
builds it: core/game_hooks.py).

A route names the game and the process that owns it; a route naming a process that died and
was taken over is stale (`_route_state`).
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from turinglab.arena.cluster.cluster_base import ClusterBase
from turinglab.arena.core.live import SERVER_LOST, LiveGame
from turinglab.arena.core.metrics import fault

log = logging.getLogger(__name__)


class ClusterRoutes(ClusterBase):
    def _announce(self, game: LiveGame) -> None:
        """Route the game's people here (`player:<pid>` in Redis)."""
        record = json.dumps({"game": game.id, "owner": self.me})
        for view in game.views.values():
            pid = view.participant.id
            self.owners[pid] = self.me
            self.outbox.put("set", self.ns + "player:" + pid, record)

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

    def _game_started(self, game: LiveGame) -> None:
        for view in game.views.values():  # who met whom is recorded as they are matched
            self.waiting.pop(view.participant.id, None)
        self._announce(game)
        for view in game.views.values():  # after their route: queued nowhere now
            self.outbox.put("delete", self.queued.key(view.participant.id))

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

    async def _give_up_taken(self) -> None:
        store = self.arena.store
        playing = self.arena.stored_ids()
        if store is None or not playing:
            return
        owners = await asyncio.to_thread(store.owners, list(playing))
        for gid, game in playing.items():
            if owners.get(gid) != self.me:
                self._stop_taken(game, owners.get(gid))

    async def _give_up_if_taken(self, game: LiveGame) -> str | None:
        """The process the store says owns `game` (played here, as far as this one knows)
        when that is another: this one was stopped past its TTL and the game was taken over,
        so it is given up here now, as registering again would do later, when the woken
        process may already have shown the new owner's frames as stale or answered an input
        of a game it no longer plays. None while it is ours, or the store cannot say."""
        store = self.arena.store
        ids = [sid for sid, live in self.arena.stored_ids().items() if live is game]
        if store is None or not ids:
            return None
        try:
            owner = (await asyncio.to_thread(store.owners, ids)).get(ids[0])
        except Exception:  # the store unreachable: the game stays ours until it says
            log.warning("could not ask the store who owns game %s", game.id)
            return None
        if owner is None or owner == self.me:
            return None
        self._stop_taken(game, owner)
        return owner

    def _stop_taken(self, game: LiveGame, owner: str | None) -> None:
        log.warning("game %s was taken over by %s; stopped here", game.id, owner)
        for view in game.views.values():  # as when fenced: or the new owner's frames
            self.owners.pop(view.participant.id, None)  # would be dropped as stale
        self.arena.give_up(game)

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
