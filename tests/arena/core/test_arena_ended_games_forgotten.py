"""An ended game is forgotten after a while: a long study's games do not pile up in memory (nor
in each tick's walk over the games), and its record stays where the study keeps it."""

from __future__ import annotations

import asyncio

import pytest

from arena_fixtures import make_setup, pair, running_arena
from turinglab.arena.core import hub


async def test_an_ended_game_is_forgotten_later_and_its_people_come_back_to_the_lobby(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with running_arena(make_setup(abandon_after_s=0.5)) as (base, app):
        arena = app.state.arena
        judge, witness, gj, _gw = await pair(base, "three-party")
        gid = gj["game"]
        await witness.close()  # the game ends abandoned
        await judge.until("reveal")
        await asyncio.sleep(1.5)  # ticks: not forgotten yet
        assert gid in arena.games

        monkeypatch.setattr(hub, "FORGET_ENDED_AFTER_S", 0.0)
        for _ in range(50):
            if gid not in arena.games:
                break
            await asyncio.sleep(0.1)
        assert gid not in arena.games
        assert any(g["game"] == gid for g in arena.export()["games"])  # still in the study

        # The interrogator reloads: the lobby, not a game that is no longer kept.
        await judge.drop()
        try:
            first = await judge.connect()
            assert first["type"] == "status" and first["state"] == "idle"
        finally:
            await judge.close()
