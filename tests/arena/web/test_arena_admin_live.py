"""The admin during a study, over real HTTP: a running game's live transcript, ending a stuck
game (flagged with the admin's reason; its people are told and get the round back), the
participants with their recruitment ids and rounds, wrong passwords throttled per address,
and no OpenAPI schema or docs pages."""

from __future__ import annotations

import asyncio
import logging
import re

import aiohttp
import pytest

from arena_fixtures import ADMIN_PASSWORD, Person, make_setup, pair, running_arena

AUTH = {"Authorization": aiohttp.encode_basic_auth("admin", ADMIN_PASSWORD)}


async def _get(base: str, path: str, **headers: str) -> tuple[int, str]:
    async with aiohttp.ClientSession() as s, s.get(base + path, headers=headers) as r:
        return r.status, await r.text()


async def test_live_transcript_and_ending_a_game_with_a_reason() -> None:
    with running_arena(make_setup(ai_after_s=0)) as (base, app):
        judge, witness, game, _ = await pair(base, "three-party")
        await judge.send(type="message", channel="A", text="<b>are you real?</b>")
        await judge.until("message", sender="you")
        status, page = await _get(base, "/admin", **AUTH)
        assert status == 200 and f'href="/admin/game/{game["game"]}"' in page
        status, page = await _get(base, f"/admin/game/{game['game']}", **AUTH)
        assert status == 200
        assert "&lt;b&gt;are you real?&lt;/b&gt;" in page  # escaped, as every value
        assert 'http-equiv="refresh"' in page  # live: it refreshes itself
        csrf = re.search(r'name="csrf" value="([^"]+)"', page)
        assert csrf is not None

        async with aiohttp.ClientSession() as s:
            form = {"csrf": csrf.group(1), "reason": "the witness is stuck"}
            url = f"{base}/admin/game/{game['game']}/end"
            async with s.post(url, data=form, headers=AUTH, allow_redirects=False) as r:
                assert r.status == 303
        for person in (judge, witness):
            reveal = await person.until("reveal")
            assert "researchers ended this game" in reveal["flagged"]
        (record,) = app.state.arena.export()["games"]
        assert record["status"] == "flagged"
        assert record["flags"] == ["arena: ended by the admin: the witness is stuck"]
        # Nobody lost a round: both may play again as if it had not happened.
        assert app.state.arena.lobby.rounds.played(judge_id(app, judge)) == 0
        status, page = await _get(base, f"/admin/game/{game['game']}", **AUTH)
        assert "ended: flagged" in page and 'http-equiv="refresh"' not in page
        await judge.close()
        await witness.close()


def judge_id(app: object, person: Person) -> str:
    arena = app.state.arena  # type: ignore[attr-defined]
    cookie = next(iter(person.http.cookie_jar)).value
    return str(arena.sessions.get(cookie).id)


async def test_participants_are_listed_with_their_recruitment_ids_and_rounds() -> None:
    with running_arena(make_setup()) as (base, _app):
        person = Person(base)
        consent = {"consent": True, "ids": {"PROLIFIC_PID": "abc123", "evil": "x", "pid": "<x>"}}
        async with person.http.post(base + "/consent", json=consent) as r:
            assert r.status == 200
        await person.connect()
        status, page = await _get(base, "/admin", **AUTH)
        assert status == 200 and "PROLIFIC_PID=abc123" in page
        assert "evil" not in page and "&lt;x&gt;" not in page  # unknown or odd ids: dropped
        assert "0 of 8" in page
        await person.close()


async def test_consent_is_needed_for_a_session() -> None:
    with running_arena(make_setup()) as (base, app):
        async with aiohttp.ClientSession() as s:
            async with s.get(base + "/") as r:
                assert "Set-Cookie" not in r.headers
            async with s.post(base + "/consent", json={"consent": False}) as r:
                assert r.status == 400
            async with s.post(base + "/consent", data="consent=true") as r:
                assert r.status == 415  # a cross-site form cannot start one
        assert len(app.state.arena.sessions) == 0


async def test_wrong_admin_passwords_are_throttled_per_address(
    caplog: pytest.LogCaptureFixture,
) -> None:
    wrong = {"Authorization": aiohttp.encode_basic_auth("admin", "guess")}
    with running_arena(make_setup()) as (base, _app), caplog.at_level(logging.WARNING):
        # The admin logged in from this browser before anyone guessed: it keeps a device cookie.
        admin = aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True))
        async with admin.get(base + "/admin", headers=AUTH) as r:
            assert r.status == 200 and "tl_admin_device" in r.cookies
        for _ in range(5):
            assert (await _get(base, "/admin", **wrong))[0] == 401
        async with aiohttp.ClientSession() as s, s.get(base + "/admin", headers=wrong) as r:
            assert r.status == 429 and int(r.headers["Retry-After"]) > 0
        # Refused even with the right password until the minute is over: no oracle.
        assert (await _get(base, "/admin", **AUTH))[0] == 429
        # Nobody can lock that browser out, and its password is still checked.
        try:
            async with admin.get(base + "/admin", headers=AUTH) as r:
                assert r.status == 200
            async with admin.get(base + "/admin", headers=wrong) as r:
                assert r.status == 401
        finally:
            await admin.close()
    lines = [r for r in caplog.records if "wrong passwords from 127.0.0.1" in r.getMessage()]
    assert len(lines) == 1


async def test_no_openapi_schema_or_docs() -> None:
    with running_arena(make_setup()) as (base, _app):
        for path in ("/openapi.json", "/docs", "/redoc"):
            assert (await _get(base, path))[0] == 404


async def test_an_stt_session_is_ended_by_the_admin_too() -> None:
    from test_arena_strong import strong_setup

    with running_arena(strong_setup()) as (base, app):
        person = Person(base)
        await person.connect()
        await person.send(type="join", mode="strong-practice", consent=True)
        state = await person.until("strong")
        status, page = await _get(base, f"/admin/game/{state['game']}", **AUTH)
        csrf = re.search(r'name="csrf" value="([^"]+)"', page)
        assert status == 200 and csrf is not None
        async with aiohttp.ClientSession() as s:
            form = {"csrf": csrf.group(1), "reason": "test run"}
            url = f"{base}/admin/game/{state['game']}/end"
            async with s.post(url, data=form, headers=AUTH, allow_redirects=False) as r:
                assert r.status == 303
        ended = await person.until("strong", phase="ended")
        assert ended["flagged"]
        (record,) = app.state.arena.finished
        assert record["flags"] == ["arena: ended by the admin: test run"]
        await person.close()


@pytest.mark.database
async def test_the_admin_of_one_process_ends_a_game_played_by_another(postgres_url: str) -> None:
    from test_arena_multiprocess import SERVER, arena_processes

    async with arena_processes(SERVER, postgres_url) as procs:
        person = Person(procs.bases[0])  # plays on process 0
        await person.connect()
        await person.send(type="join", mode="practice", consent=True)
        game = await person.until("game")
        other = procs.bases[1]  # the admin's page came from process 1
        for _ in range(300):  # the game's row reaches the shared store as it starts
            status, page = await _get(other, f"/admin/game/{game['game']}", **AUTH)
            if status == 200 and "End the game" in page:
                break
            await asyncio.sleep(0.05)
        csrf = re.search(r'name="csrf" value="([^"]+)"', page)
        assert csrf is not None, page
        async with aiohttp.ClientSession() as s:
            form = {"csrf": csrf.group(1), "reason": "stuck on process 0"}
            url = f"{other}/admin/game/{game['game']}/end"
            async with s.post(url, data=form, headers=AUTH, allow_redirects=False) as r:
                assert r.status == 303
        reveal = await person.until("reveal")
        assert "researchers ended this game" in reveal["flagged"]
        await person.close()


async def test_blind_matching_fallbacks_in_metrics_and_on_the_admin_page() -> None:
    """One process: an interrogation drawn with a person, nobody free at the drawn time, so
    an AI witness — counted once in /metrics and on /admin."""
    from turinglab.arena.core.matchmaking_wait import MatchDesign

    design = MatchDesign(human_witness_share=1.0, wait_min_s=0.2, wait_max_s=0.3)
    with running_arena(make_setup(design=design)) as (base, _app):
        person = Person(base)
        await person.connect()
        _, page = await _get(base, "/admin", **AUTH)
        assert "matchmaking fallbacks: 0 (0 on this process)" in page
        await person.send(type="join", mode="two-party", consent=True)
        await person.until("game", timeout=10)
        _, metrics = await _get(base, "/metrics", **AUTH)
        assert "turinglab_arena_matchmaking_fallbacks_total 1\n" in metrics
        _, page = await _get(base, "/admin", **AUTH)
        assert "matchmaking fallbacks: 1 (1 on this process)" in page
        assert "1 participant · 1 live game · 0 finished" in page  # the whole study
        await person.close()
