"""Departures from the games with their own live class (STT, live ITT, GTT), over real
websockets: a person who leaves for the arena's `abandon_after_s` while their seat still
matters ends the game `abandoned` (everything said kept, stored so, the others told in the
words every game uses); a person who leaves once nothing more is asked of them voids nothing."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from arena_fixtures import Person, running_arena
from test_arena_gtt import gtt_setup, join, until_state
from test_arena_strong import SYSTEM_AGENT, strong_setup
from test_arena_strong_itt import setup as live_itt_setup
from turinglab.agents.scripted import ScriptedAgent
from turinglab.arena import ArenaSetup
from turinglab.arena.core.abandon import ABANDONED, TOLD_LEFT, TOLD_STAYED
from turinglab.arena.core.store_bridge import ArenaStore
from turinglab.store.database import Store

GRACE_S = 0.5


def quick(setup: ArenaSetup) -> ArenaSetup:
    setup.settings = setup.settings.model_copy(update={"abandon_after_s": GRACE_S})
    return setup


async def state(person: Person, **match: Any) -> dict[str, Any]:
    return await person.until("strong", timeout=15, **match)


async def two_join(base: str, mode: str) -> tuple[Person, Person]:
    """Two people join `mode` (an STT-transport mode); returns (investigator/judge, the other)."""
    a, b = Person(base), Person(base)
    for p in (a, b):
        await p.connect()
        await p.send(type="join", mode=mode, consent=True)
    sa, _sb = await state(a), await state(b)
    return (a, b) if sa["role"] == "investigator" else (b, a)


def stored(kept: ArenaStore) -> dict[str, Any]:
    (game,) = kept.records()
    return game


async def gone_and_counted(app: Any, person_seat: str) -> None:
    """Wait until the arena's rule counts the seat's person absent, then for several grace
    windows more: had their seat still mattered, the game would have been abandoned by now."""
    game = next(iter(app.state.arena.games.values()))
    view = game.views[person_seat]
    while game.present(view):
        await asyncio.sleep(0.05)
    await asyncio.sleep(GRACE_S * 6)


async def test_stt_a_respondent_who_leaves_mid_session_abandons_it(tmp_path: Path) -> None:
    setup = quick(strong_setup())
    kept = ArenaStore(Store(str(tmp_path / "arena.db")), setup)
    try:
        with running_arena(setup, store=kept) as (base, _app):
            inv, resp = await two_join(base, "strong")
            await inv.send(type="message", channel="A", text="What did you eat today?")
            await state(resp, phase="answering")
            await resp.close()  # closes the tab mid-turn: the investigator waits on their reply
            end = await state(inv, phase="ended")
            assert end["flagged"] == TOLD_STAYED
            await inv.close()
        game = stored(kept)
        assert game["status"] == ABANDONED
        assert game["flags"] == [
            f"arena: abandoned: the respondent left (no reconnect within {GRACE_S:g} s)"
        ]
        assert "What did you eat today?" in [m["text"] for m in game["messages"]]
    finally:
        kept.close()


async def test_stt_an_investigator_who_leaves_abandons_it_and_the_respondent_is_told() -> None:
    with running_arena(quick(strong_setup())) as (base, app):
        inv, resp = await two_join(base, "strong")
        try:
            await inv.send(type="message", channel="A", text="What did you eat today?")
            await state(resp, phase="answering")
            await resp.send(type="message", channel="A", text="porridge")
            await state(inv, phase="choosing")
            await inv.close()  # their choices are the data: without them the session is void
            end = await state(resp, phase="ended")
            assert end["flagged"] == TOLD_STAYED
            (record,) = app.state.arena.finished
            assert record["status"] == ABANDONED and "the investigator left" in record["flags"][0]
        finally:
            await resp.close()


async def test_stt_a_respondent_who_leaves_after_the_last_answer_voids_nothing() -> None:
    system = ScriptedAgent(SYSTEM_AGENT, ["toast", "wet", "blue"], cycle=True)
    with running_arena(quick(strong_setup(system))) as (base, app):
        inv, resp = await two_join(base, "strong")
        try:
            for n in (1, 2, 3):  # the study mode plays three turns
                if n > 1:  # (two_join read the first "asking")
                    await state(inv, phase="asking")
                await inv.send(type="message", channel="A", text=f"question {n}?")
                await state(resp, phase="answering")
                await resp.send(type="message", channel="A", text=f"answer {n}")
                await state(inv, phase="choosing")
                if n == 3:  # answered the last turn: nothing more is asked of them
                    seat = next(
                        s for s, v in next(iter(app.state.arena.games.values())).views.items()
                        if v.role == "witness"
                    )  # fmt: skip
                    await resp.close()
                    await gone_and_counted(app, seat)
                await inv.send(type="preference", reply=1)
            end = await state(inv, phase="ended")
            assert end["flagged"] is None and end["scores"]
            (record,) = app.state.arena.finished
            assert record["status"] != ABANDONED and not record["flags"]
            prefs = [j for j in record["judgements"] if j["kind"] == "preference"]
            assert len(prefs) == 3
        finally:
            await inv.close()
            await resp.close()


async def test_live_itt_a_human_agent_who_leaves_mid_session_abandons_it(tmp_path: Path) -> None:
    setup = quick(live_itt_setup("deceitful-ai", limit=5))
    kept = ArenaStore(Store(str(tmp_path / "arena.db")), setup)
    try:
        with running_arena(setup, store=kept) as (base, _app):
            judge, agent = await two_join(base, "live-itt")
            await judge.send(type="message", channel="A", text="what is your job?")
            await state(agent, phase="answering")
            await agent.close()
            end = await state(judge, phase="ended")
            assert end["flagged"] == TOLD_STAYED and end["outcome"] is None
            await judge.close()
        game = stored(kept)
        assert game["status"] == ABANDONED and "the human agent left" in game["flags"][0]
        assert "what is your job?" in [m["text"] for m in game["messages"]]
    finally:
        kept.close()


async def test_live_itt_a_judge_who_leaves_before_the_verdict_abandons_it() -> None:
    with running_arena(quick(live_itt_setup("deceitful-ai", limit=1))) as (base, app):
        judge, agent = await two_join(base, "live-itt")
        try:
            await judge.send(type="message", channel="A", text="what is your job?")
            await state(agent, phase="answering")
            await agent.send(type="message", channel="A", text="I teach maths")
            await state(judge, phase="verdict")
            await judge.close()  # the verdict is the data: the session is void without it
            end = await state(agent, phase="ended")
            assert end["flagged"] == TOLD_STAYED
            (record,) = app.state.arena.finished
            assert record["status"] == ABANDONED and "the judge left" in record["flags"][0]
        finally:
            await agent.close()


async def test_live_itt_the_human_agent_leaving_during_the_verdict_voids_nothing() -> None:
    with running_arena(quick(live_itt_setup("deceitful-ai", limit=1))) as (base, app):
        judge, agent = await two_join(base, "live-itt")
        try:
            await judge.send(type="message", channel="A", text="what is your job?")
            await state(agent, phase="answering")
            await agent.send(type="message", channel="A", text="I teach maths")
            got = await state(judge, phase="verdict")
            game = next(iter(app.state.arena.games.values()))
            (seat,) = [s for s in game.views if s != game.mode.judge]
            await agent.close()
            await gone_and_counted(app, seat)
            texts = [r["text"] for r in got["history"][-1]["replies"]]
            human = "AB"[texts.index("I teach maths")]
            await judge.send(type="verdict", choice=human, confidence=70, reason="")
            end = await state(judge, phase="ended")
            assert end["flagged"] is None and end["outcome"].startswith("The judge was right")
            (record,) = app.state.arena.finished
            assert record["status"] != ABANDONED and record["correct"] is True
        finally:
            await judge.close()
            await agent.close()


async def test_gtt_a_person_who_leaves_their_game_abandons_it(tmp_path: Path) -> None:
    setup = quick(gtt_setup())
    kept = ArenaStore(Store(str(tmp_path / "arena.db")), setup)
    try:
        with running_arena(setup, store=kept) as (base, app):
            person, _ = await join(base, "gtt-distinguish")
            await until_state(person, lambda s: s["phase"] == "writing")
            await person.send(type="message", channel="study", text="remember me")
            await until_state(person, lambda s: len(s["chats"][0]["lines"]) == 2)
            await person.close()  # the models would wait on them until the input timeout
            while not app.state.arena.finished:
                await asyncio.sleep(0.05)
            await kept.flush()
        game = stored(kept)
        assert game["status"] == ABANDONED
        assert game["flags"] == [
            f"arena: abandoned: the distinguisher left (no reconnect within {GRACE_S:g} s)"
        ]
        assert "remember me" in [m["text"] for m in game["messages"]]
    finally:
        kept.close()


async def test_gtt_a_returning_person_is_told_their_game_ended() -> None:
    """The one person of a GTT game is told in the arena's words if they come back."""
    with running_arena(quick(gtt_setup())) as (base, app):
        person, _ = await join(base, "gtt-act")
        try:
            await until_state(person, lambda s: s["chat"] == "study")
            await person.drop()
            while not app.state.arena.finished:
                await asyncio.sleep(0.05)
            again = await person.connect()  # the tab reopened: the end, in the arena's words
            assert again["type"] == "gtt" and again["phase"] == "ended", again
            assert again["reveal"]["flagged"] == TOLD_LEFT
            (record,) = app.state.arena.finished
            assert record["status"] == ABANDONED and "the actor left" in record["flags"][0]
        finally:
            await person.close()
