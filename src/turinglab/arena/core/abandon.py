"""People who leave a game: the others are told, the game ends `abandoned`, no round is lost.

A dropped connection is not a departure — people reload pages and phones change networks — so
a person counts as gone once none of their connections has been open for `abandon_after_s`
(checked on every lobby tick). Then the game ends as ABANDONED with everything said kept (the
table's messages are the record), everyone still there is told in plain words, and the game
gives its rounds back: it is no study data. Which seats still matter, and when, each game
kind says itself (`LiveGame.seat_matters`): in the chat games a witness who leaves after the
talk is over no longer matters (the verdict is the interrogator's), an interrogator who leaves
before giving it ends the game; STT, live ITT and GTT games answer for their own phases
(strong_mode.py, live_itt_mode.py, gtt_live.py). A game kind that watches its people itself
(the ITT chat's, `watched_by_arena = False`) is left to its own watcher.

Flagged games (an AI witness failed, no verdict in time) give their rounds back too: like an
abandoned game, they are listed in the study export's exclusions, not counted. The AI witness
groups of such a game go back to the front of the interrogator's cycle (rounds.py), so a
witness that failed costs that game, and the interrogator still meets every group.

Whether a person is there is the arena's one rule (presence.py), `present` here, which every
live game is given too (the ITT chat's own watcher asks it): both come from the arena's hooks
(game_hooks.py), given at construction. With several processes
(cluster.py) a person's connections may be on another process: the cluster's rule knows which
processes hold a socket of theirs (each tells the owner as it opens or closes the last one,
and a process that dies takes its people's presence with it). The owner also notes when it
first counted someone gone, in Redis and in the game's stored log (an `Away` control event,
which outlives a Redis restart), so that after a takeover the new owner counts from then, not
from the takeover (`carry_over`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from turinglab.arena.core.game_hooks import LOCAL_HOOKS, GoneNote
from turinglab.arena.core.presence import Present
from turinglab.games.control_log import Away, Back
from turinglab.games.spec import FINISHED, GameResult

if TYPE_CHECKING:
    from turinglab.arena.core.live import LiveGame
    from turinglab.arena.core.rounds import RoundBook

ABANDONED = "abandoned"  # a game's status when a person left it
LEFT_FLAG = "arena: abandoned: the {role} left (no reconnect within {grace:g} s)"
TOLD_STAYED = (
    "The other person left the game and did not come back. Everything said so far is kept, "
    "but this game will not count as one of your rounds. Sorry — please choose another game."
)
TOLD_LEFT = "You left this game, so it has ended and will not count as one of your rounds."


class AbandonWatch:
    """Ends live games whose people have gone (see the module docstring)."""

    def __init__(
        self,
        grace_s: float,
        *,
        present: Present = LOCAL_HOOKS.present,
        noted: GoneNote = LOCAL_HOOKS.seat_gone_since,
    ) -> None:
        """`present`: whether a person has a connection open anywhere (presence.py), the
        arena's one rule, which every live game asks too (`LiveGame.present`). `noted`: told
        (game, seat, now) when a person is first counted gone and (game, seat, None) when they
        are back; the cluster keeps it for whoever takes the game over."""
        self.grace_s = grace_s
        self._gone_since: dict[tuple[str, str], float] = {}  # (game, seat) -> first seen gone
        self._present = present
        self._noted = noted

    def tick(self, games: Iterable[LiveGame], now: float) -> None:
        for game in list(games):
            if game.result is not None or not game.watched_by_arena:
                continue  # over already; or a game kind that watches its own people
            for seat, view in game.views.items():
                key = (game.id, seat)
                if not game.seat_matters(view) or self._present(view):
                    if self._gone_since.pop(key, None) is not None:
                        self._noted(game.id, seat, None)
                        game.controls.record(Back(seat), vital=False)
                    continue
                since = self._gone_since.get(key)
                if since is None:
                    since = self._gone_since[key] = now
                    self._noted(game.id, seat, now)
                    game.controls.record(Away(seat), vital=False)
                if now - since >= self.grace_s:
                    self._abandon(game, seat)
                    break

    def carry_over(self, game: str, seat: str, since: float) -> None:
        """Count a seat of a game taken over here as gone since `since` (this clock) unless
        they are present at the next tick."""
        self._gone_since[(game, seat)] = since

    def _abandon(self, game: LiveGame, seat: str) -> None:
        role = game.departed_role(game.views[seat])
        flag = LEFT_FLAG.format(role=role, grace=self.grace_s)
        notes = {s: TOLD_LEFT if s == seat else TOLD_STAYED for s in game.views}
        for key in [k for k in self._gone_since if k[0] == game.id]:
            del self._gone_since[key]
        game.end_now(GameResult(ABANDONED, flags=[flag]), notes)


def give_rounds_back(game: LiveGame, book: RoundBook) -> bool:
    """A study game that did not finish cleanly (abandoned or flagged) is not a round for
    anyone in it. True if rounds were given back."""
    result = game.result
    if game.mode.solo or result is None or (result.status == FINISHED and not result.flags):
        return False
    for view in game.views.values():
        book.unrecord(view.participant.id, view.role)
        if view.role == "interrogator":  # and the AI witness groups are theirs to meet again
            book.give_groups_back(view.participant.id, game.mode.name, game.ai_groups)
    return True
