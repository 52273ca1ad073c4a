"""The `Hub` of an arena served by one process: every person, queue and game is here.

Each method is the one-process `Arena`'s own (hub.py), awaited for the web layer's sake: none
waits on anything, so a socket's frames are played in the order they came, as before.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from turinglab.arena.core.admin_end import end_by_admin
from turinglab.arena.core.hub_port import HERE

if TYPE_CHECKING:
    from turinglab.arena.core import frames as F
    from turinglab.arena.core.hub import Arena
    from turinglab.arena.core.participants import Participant
    from turinglab.arena.core.person_view import Outlet
    from turinglab.arena.core.resume import ResumePoint
    from turinglab.arena.core.store_bridge import ArenaStore

HEALTH_TIMEOUT_S = 2.0


def plays_here(arena: Arena, gid: str) -> bool:
    """Game `gid` is live in this process."""
    game = arena.games.get(gid)
    return game is not None and game.result is None


def blind_fallbacks(arena: Arena) -> int:
    """Interrogators this process's lobby drew for a person who met an AI: no witness was free
    at their drawn time (matchmaking_wait.py)."""
    blind = arena.lobby.blind
    return 0 if blind is None else blind.fallbacks


async def store_answers(store: ArenaStore) -> bool:
    """The store answers one query in time (/healthz)."""
    try:
        await asyncio.wait_for(asyncio.to_thread(store.store.ping), HEALTH_TIMEOUT_S)
    except Exception:
        return False
    return True


class LocalHub:
    def __init__(self, arena: Arena, store: ArenaStore | None) -> None:
        """`store`: the start-up study's, which /healthz asks after (None: none)."""
        self._arena = arena
        self._store = store

    @property
    def arena(self) -> Arena:
        return self._arena

    @property
    def process(self) -> str | None:
        return None

    @property
    def study_fixed(self) -> str | None:
        return None

    @property
    def people_scope(self) -> str:
        return ""

    async def start(self) -> None:
        pass

    async def stop(self) -> None:
        pass

    async def tick(self) -> None:
        self._arena.tick()

    async def connect(
        self, person: Participant, outlet: Outlet, resume: ResumePoint | None
    ) -> None:
        self._arena.connect(person, outlet, resume)

    async def handle(self, person: Participant, frame: F.ClientFrame) -> None:
        self._arena.handle(person, frame)

    async def disconnect(self, person: Participant, outlet: Outlet) -> None:
        self._arena.disconnect(person, outlet)

    async def withdraw(self, person: Participant) -> None:
        self._arena.withdraw(person)

    async def live_games(self) -> list[dict[str, Any]]:
        return self._arena.live_games()

    async def owner_of(self, gid: str) -> str | None:
        return HERE if plays_here(self._arena, gid) else None

    async def end_game(self, owner: str, gid: str, reason: str) -> None:
        end_by_admin(self._arena, gid, reason)

    def fallbacks_here(self) -> int:
        return blind_fallbacks(self._arena)

    async def study_fallbacks(self) -> int:
        return self.fallbacks_here()  # this process is the whole study

    def metric_rows(self) -> list[list[str]]:
        return []

    async def health(self) -> dict[str, bool]:
        return {} if self._store is None else {"store": await store_answers(self._store)}
