"""What an arena tells, and asks, whoever runs it across processes: the port the cluster plugs in.

One process needs none of it: `LOCAL_HOOKS` does nothing and counts a person present while a
socket of theirs is open here (presence.py's `connected_here`). Several processes (the cluster
room) must route people as their games start and end, give shared rounds back, stop a game
another process has claimed (fenced), count a person present while a socket of theirs is open
on any process, and keep when a seat was first counted gone for a takeover's new owner. Core
never names the cluster: the cluster builds its arena with its own `GameHooks`, and the arena
hands them, at construction, to its AbandonWatch and to every game it builds, so nothing is
swapped in afterwards and every watcher asks the one presence rule from the first game on.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from turinglab.arena.core.presence import Present, connected_here

# Called with the LiveGame. Typed Any: live.py takes these hooks (a game is built with them), so
# this module cannot import it without a cycle.
GameHook = Callable[[Any], None]
# (game id, seat, since): `since` when the seat is first counted gone, None once they are back.
GoneNote = Callable[[str, str, float | None], None]


def _nothing(game: Any) -> None:
    return None


def _not_kept(game: str, seat: str, since: float | None) -> None:
    return None


@dataclass(frozen=True)
class GameHooks:
    """The arena's calls out (hub.py, abandon.py, live.py); each defaults to one process's."""

    game_started: GameHook = _nothing  # opened here (before anyone is told), new or taken over
    game_ended: GameHook = _nothing  # ended here, its record written
    rounds_given_back: GameHook = _nothing  # a game that was no round gave its rounds back here
    game_fenced: GameHook = _nothing  # a write was refused: another process owns it now
    present: Present = connected_here  # whether a person of a live game is still there
    seat_gone_since: GoneNote = _not_kept  # when a seat was first counted gone (or is back)


LOCAL_HOOKS = GameHooks()
