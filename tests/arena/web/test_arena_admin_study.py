"""Opening and closing a study from /admin: password and CSRF token required, the config
validated as everywhere else (errors shown escaped), new games follow the new study while a
game being played finishes under the old one, and closing goes back to the start-up study."""

from __future__ import annotations

import os
import re
from pathlib import Path

import aiohttp
import pytest

from arena_fixtures import ADMIN_PASSWORD, Person, make_setup, running_arena
from turinglab.arena.core.store_bridge import ArenaStore
from turinglab.store.database import Store

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]
AUTH = {"Authorization": aiohttp.encode_basic_auth("admin", ADMIN_PASSWORD)}
STUDY = """\
name: pilot
experiment:
  game: two-party
  interrogators: [eliza]  # placeholders: people take these seats
  ai_witnesses: [{agent: eliza, persona: none, label: ELIZA-1966}]
  time_limit_s: 120
  seed: 11
"""


async def _token(http: aiohttp.ClientSession, base: str) -> str:
    async with http.get(base + "/admin", headers=AUTH) as r:
        assert r.status == 200
        found = re.search(r'name="csrf" value="([^"]+)"', await r.text())
    assert found is not None
    return found.group(1)


async def _post(
    http: aiohttp.ClientSession, url: str, data: dict[str, str], **headers: str
) -> tuple[int, str]:
    async with http.post(url, data=data, headers=headers, allow_redirects=False) as r:
        return r.status, await r.text()


async def test_opening_a_study_needs_the_password_and_the_token(tmp_path: Path) -> None:
    setup = make_setup()
    kept = ArenaStore(Store(str(tmp_path / "a.db")), setup)
    (tmp_path / "pilot.yaml").write_text(STUDY)
    with running_arena(setup, store=kept, studies_dir=tmp_path) as (base, app):
        url = base + "/admin/study"
        async with aiohttp.ClientSession() as http:
            token = await _token(http, base)
            good = {"path": "pilot.yaml", "csrf": token}
            assert (await _post(http, url, good))[0] == 401  # no password
            wrong = {"Authorization": aiohttp.encode_basic_auth("admin", "guess")}
            assert (await _post(http, url, good, **wrong))[0] == 401
            status, page = await _post(http, url, {"path": "pilot.yaml"}, **AUTH)
            assert status == 403 and "token" in page  # no CSRF token
            status, page = await _post(http, url, {**good, "csrf": "x" * 32}, **AUTH)
            assert status == 403
            evil = {"Origin": "http://evil.example", **AUTH}
            status, page = await _post(http, url, good, **evil)
            assert status == 403 and "another site" in page
            assert app.state.arena.setup is setup  # nothing was opened
            status, _ = await _post(http, url, good, Origin=base, **AUTH)
            assert status == 303
            assert [m.name for m in app.state.arena.setup.modes] == ["two-party", "practice"]


async def test_bad_configs_are_refused_with_escaped_errors(tmp_path: Path) -> None:
    setup = make_setup()
    kept = ArenaStore(Store(str(tmp_path / "a.db")), setup)
    (tmp_path / "notes.txt").write_text(STUDY)
    (tmp_path.parent / "outside.yaml").write_text(STUDY)
    with running_arena(setup, store=kept, studies_dir=tmp_path) as (base, app):
        url = base + "/admin/study"
        async with aiohttp.ClientSession() as http:
            token = await _token(http, base)

            async def refused(**fields: str) -> str:
                status, page = await _post(http, url, {"csrf": token, **fields}, **AUTH)
                assert status == 400, page
                return page

            page = await refused(yaml='name: x\nexperiment:\n  game: "<script>alert(1)</script>"\n')
            assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "unknown game" in page
            assert "<script>alert" not in page
            page = await refused(yaml=STUDY.replace("time_limit_s: 120", "time_limit_s: -5"))
            assert "experiment.time_limit_s" in page
            page = await refused(yaml="name: [unclosed\n")
            assert "pasted YAML" in page
            assert "not inside the allowed folder" in await refused(path="../outside.yaml")
            assert ".yaml or .yml" in await refused(path="notes.txt")
            assert "no such file" in await refused(path="missing.yaml")
            assert "not both" in await refused(path="pilot.yaml", yaml=STUDY)
            assert "rounds" in await refused(yaml=STUDY, rounds="0")
            page = await refused(
                yaml=STUDY.replace("two-party", "gtt").replace("interrogators", "universe")
            )
            assert "config error" in page
        assert app.state.arena.setup is setup


async def test_new_games_follow_the_new_study_and_live_games_finish_under_the_old(
    tmp_path: Path,
) -> None:
    setup = make_setup()
    kept = ArenaStore(Store(str(tmp_path / "a.db")), setup)
    with running_arena(setup, store=kept) as (base, app):
        arena = app.state.arena
        playing = Person(base)
        await playing.connect()
        await playing.send(type="join", mode="practice", consent=True)
        await playing.until("game")  # a practice game under the start-up study
        waiting = Person(base)
        await waiting.connect()
        await waiting.send(type="join", mode="three-party", consent=True)
        await waiting.until("status", state="waiting")

        async with aiohttp.ClientSession() as http:
            token = await _token(http, base)
            data = {"yaml": STUDY, "rounds": "2", "csrf": token}
            assert (await _post(http, base + "/admin/study", data, **AUTH))[0] == 303
            async with http.get(base + "/admin", headers=AUTH) as r:
                admin = await r.text()
            assert "pasted YAML" in admin and "2 rounds per participant" in admin
        assert arena.setup.settings.rounds == 2 and arena.setup.settings.seed == 11
        assert arena.store.run_id != kept.run_id  # the new study is its own run

        # The person who was waiting is back at the choice of games, now the new study's.
        back = await waiting.until("status", state="idle")
        assert [m["name"] for m in back["modes"]] == ["two-party", "practice"]
        # The practice game started before the switch is played to its end, in the old run.
        await playing.send(type="message", channel="A", text="still here?")
        await playing.until("message", sender="them")
        await playing.send(type="end")  # a verdict only after the end
        await playing.send(type="verdict", choice="ai", confidence=90, reason="instant")
        reveal = await playing.until("reveal")
        assert reveal["sides"][0]["kind"] == "ai"
        await kept.flush()
        assert [g["mode"] for g in kept.records()] == ["practice"]
        assert list(arena.finished) == []  # the old study's game is not counted in the new

        async with aiohttp.ClientSession() as http:
            token = await _token(http, base)
            url = base + "/admin/study/close"
            assert (await _post(http, url, {"csrf": token}, **AUTH))[0] == 303
        assert arena.setup is setup and arena.store.run_id == kept.run_id
        for p in (playing, waiting):
            await p.close()


@pytest.mark.browser
@pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="Debian chromium is not installed")
def test_the_admin_opens_a_study_with_the_form_in_a_browser(tmp_path: Path) -> None:
    """Chromium posts the form with `Origin: null` under our no-referrer policy: the token,
    not the Origin, is what lets it through."""
    sync_api = pytest.importorskip("playwright.sync_api")
    setup = make_setup()
    kept = ArenaStore(Store(str(tmp_path / "a.db")), setup)
    (tmp_path / "pilot.yaml").write_text(STUDY)
    with running_arena(setup, store=kept, studies_dir=tmp_path) as (base, app):
        with sync_api.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            login = {"username": "admin", "password": ADMIN_PASSWORD}
            page = browser.new_context(http_credentials=login).new_page()
            page.goto(base + "/admin")
            page.locator('textarea[name="yaml"]').fill(
                'name: x\nexperiment:\n  game: "<img src=x onerror=window.__pwned=1>"\n'
            )
            page.get_by_role("button", name="Open this study").click()
            error = page.locator(".warn")
            assert "unknown game '<img src=x" in error.inner_text()
            assert page.evaluate("window.__pwned") is None
            page.goto(base + "/admin")
            page.locator('input[name="path"]').fill("pilot.yaml")
            page.get_by_role("button", name="Open this study").click()
            page.get_by_text("Open: pilot.yaml").wait_for()
            browser.close()
        assert [m.name for m in app.state.arena.setup.modes] == ["two-party", "practice"]
