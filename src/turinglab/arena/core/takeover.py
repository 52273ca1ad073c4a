"""A game whose process died, rebuilt in this one from the store and played on.

Everything a game showed anyone was committed first (store_bridge.py, commit_gate.py), so
another process can rebuild it from the committed messages alone, with no hole: the same arena
id (what people's clients know), the same seats and people, every message replayed onto a
fresh table (people see them again, AI witnesses find them in their history), and the clock
counted from the stored start, less the seconds it stood still while saving was delayed
(`games.paused_s`): the new owner gives the people the time left they had.

Whether the game then goes on is the game kind's call: a kind that can pick up a game from its
history has `resume(table, spec, started_at=...)`, played instead of `play`. Any other kind
(and any game past its time) ends at once FLAGGED "server lost": kept with everything said so
far, never a verdict, and the people are told so in plain words.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from turinglab.arena.core.live import VERDICT_GRACE_S, LiveGame, live_class
from turinglab.arena.core.live_reveal import SERVER_LOST
from turinglab.arena.core.participants import Participant
from turinglab.games.interrogation import ended_by_interrogator
from turinglab.games.kinds import RESUMABLE
from turinglab.games.spec import FLAGGED, GameResult, TrialSpec
from turinglab.games.table import Table
from turinglab.store.arena_games import StoredGame

if TYPE_CHECKING:
    from turinglab.arena.core.hub import Arena
    from turinglab.arena.core.modes import ArenaMode
    from turinglab.games.table import MessageSink

log = logging.getLogger(__name__)


async def _lost(table: Table, spec: TrialSpec) -> GameResult:
    return GameResult(FLAGGED, flags=[SERVER_LOST])


def resumes(game: LiveGame, now: float) -> bool:
    """Whether the rebuilt game can go on: its kind resumes, and it is not long over."""
    late = game.deadline is not None and now > game.deadline + VERDICT_GRACE_S
    return RESUMABLE.of(game.mode.game) is not None and not late


def rebuilt(
    arena: Arena,
    make: type[LiveGame],
    mode: ArenaMode,
    stored: StoredGame,
    person: Callable[[str], Participant],
    on_finish: Callable[[LiveGame], None],
    sink: MessageSink | None = None,
) -> LiveGame:
    """`stored` as a game here, not started: its id (what people's clients know), seats,
    people, start and deadline."""
    game = make(
        mode,
        stored.spec,
        {seat: person(pid) for seat, pid in stored.people.items()},
        arena.setup.agents,
        display_names=arena.setup.display_names,
        clock=arena.clock,
        on_finish=on_finish,
        sink=sink,
        hooks=arena.hooks,  # the arena's presence rule, and its cluster's fencing
    )
    game.id = stored.game
    game.started_at = stored.started_at
    game.deadline = stored.started_at + mode.duration_s if mode.duration_s else None
    return game


def restore(arena: Arena, stored: StoredGame, person: Callable[[str], Participant]) -> LiveGame:
    """Rebuild `stored` here and start it (resumed, or ended flagged at once)."""
    assert arena.store is not None
    mode = arena.setup.mode(stored.mode)
    if mode is None:  # every process of one study serves the same modes (the run id says so)
        raise ValueError(f"takeover: this process has no mode {stored.mode!r}")
    recorder = arena.store.recorder(stored.store_id, len(stored.messages), stored.epoch)
    make = live_class(mode)  # the class its mode record declares
    game = rebuilt(arena, make, mode, stored, person, arena._finished, recorder.sink)
    # The clock stood still under earlier owners while saving was delayed: it still does here,
    # so the people have the time left they had (the deadline is on the game's clock).
    game.clock.carry_over(stored.paused_s)
    # Only what was committed is replayed, and shown; what it says next waits for its commit.
    arena.store.attach(recorder, game, saved_through=len(stored.messages) - 1)
    game.controls.from_store(stored.controls, len(stored.messages))  # what it decided, in order
    game.table.replay(stored.messages)
    if ended_by_interrogator(game.table) is not None:
        # The talk was over before the takeover: its snapshot says so, and the verdict the
        # interrogator's page re-sends at once is taken, not refused as "not now".
        for view in game.views.values():
            view.phase, view.asked_end = "verdict", view.role == "interrogator"
    if resumes(game, game.clock.now()):
        game.play = functools.partial(
            mode.game.resume,  # type: ignore[attr-defined]
            started_at=stored.started_at,
        )
        log.warning("takeover: game %s resumes here", game.id)
    else:
        game.play = _lost
        log.warning("takeover: game %s cannot resume; ended flagged (server lost)", game.id)
    arena.open(game, recorder)
    return game
