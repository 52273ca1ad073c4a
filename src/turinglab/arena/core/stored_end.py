"""The end of a game shown from the store, to a page that missed it where nobody else can.

A page whose socket closed as its game ended comes back to a process where the game never
was, naming that game. The process where it ended sends it the reveal it missed
(cluster_store_routes.py); when that process has died (a SIGKILL as the game ended) or does
not answer, the store still has all the reveal says: the seats, the transcript and the result.
The game is rebuilt here already over, only to show that person their end: never played,
stored or counted (its round was counted, or given back, where it ended). Then the lobby, as
after any game. Every kind is rebuilt in the live class its mode record declares
(live.live_class), and shows its end in its own end screen (`already_over`): the chat games a
reveal, the STT and live ITT their ended state, GTT its reveal, ITT chats their ended chat;
each says why the game will not count (server lost, a person left, the researchers ended it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from turinglab.arena.core.abandon import LEFT_FLAG, TOLD_LEFT, TOLD_STAYED
from turinglab.arena.core.admin_end import ADMIN_ENDED, ADMIN_FLAG
from turinglab.arena.core.live import LiveGame, live_class
from turinglab.arena.core.participants import Participant
from turinglab.arena.core.takeover import rebuilt
from turinglab.games.spec import GameResult
from turinglab.store.arena_games import StoredGame

if TYPE_CHECKING:
    from turinglab.arena.core.hub import Arena

ADMIN_PREFIX = ADMIN_FLAG.split("{", 1)[0]  # "arena: ended by the admin: "
LEFT_PREFIX = LEFT_FLAG.split("{", 1)[0]  # "arena: abandoned: the "


def show_stored_end(
    arena: Arena,
    participant: Participant,
    game_id: str,
    found: tuple[StoredGame, GameResult] | None,
    person: Callable[[str], Participant],
) -> bool:
    """Put `participant` in their ended game `game_id` here, already over (rebuilt from
    `found`, the store's, unless another of its people came back here first), so what they
    are sent next (a snapshot) is its transcript and reveal, as the process where it ended
    showed them to the others. False for a game of a mode not served here, or not theirs."""
    here = arena.games.get(participant.game or "")
    if here is not None and here.result is None:
        return False  # in a game here (never meant to happen: they named another one)
    game = arena.games.get(game_id)
    if game is None and found is not None:
        game = _rebuilt_over(arena, *found, person)
    if game is None or game.result is None:
        return False
    if all(view.participant.id != participant.id for view in game.views.values()):
        return False
    arena.games.setdefault(game.id, game)  # forgotten as any ended game is (hub.py)
    participant.game = game.id
    game.view_of(participant).outlets = arena.outlets.setdefault(participant.id, set())
    return True


def _rebuilt_over(
    arena: Arena,
    stored: StoredGame,
    result: GameResult,
    person: Callable[[str], Participant],
) -> LiveGame | None:
    mode = arena.setup.mode(stored.mode)
    if mode is None:
        return None
    # Over already: nothing is counted or kept here (no `on_finish`), nothing stored (no sink).
    game = rebuilt(arena, live_class(mode), mode, stored, person, lambda _game: None)
    game.table.replay(stored.messages)  # each person's messages, as they saw them
    told = {
        seat: told_from_flags(result, game.departed_role(view)) for seat, view in game.views.items()
    }
    game.already_over(result, told)
    return game


def told_from_flags(result: GameResult, role: str) -> str | None:
    """What the people of a game ended from outside its play were told (abandon.py,
    admin_end.py), from its flags; None: the reveal's own words."""
    for flag in result.flags:
        if flag.startswith(ADMIN_PREFIX):
            return ADMIN_ENDED
        if flag.startswith(LEFT_PREFIX):
            return TOLD_LEFT if flag.startswith(f"{LEFT_PREFIX}{role} ") else TOLD_STAYED
    return None
