"""The arena over real websockets (uvicorn + aiohttp clients): a full three-party game between
two people and a scripted AI witness, reconnects, the game's rules at the transport, limits,
sessions and the admin password."""

from __future__ import annotations

import asyncio
from typing import Any

import aiohttp
import pytest

from arena_fixtures import (
    ADMIN_PASSWORD,
    SECRET_AGENT,
    Person,
    make_setup,
    pair,
    running_arena,
)


async def test_three_party_game_end_to_end() -> None:
    records: list[dict[str, Any]] = []
    with running_arena(on_finished=records.append) as (base, _app):
        judge, witness, gj, gw = await pair(base, "three-party")
        assert gj["channels"] == ["A", "B"] and gj["judge_choices"] == ["A", "B"]
        assert gw["channels"] == ["A"] and gw["judge_choices"] == [] and gj["deadline"]

        # The witness may not write first; nobody may exceed 300 characters.
        await witness.send(type="message", channel="A", text="hello?")
        assert (await witness.until("error"))["code"] == "wait"
        await judge.send(type="message", channel="A", text="x" * 301)
        assert (await judge.until("error"))["code"] == "too-long"

        for ch in ("A", "B"):
            await judge.send(type="message", channel=ch, text=f"hi {ch}, where are you from?")
            mine = await judge.until("message", channel=ch, sender="you")
            assert mine["text"] == f"hi {ch}, where are you from?"
        await judge.send(type="message", channel="A", text="and again?")  # before any reply
        assert (await judge.until("error"))["code"] == "wait"

        heard = await witness.until("message", sender="them")
        human_alias = heard["text"][3]  # which of A/B the person sits behind
        ai_alias = "B" if human_alias == "A" else "A"
        await witness.send(type="typing", channel="A")
        assert (await judge.until("typing"))["channel"] in ("A", "B")
        await witness.send(type="message", channel="A", text="manchester <b>mate</b>")
        got = await judge.until("message", channel=human_alias, sender="them")
        assert got["text"] == "manchester <b>mate</b>"
        ai = await judge.until("message", channel=ai_alias, sender="them")
        assert ai["text"] == "hi there"

        # A dropped connection: the snapshot on reconnect holds every message so far.
        await judge.drop()
        snap = await judge.connect()
        assert snap["type"] == "game" and snap["game"] == gj["game"]
        assert [m["text"] for m in snap["messages"]] == [
            "hi A, where are you from?", "hi B, where are you from?",
            *sorted(["manchester <b>mate</b>", "hi there"],
                    key=lambda t: [m["text"] for m in snap["messages"]].index(t)),
        ]  # fmt: skip
        assert len(snap["messages"]) == 4

        await judge.send(type="end")
        assert (await judge.until("phase"))["phase"] == "verdict"
        await judge.send(type="verdict", choice=human_alias, confidence=83, reason="slang")
        reveal = await judge.until("reveal")
        wreveal = await witness.until("reveal")
        assert reveal["correct"] is True and reveal["verdict"] == human_alias
        assert reveal["confidence"] == 83
        sides = {s["channel"]: s for s in reveal["sides"]}
        assert sides[human_alias]["kind"] == "human"
        assert sides[ai_alias] == {"channel": ai_alias, "kind": "ai", "name": "Zorblax (scripted)"}
        assert wreveal["you"] == human_alias and wreveal["sides"] == reveal["sides"]

        for _ in range(100):
            if records:
                break
            await asyncio.sleep(0.02)
        (rec,) = records
        seat = {v["kind"]: s for s, v in rec["seats"].items() if s != "interrogator"}
        typed = [(m["sender"], m["text"]) for m in rec["messages"]]
        assert ("interrogator", "hi A, where are you from?") in typed
        assert (seat["human"], "manchester <b>mate</b>") in typed
        assert (seat["ai"], "hi there") in typed and len(typed) == 4
        (j,) = rec["judgements"]
        assert (j["verdict"], j["confidence"], j["reason"]) == (seat["human"], 83.0, "slang")
        assert rec["seats"][seat["ai"]] == {"kind": "ai", "agent": SECRET_AGENT}
        assert rec["seats"][seat["human"]]["participant"].startswith("p-")

        # The game is over: one may join another; the finished game's reveal survives refresh.
        await witness.drop()
        again = await witness.connect()
        assert again["type"] == "game" and again["reveal"]["you"] == human_alias
        for p in (judge, witness):
            await p.close()


async def test_lone_person_meets_eliza_and_one_game_at_a_time() -> None:
    with running_arena(make_setup(ai_after_s=0)) as (base, _app):
        p = Person(base)
        await p.connect()
        await p.send(type="join", mode="two-party", consent=False)
        assert (await p.until("error"))["code"] == "consent"
        await p.send(type="join", mode="two-party", consent=True)
        game = await p.until("game")
        assert game["role"] == "interrogator" and game["judge_choices"] == ["human", "ai"]
        await p.send(type="join", mode="two-party", consent=True)
        assert (await p.until("error"))["code"] == "in-game"
        await p.send(type="message", channel="A", text="I feel sad about my mother")
        reply = await p.until("message", sender="them")
        assert reply["text"].isupper()  # ELIZA's 1966 capitals
        await p.send(type="end")  # a verdict only after the end
        await p.send(type="verdict", choice="ai", confidence=100, reason="")
        assert (await p.until("reveal"))["correct"] is True
        await p.close()


async def test_failing_ai_witness_flags_the_game() -> None:
    class Broken:
        name = "broken"
        endpoint = None

        async def reply(self, history: Any, ctx: Any) -> Any:
            raise RuntimeError("server exploded")

        async def aclose(self) -> None:
            return None

    setup = make_setup()
    setup.agents = {**setup.agents, "eliza": Broken()}  # type: ignore[dict-item]
    with running_arena(setup) as (base, app):
        p = Person(base)
        await p.connect()
        await p.send(type="join", mode="practice", consent=True)
        await p.until("game")
        await p.send(type="message", channel="A", text="hello")
        reveal = await p.until("reveal")
        assert reveal["flagged"] and "will not count" in reveal["flagged"]
        (rec,) = app.state.arena.finished
        assert rec["status"] == "flagged" and "server exploded" in rec["flags"][0]
        await p.close()


async def test_limits_bad_frames_and_sessions() -> None:
    with running_arena(make_setup(frames_per_s=1, frame_burst=3, max_frame_bytes=512)) as (
        base,
        _app,
    ):
        p = Person(base)
        await p.connect()
        await p.send(type="nonsense")
        err = await p.until("error")
        assert err["code"] == "bad-frame" and "type" in err["message"]
        await p.send(type="survey", answers={"x": "y" * 600})
        assert (await p.until("error"))["code"] == "limit"
        for _ in range(5):
            await p.send(type="leave")
        assert "too fast" in (await p.until("error", code="limit"))["message"]
        await p.close()

        # No cookie, no game: the socket says why and closes.
        async with (
            aiohttp.ClientSession() as s,
            s.ws_connect(base.replace("http", "ws") + "/ws") as ws,
        ):
            frame = await ws.receive_json(timeout=5)
            assert frame["code"] == "no-session"


async def test_admin_needs_the_password() -> None:
    with running_arena() as (base, _app):
        async with aiohttp.ClientSession() as s:
            for path in ("/admin", "/admin/export.json", "/admin/live.json"):
                async with s.get(base + path) as r:
                    assert r.status == 401
                bad = {"Authorization": aiohttp.encode_basic_auth("admin", "guess")}
                async with s.get(base + path, headers=bad) as r:
                    assert r.status == 401
                good = {"Authorization": aiohttp.encode_basic_auth("admin", ADMIN_PASSWORD)}
                async with s.get(base + path, headers=good) as r:
                    assert r.status == 200
            async with s.get(base + "/") as r:
                assert "default-src 'self'" in r.headers["Content-Security-Policy"]


async def test_no_partner_in_time_sends_on_to_the_survey() -> None:
    with running_arena(make_setup(max_wait_s=0.2)) as (base, _app):
        p = Person(base)
        await p.connect()
        await p.send(type="join", mode="three-party", consent=True)
        assert (await p.until("status"))["state"] == "waiting"
        status = await p.until("status", timeout=5)
        assert status["state"] == "no-match" and status["waited_s"] >= 0.2
        await p.send(type="survey", answers={"comments": "nobody came"})
        assert (await p.until("status"))["state"] == "survey-saved"
        await p.close()


def test_admin_password_from_environment_or_generated(monkeypatch: pytest.MonkeyPatch) -> None:
    from turinglab.arena.web.serve import PASSWORD_ENV, admin_password

    monkeypatch.setenv(PASSWORD_ENV, "s3cret")
    assert admin_password() == ("s3cret", False)
    monkeypatch.delenv(PASSWORD_ENV)
    first, generated = admin_password()
    assert generated and len(first) >= 16 and admin_password()[0] != first
