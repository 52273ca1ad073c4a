"""A Strong Turing Test session is a fold over its messages: cut anywhere, replayed onto a fresh
table and resumed (as a process that took a live session over does), it ends with the same
transcript and the same preferences, each counted once, as the session played in one go."""

from __future__ import annotations

import pytest

from games_helpers import table_for
from test_strong import batch_agents, make_game
from turinglab.games.clock import SimulatedClock
from turinglab.games.kinds import RESUMABLE
from turinglab.games.spec import FINISHED, GameResult
from turinglab.games.table import Table


def _said(table: Table) -> list[tuple[str, str, str, tuple[str, ...]]]:
    return [(m.sender, m.phase, m.text, m.visible_to) for m in table.messages]


def _prefs(result: GameResult) -> list[tuple[int | None, str | None, bool, list[str]]]:
    return [(j.turn, j.choice, j.tie, j.details["order"]) for j in result.judgements]


async def test_resumed_from_every_cut_the_session_ends_as_played_in_one_go() -> None:
    game = make_game()
    assert RESUMABLE.of(game) is not None
    spec = game.plan()[0]
    whole = table_for(game, spec, batch_agents(), SimulatedClock())
    played = await game.play(whole, spec)
    assert played.status == FINISHED and len(played.judgements) == 3
    cuts = range(len(whole.messages) + 1)
    for cut in cuts:
        table = table_for(game, spec, batch_agents(), SimulatedClock())
        table.replay(whole.messages[:cut])
        resumed = await game.resume(table, spec, started_at=table.clock.now())
        assert _said(table) == _said(whole), cut  # nothing said twice, nothing missing
        assert resumed.status == FINISHED and _prefs(resumed) == _prefs(played), cut


@pytest.mark.parametrize("cut_phase", ["choose-2", "result-2"])
async def test_a_choice_already_stored_is_not_asked_again(cut_phase: str) -> None:
    game = make_game()
    spec = game.plan()[0]
    whole = table_for(game, spec, batch_agents(), SimulatedClock())
    await game.play(whole, spec)
    cut = 1 + max(i for i, m in enumerate(whole.messages) if m.phase == cut_phase)
    agents = batch_agents()
    table = table_for(game, spec, agents, SimulatedClock())
    table.replay(whole.messages[:cut])
    await game.resume(table, spec, started_at=0.0)
    # The investigator is called for turn 3 only (its question, its choice), not for turn 2.
    assert len(agents["inv"].histories) == 2
