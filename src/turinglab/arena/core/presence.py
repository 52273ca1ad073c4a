"""Whether a person in a live game is still there: the one rule every watcher of departures asks.

A person is present while a socket of theirs is open somewhere. On one process that is "their
view has an outlet" (`connected_here`). With several processes (cluster.py) a person's view
also holds the Redis relay that publishes their frames to sockets on other processes; the relay
is there for as long as the process knows them, so it says nothing about whether anyone is
listening. The cluster's rule (`Cluster._present`) is: a socket of theirs open here, or another
process that holds one and has not told us it closed (it does when the last closes, and a
process that dies takes its people's presence with it).

The rule is one of the arena's hooks (game_hooks.py), given to the arena as it is built; it
hands it to its AbandonWatch and to every game it builds (`LiveGame.present`), so a mode with
its own watcher (the ITT chat's) asks the same question as the lobby's abandon watch.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Protocol


class Attending(Protocol):
    """What the rule is asked about: a person's view of a game (live.py's PersonView)."""

    @property
    def outlets(self) -> Collection[object]: ...


Present = Callable[[Attending], bool]


def connected_here(view: Attending) -> bool:
    """One process: present while a socket of theirs is open (each socket is an outlet)."""
    return bool(view.outlets)
