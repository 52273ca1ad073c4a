"""Finished games in memory are bounded when a store keeps them all; the admin page's counts
still cover every game. Without a store, memory is the only copy: everything is kept."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import aiohttp

from arena_fixtures import ADMIN_PASSWORD, Person, make_setup, running_arena
from turinglab.arena.core.finished import FinishedGames
from turinglab.arena.core.store_bridge import ArenaStore
from turinglab.store.database import Store

AUTH = {"Authorization": aiohttp.encode_basic_auth("admin", ADMIN_PASSWORD)}


def record(n: int, flagged: bool = False) -> dict[str, Any]:
    return {
        "game": f"g{n}",
        "mode": "three-party",
        "flags": ["witness failed"] if flagged else [],
        "seats": {
            "interrogator": {"kind": "human", "participant": "p-1"},
            "witness_a": {"kind": "ai", "agent": "smollm2"},
        },
        # An engine game names its witness group in its plan: that is what is counted.
        "trial": {"params": {"witnesses": {"witness_a": {"name": "SMOLLM2-PERSONA"}}}},
    }


def test_only_the_last_k_are_kept_but_counts_cover_all() -> None:
    done = FinishedGames(keep=3)
    for n in range(5):
        done.append(record(n, flagged=n == 0))
    assert [r["game"] for r in done] == ["g2", "g3", "g4"] and len(done) == 3
    assert (done.total, done.flagged) == (5, 1) and not done.kept_all
    assert done.per_witness == {("three-party", "SMOLLM2-PERSONA"): 5}
    everything = FinishedGames(keep=None)
    for n in range(5):
        everything.append(record(n))
    assert len(everything) == 5 and everything.kept_all


async def _practice(base: str) -> None:
    p = Person(base)
    await p.connect()
    await p.send(type="join", mode="practice", consent=True)
    await p.until("game")
    await p.send(type="message", channel="A", text="hello")
    await p.until("message", sender="them")
    await p.send(type="end")  # a verdict only after the end
    await p.send(type="verdict", choice="ai", confidence=70, reason="quick")
    await p.until("reveal")
    await p.close()


async def test_the_admin_page_counts_games_no_longer_in_memory(tmp_path: Path) -> None:
    setup = make_setup(finished_in_memory=1, ai_after_s=0)
    kept = ArenaStore(Store(str(tmp_path / "a.db")), setup)
    with running_arena(setup, store=kept) as (base, app):
        for _ in range(3):
            await _practice(base)
        async with aiohttp.ClientSession() as http, http.get(base + "/admin", headers=AUTH) as r:
            page = re.sub(r"\s+", " ", await r.text())
        assert len(app.state.arena.finished) == 1
    assert "3 finished (0 flagged or abandoned)" in page  # from the store
    assert "<td>practice</td><td>eliza</td><td>3</td>" in page
    assert "the store holds every game; the table per AI witness counts this process" in page


async def test_without_a_store_every_game_stays_in_memory() -> None:
    with running_arena(make_setup(finished_in_memory=1)) as (base, app):
        for _ in range(2):
            await _practice(base)
        async with aiohttp.ClientSession() as http, http.get(base + "/admin", headers=AUTH) as r:
            page = await r.text()
        assert len(app.state.arena.finished) == 2
    assert "no store: it is the only copy" in page
    # ... and no other study can be opened: it would mix its games with this one's.
    assert "Opening another study needs a store" in page and 'action="/admin/study"' not in page
