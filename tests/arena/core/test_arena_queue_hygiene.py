"""Matching hygiene: a page that closes while queued leaves the queue at once (nobody is
seated with a person who has gone), and the waiting view tells the truth about the wait."""

from __future__ import annotations

from pathlib import Path

import aiohttp

from arena_fixtures import Person, make_setup, running_arena
from turinglab.arena.modes.setups import setup_from_config
from turinglab.config import load_config


async def test_a_page_closed_while_queued_leaves_the_queue_at_once() -> None:
    with running_arena(make_setup(ai_after_s=60, max_wait_s=120)) as (base, app):
        gone, stays, newcomer = Person(base), Person(base), Person(base)
        for p in (gone, stays, newcomer):
            await p.connect()
        await gone.send(type="join", mode="two-party", consent=True)
        await gone.until("status", state="waiting")
        await gone.drop()  # the tab closes: its close frame reaches the server
        await newcomer.send(type="join", mode="two-party", consent=True)
        await newcomer.until("status", state="waiting")
        seen = await newcomer.frames_within(1.5)  # with the gone person queued: a game at once
        assert not [f for f in seen if f["type"] == "game"]
        assert [w.participant.id for w in app.state.arena.lobby.waiting] == [
            app.state.arena.lobby.waiting[0].participant.id
        ]
        # Someone who is there is matched with the newcomer as before.
        await stays.send(type="join", mode="two-party", consent=True)
        assert (await stays.until("game"))["mode"] == "two-party"
        assert (await newcomer.until("game"))["mode"] == "two-party"
        for p in (gone, stays, newcomer):
            await p.close()


async def test_the_waiting_view_says_how_long_the_study_waits_at_most() -> None:
    with running_arena(make_setup(max_wait_s=300)) as (base, _app):
        async with aiohttp.ClientSession() as s, s.get(base + "/") as r:
            page = await r.text()
    assert "under a minute" not in page
    assert '<span id="wait-limit">5 minutes</span>' in page


def test_the_three_party_study_example_opens_as_shipped() -> None:
    config = Path(__file__).parents[3] / "configs" / "arena_three_party_study.yaml"
    setup = setup_from_config(load_config(config))
    (study, practice) = setup.modes
    assert study.name == "three-party" and len(study.witnesses) == 2 and practice.solo
    assert sorted(study.ai_agents) == ["ELIZA", "SMOLLM2-PERSONA"]  # two groups
    settings = setup.settings
    assert (settings.rounds, settings.seed, settings.max_wait_s) == (8, 7, 300)
    assert setup.name == "arena-three-party-study"
    assert settings.study.recruitment.early_exit.code == "C3PPART"
