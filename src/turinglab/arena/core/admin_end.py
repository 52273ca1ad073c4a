"""Ending a stuck game from /admin: flagged with the admin's reason, everything said kept.

Every kind of game is ended the same way, by its own `end_now`, which shows the early end in
that kind's own end screen. Its people are told in plain words and get the round back
(abandon.py's give_rounds_back: a flagged game is no study data). With several processes the
game's owner ends it: the admin's process forwards the request over Redis (cluster.py).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from turinglab.games.spec import FLAGGED, GameResult

if TYPE_CHECKING:
    from turinglab.arena.core.hub import Arena

log = logging.getLogger(__name__)

ADMIN_FLAG = "arena: ended by the admin: {reason}"
ADMIN_ENDED = (
    "The researchers ended this game. Everything said so far is kept, but it will not count "
    "as one of your rounds. Sorry — please choose another game."
)


def end_by_admin(arena: Arena, gid: str, reason: str) -> bool:
    """End game `gid` if this process plays it and it is still on; True if it was."""
    game = arena.games.get(gid)
    if game is None or game.result is not None:
        return False
    log.warning("admin: game %s ended by the admin: %s", gid, reason)
    # One path for every kind: each shows an early end in its own end screen (_show_end_now).
    flag = ADMIN_FLAG.format(reason=reason)
    game.end_now(GameResult(FLAGGED, flags=[flag]), dict.fromkeys(game.views, ADMIN_ENDED))
    return True
