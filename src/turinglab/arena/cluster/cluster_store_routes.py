"""Where the store says a person is, for a cluster process (cluster.py) when Redis cannot say.

Redis holds the routes (`player:<id>`: the game and the process that plays it), but only as
copies: a restart empties them, commands are dropped after 30 s of an outage (redis_outbox.py),
and an owner deletes a route when its game ends, so a page that missed that end finds none. The
store is the record of who played where: each read here is bounded (STORE_LOOKUP_S) and
skipped while the store's writer knows it is out (STORE_QUIET_S), since a read would then
hold a thread up to the connect timeout.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from time import time
from typing import TYPE_CHECKING, Any, TypeVar

from turinglab.arena.core.metrics import fault

if TYPE_CHECKING:
    from turinglab.arena.cluster.cluster_view import ClusterView
    from turinglab.arena.core.participants import Participant
    from turinglab.arena.core.resume import ResumePoint
    from turinglab.games.spec import GameResult
    from turinglab.store.arena_games import StoredGame
    from turinglab.store.arena_people import PastRounds

log = logging.getLogger(__name__)
T = TypeVar("T")

# A store that failed a commit this recently is not asked for a lost round book or a lost route.
STORE_QUIET_S = 10.0
STORE_LOOKUP_S = 5.0  # a store that takes longer to say where someone plays is not waited for
# A page back within ENDED_REPLAY_S of its game's end elsewhere is shown the end it missed, by
# the process that played it; asked ENDED_ASK_S (it may have died), then from the store here.
ENDED_REPLAY_S = 60.0
ENDED_ASK_S = 3.0


class StoreRoutes:
    """The store's answers to "where is this person" for one cluster process."""

    def __init__(self, cluster: ClusterView) -> None:
        self.cluster = cluster
        self.read_failed = False  # the latest read that routes someone failed

    def unsure(self) -> bool:
        """The store cannot say where people are now: out, or its latest such read failed."""
        return self.read_failed or self.out()

    def out(self) -> bool:
        """The store's writer failed a commit lately."""
        store = self.cluster.arena.store
        failed = None if store is None else store.writer.last_failure_at
        return failed is not None and time() - failed < STORE_QUIET_S

    async def read(self, what: str, read: Callable[..., T], *args: Any) -> T | None:
        """A store read that routes someone: None when it does not answer within
        STORE_LOOKUP_S (then, with a warning)."""
        try:
            async with asyncio.timeout(STORE_LOOKUP_S):
                found = await asyncio.to_thread(read, *args)
        except Exception as err:
            log.warning("store: %s could not be read (%r)", what, err)
            self.read_failed = True
            return None
        self.read_failed = False
        return found

    async def live_owner(self, participant: Participant) -> str | None:
        """Where the store says `participant` is playing, when Redis has no route for them.
        Without this, someone whose game goes on elsewhere would be shown the lobby here,
        join again, and be seated twice. Asked only of people with a round counted (anyone
        ever seated) and not in a game here."""
        cluster = self.cluster
        pid, store = participant.id, cluster.arena.store
        here = cluster.arena.games.get(participant.game or "")
        if store is None or (here is not None and here.result is None):
            return None
        if cluster.arena.lobby.rounds.played(pid) == 0 or self.out():
            return None  # the route (none) is all there is
        found = await self.read(f"where {pid} plays", store.live_game_of, pid)
        game, owner = found if found is not None else ("", None)
        if owner is None:
            return None
        if owner == cluster.me:  # ended here (its end not committed yet), or claimed here
            if here is None or here.id != game:
                await cluster.takeover.rebuilt(pid)  # in a takeover: wait for its rebuild
            return None
        # Also seen for a game that has just ended there (its route deleted, its end not
        # committed yet): its owner then answers with the lobby, as it would have here.
        fault(log, "route-missing", participant=pid, game=game, owner=owner, process=cluster.me)
        return owner

    async def ended_owner(
        self, participant: Participant, resume: ResumePoint
    ) -> tuple[str, bool] | None:
        """(the process, whether it lives) where the game a reconnecting page names ended
        moments ago, when that game is not here: the page's socket closed with another process
        (a SIGKILL) as the game ended, and its end, relayed there, was lost. A living process
        still holds the game (hub.FORGET_ENDED_AFTER_S) and sends the page what it missed, the
        reveal; without this the page went from the game straight to the lobby here. A
        heartbeat outlives its process, so it is asked ENDED_ASK_S only (Cluster._ask_again);
        when it does not answer, or has died, the end is shown here from the store."""
        cluster = self.cluster
        pid, store = participant.id, cluster.arena.store
        if store is None or resume.game in cluster.arena.games or self.out():
            return None
        found = await self.read(f"where {pid} ended", store.game_end, pid, resume.game)
        owner, ended_at = found if found is not None else (None, 0.0)
        if owner is None or owner == cluster.me or time() - ended_at > ENDED_REPLAY_S:
            return None
        assert cluster.redis is not None
        alive = bool(await cluster.redis.exists(cluster.ns + "alive:" + owner))
        log.debug("ended elsewhere %s: %s on %s (alive %s)", pid, resume.game, owner, alive)
        return owner, alive

    async def ended_game(self, game: str) -> tuple[StoredGame, GameResult] | None:
        """The ended game `game` as the store has it (stored_end.py)."""
        store = self.cluster.arena.store
        if store is None or self.out():
            return None
        return await self.read(f"the end of {game}", store.ended_game, game)

    async def plays(self, pid: str) -> bool:
        """Whether the store has `pid` in a live game; not known (the store out) is taken for
        no, as for a person who believes they wait."""
        store = self.cluster.arena.store
        if store is None:
            return False
        return await self.read(f"whether {pid} plays", store.live_game_of, pid) is not None

    async def past_rounds(self, run: str, pid: str) -> PastRounds | None:
        """A person's rounds as the store has them: what rebuilds a round book Redis lost."""
        store = self.cluster.arena.store
        if store is None or store.run_id != run:
            return None
        if self.out():
            raise ConnectionError("the store failed a commit moments ago")
        return await asyncio.to_thread(store.study_rounds, pid)
