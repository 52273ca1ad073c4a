"""The admin ends a game of every kind with its own live class the same way (admin_end.py: the
game's own `end_now`), over real HTTP and websockets: its person is told in that kind's end
screen that the researchers ended it, and the store keeps it flagged with the admin's reason."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from arena_fixtures import Person, running_arena
from arena_kinds import KINDS, ended, every_kind_setup, joined
from test_arena_admin_cluster import _end
from turinglab.arena.core.admin_end import ADMIN_ENDED
from turinglab.arena.core.store_bridge import ArenaStore
from turinglab.games.spec import FLAGGED
from turinglab.store.database import Store

pytestmark = pytest.mark.server


@pytest.mark.parametrize("name", list(KINDS))
async def test_the_admin_ends_a_game_of_each_kind_and_its_person_is_told(
    name: str, tmp_path: Path
) -> None:
    kind = KINDS[name]
    setup = every_kind_setup()
    kept = ArenaStore(Store(str(tmp_path / "arena.db")), setup)
    try:
        with running_arena(setup, store=kept) as (base, app):
            person = Person(base)
            try:
                assert (await person.connect())["type"] == "status"
                first = await joined(person, kind)
                await _end(base, first["game"])
                end = await ended(person, kind)
                assert end["game"] == first["game"]
                assert kind.flagged(end) == ADMIN_ENDED, end
            finally:
                await person.close()
            while not app.state.arena.finished:
                await asyncio.sleep(0.05)
            await kept.flush()
        (game,) = kept.records()
        assert game["status"] == FLAGGED
        assert game["flags"] == ["arena: ended by the admin: stuck (a test)"]
    finally:
        kept.close()
