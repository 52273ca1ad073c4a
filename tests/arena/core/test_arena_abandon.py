"""People are never left hanging: a person who leaves a game (no connection back within the
grace period) ends it as `abandoned`, the others are told, everything said is kept and nobody
loses a round; and the server refuses what the page never sends (a verdict before the end, a
survey before consent, twice, or with made-up questions) with one error frame."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import aiohttp

from arena_fixtures import ADMIN_PASSWORD, Person, make_setup, pair, running_arena
from turinglab.arena.core.abandon import ABANDONED, TOLD_STAYED
from turinglab.arena.core.frame_rules import SURVEY_KEYS
from turinglab.arena.core.store_bridge import ArenaStore
from turinglab.arena.web.page_routes import STATIC
from turinglab.arena.web.study_page import render_page
from turinglab.human.exclusions import apply_exclusions
from turinglab.human.schema import load_study
from turinglab.store.database import Store


async def _exchange(judge: Person, witness: Person) -> None:
    await judge.send(type="message", channel="A", text="hello, who is there?")
    await judge.send(type="message", channel="B", text="and you?")
    heard = await witness.until("message", sender="them")
    await witness.send(type="message", channel=heard["channel"], text="just me, hi")
    await judge.until("message", sender="them")


def _game(app: Any, gid: str) -> dict[str, Any]:
    return next(g for g in app.state.arena.export()["games"] if g["game"] == gid)


async def test_a_witness_who_leaves_ends_the_game_abandoned_and_the_interrogator_is_told() -> None:
    with running_arena(make_setup(abandon_after_s=0.5, rounds=2)) as (base, app):
        judge, witness, gj, _gw = await pair(base, "three-party")
        await _exchange(judge, witness)
        await witness.close()  # closes the tab: no reconnect
        await judge.until("phase", phase="ended")
        reveal = await judge.until("reveal")
        assert reveal["flagged"] == TOLD_STAYED and reveal["verdict"] is None
        record = _game(app, gj["game"])
        assert record["status"] == ABANDONED
        assert record["flags"] == ["arena: abandoned: the witness left (no reconnect within 0.5 s)"]
        said = [m["text"] for m in record["messages"] if m["sender"] != "game"]
        assert "just me, hi" in said and "hello, who is there?" in said  # everything kept
        # Not a round: the interrogator is back at 0 of 2.
        await judge.send(type="leave")
        status = await judge.until("status")
        assert status["rounds"] == {"played": 0, "total": 2}
        await judge.close()


async def test_an_interrogator_who_leaves_ends_the_game_and_the_witness_is_told() -> None:
    with running_arena(make_setup(abandon_after_s=0.5)) as (base, app):
        judge, witness, gj, _gw = await pair(base, "three-party")
        await _exchange(judge, witness)
        await judge.close()
        reveal = await witness.until("reveal")
        assert reveal["flagged"] == TOLD_STAYED
        record = _game(app, gj["game"])
        assert record["status"] == ABANDONED and "interrogator left" in record["flags"][0]
        await witness.close()


async def test_a_reconnect_within_the_grace_period_keeps_the_game() -> None:
    with running_arena(make_setup(abandon_after_s=20)) as (base, app):
        judge, witness, gj, _gw = await pair(base, "three-party")
        await witness.drop()
        assert (await witness.connect())["type"] == "game"  # back, same game
        await _exchange(judge, witness)
        await judge.send(type="end")
        await judge.send(type="verdict", choice="A", confidence=50, reason="")
        reveal = await judge.until("reveal")
        assert reveal["flagged"] is None
        assert _game(app, gj["game"])["status"] == "finished"
        for p in (judge, witness):
            await p.close()


async def test_a_witness_writing_after_the_end_is_not_asked_for_a_verdict() -> None:
    with running_arena(make_setup()) as (base, _app):
        judge, witness, _gj, _gw = await pair(base, "three-party")
        await _exchange(judge, witness)
        await judge.send(type="end")
        await witness.until("phase", phase="verdict")  # the interrogator decides
        await witness.send(type="message", channel="A", text="one more thing")
        told = await witness.until("error")
        assert told["code"] == "not-now" and "verdict" not in told["message"], told
        for p in (judge, witness):
            await p.close()


async def test_a_verdict_only_after_the_end() -> None:
    with running_arena(make_setup()) as (base, _app):
        p = Person(base)
        await p.connect()
        await p.send(type="join", mode="practice", consent=True)
        await p.until("game")
        await p.send(type="message", channel="A", text="hello")
        await p.until("message", sender="them")
        await p.send(type="verdict", choice="ai", confidence=90, reason="mid-game")
        assert (await p.until("error"))["code"] == "not-now"
        await p.send(type="preference", reply=1)  # another game's frame
        assert (await p.until("error"))["code"] == "not-now"
        await p.send(type="message", channel="A", text="still playing?")
        await p.until("message", sender="them")  # the game goes on
        await p.send(type="end")
        await p.send(type="end")  # a second end changes nothing
        await p.send(type="verdict", choice="ai", confidence=90, reason="capitals")
        assert (await p.until("reveal"))["correct"] is True
        await p.close()


async def test_the_survey_after_consent_once_with_known_questions_only() -> None:
    with running_arena(make_setup()) as (base, app):
        # Before consent there is no session, so no socket to send a survey on.
        url = base.replace("http", "ws") + "/ws"
        async with aiohttp.ClientSession() as s, s.ws_connect(url) as ws:
            assert (await ws.receive_json(timeout=30))["code"] == "no-session"
        p = Person(base)
        await p.connect()
        await p.send(type="join", mode="practice", consent=True)
        await p.until("game")
        await p.send(type="survey", answers={"gender": "Female"})
        assert (await p.until("error"))["code"] == "in-game"
        await p.send(type="message", channel="A", text="hello")
        await p.until("message", sender="them")
        await p.send(type="end")
        await p.send(type="verdict", choice="ai", confidence=90, reason="")
        await p.until("reveal")
        await p.send(type="survey", answers={"gender": "Female", "is_admin": "yes"})
        err = await p.until("error")
        assert err["code"] == "bad-survey" and "is_admin" in err["message"]
        await p.send(type="survey", answers={"gender": "Female", "comments": "fun"})
        assert (await p.until("status"))["state"] == "survey-saved"
        await p.send(type="survey", answers={"gender": "Male"})
        assert (await p.until("error"))["code"] == "survey-done"
        (mine,) = [x for x in app.state.arena.export()["participants"] if x["survey"]]
        assert mine["survey"] == {"gender": "Female", "comments": "fun"}
        await p.close()


def test_the_known_survey_questions_are_the_forms() -> None:
    page = render_page((STATIC / "index.html").read_text(), make_setup(), False).decode()
    form = page[page.index('<form id="survey"') :]
    form = form[: form.index("</form>")]
    assert set(re.findall(r'name="([a-z_]+)"', form)) == SURVEY_KEYS


async def test_abandoned_games_are_listed_among_the_reports_exclusions(tmp_path: Path) -> None:
    """The study file carries the abandoned game with its reason; the report's exclusions
    count it (not_finished) beside the games it analyses."""
    with running_arena(make_setup(abandon_after_s=0.5, ai_after_s=0)) as (base, _app):
        judge, witness, _gj, _gw = await pair(base, "three-party")
        await _exchange(judge, witness)
        await witness.close()
        await judge.until("reveal")
        await judge.close()
        alone = Person(base)  # a clean two-party game against ELIZA
        await alone.connect()
        await alone.send(type="join", mode="two-party", consent=True)
        await alone.until("game")
        for text in ("hello there", "how are you?"):
            await alone.send(type="message", channel="A", text=text)
            await alone.until("message", sender="them")
        await alone.send(type="end")
        await alone.send(type="verdict", choice="ai", confidence=90, reason="capitals")
        await alone.until("reveal")
        await alone.close()
        auth = {"Authorization": aiohttp.encode_basic_auth("admin", ADMIN_PASSWORD)}
        async with (
            aiohttp.ClientSession() as s,
            s.get(base + "/admin/export/study.jsonl", headers=auth) as r,
        ):
            body = await r.text()
        async with (
            aiohttp.ClientSession() as s,
            s.get(base + "/admin/export.json", headers=auth) as r,
        ):
            export = await r.json()
    path = tmp_path / "study.jsonl"
    path.write_text(body)
    study = load_study(path)
    assert len(study) == 1  # the ELIZA game's row; the abandoned game is set aside
    _kept, report = apply_exclusions(study)
    assert report.games_before == 2 and report.games_excluded == 1
    summary = report.summary()
    assert "not_finished: 1 games" in summary
    assert "abandoned: the witness left (no reconnect within 0.5 s)" in summary
    reasons = sorted(str(g["exclude_reason"]) for g in export["games"])
    assert reasons == ["None", "abandoned: the witness left (no reconnect within 0.5 s)"]


async def test_an_abandoned_game_is_kept_in_the_store_with_its_reason(tmp_path: Path) -> None:
    setup = make_setup(abandon_after_s=0.5)
    kept = ArenaStore(Store(str(tmp_path / "arena.db")), setup)
    with running_arena(setup, store=kept) as (base, _app):
        judge, witness, _gj, _gw = await pair(base, "three-party")
        await _exchange(judge, witness)
        await judge.close()  # the interrogator leaves
        await witness.until("reveal")
        await witness.close()
        auth = {"Authorization": aiohttp.encode_basic_auth("admin", ADMIN_PASSWORD)}
        async with (
            aiohttp.ClientSession() as s,
            s.get(base + "/admin/export.json", headers=auth) as r,
        ):
            export = await r.json()
    (game,) = export["games"]
    assert game["status"] == ABANDONED
    assert game["exclude_reason"].startswith("abandoned: the interrogator left")
    assert "just me, hi" in [m["text"] for m in game["messages"]]
