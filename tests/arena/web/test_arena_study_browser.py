"""A lab's own study end to end in Chromium: configs/arena_study.yaml (its own consent, pay,
contact, instructions and exit survey) with a Prolific hand-off. A participant arrives with
PROLIFIC_PID in the URL, consents, plays, answers the survey and is sent to the completion URL;
the export holds their Prolific id. One who declines is sent to the screened-out URL and no
session is made. Screenshots (1280 and 390 px) go to $TURINGLAB_SCREENSHOTS when it is set."""

from __future__ import annotations

import base64
import json
import os
import urllib.request
from pathlib import Path
from typing import Any

import pytest
import yaml

from arena_fixtures import ADMIN_PASSWORD, make_setup, running_arena
from turinglab.arena.core.store_bridge import ArenaStore
from turinglab.arena.modes.setups import setup_from_config
from turinglab.config import load_config
from turinglab.store.database import Store

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]
VIEWPORTS = {"1280": {"width": 1280, "height": 900}, "390": {"width": 390, "height": 844}}
CONFIG = Path(__file__).parents[3] / "configs" / "arena_study.yaml"
PROLIFIC = "https://app.prolific.com/"
PID = "5f8e1c2a9b3d4e0012345678"

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="Debian chromium is not installed"),
]


def _shot(page: Any, name: str) -> None:
    where = os.environ.get("TURINGLAB_SCREENSHOTS")
    if where:
        Path(where).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(where) / f"{name}.png"), full_page=True)


def _study(tmp_path: Path, rounds: int = 1) -> Any:
    """The example study as shipped, made quick: ELIZA only (no model to load), one round
    (or as many as a test says), short drawn waits and a one-second hand-off."""
    data = yaml.safe_load(CONFIG.read_text())
    data["experiment"]["ai_witnesses"] = [{"agent": "eliza", "persona": "none"}]
    data["experiment"]["typing_delay"] = False
    data["agents"] = {}
    data["store"] = None
    arena = data["arena"]
    arena["rounds"] = rounds
    arena["design"] = {"human_witness_share": 0.5, "wait_min_s": 0.2, "wait_max_s": 0.5}
    arena["study"]["recruitment"]["redirect_after_s"] = 1
    path = tmp_path / "study.yaml"
    path.write_text(yaml.safe_dump(data))
    return setup_from_config(load_config(path))


def _admin(base: str, path: str) -> str:
    token = base64.b64encode(f"admin:{ADMIN_PASSWORD}".encode()).decode()
    request = urllib.request.Request(base + path, headers={"Authorization": f"Basic {token}"})
    with urllib.request.urlopen(request, timeout=30) as r:
        return str(r.read().decode())


def _landed(page: Any, seen: list[str]) -> None:
    """Prolific is not reached: its completion page is answered here, and noted."""

    def fulfil(route: Any) -> None:
        seen.append(route.request.url)
        route.fulfill(status=200, content_type="text/html", body="<p>Prolific: complete</p>")

    page.route(PROLIFIC + "**", fulfil)


@pytest.mark.parametrize("width", ["1280", "390"])
def test_a_prolific_participant_consents_plays_answers_and_is_sent_back(
    tmp_path: Path, width: str
) -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    setup = _study(tmp_path)
    kept = ArenaStore(Store(str(tmp_path / "arena.db")), setup)
    with running_arena(setup, store=kept) as (base, _app), sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        phone = width == "390"
        context = browser.new_context(viewport=VIEWPORTS[width], is_mobile=phone, has_touch=phone)
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        seen: list[str] = []
        _landed(page, seen)
        page.goto(f"{base}/?PROLIFIC_PID={PID}&STUDY_ID=st-1&SESSION_ID=se-1&junk=<b>x</b>")

        # The study's own consent (Markdown), pay and contact; no session before agreeing.
        page.locator("h1", has_text="Chat study: person or machine?").wait_for()
        page.locator("#consent-box strong", has_text="Who we are.").wait_for()
        assert "£2.50" in page.locator("#consent-box").inner_text()
        assert "ethics@example.org" in page.locator("#consent-box").inner_text()
        assert "18 or older" in page.locator("label.check").inner_text()
        assert context.cookies() == []
        _shot(page, f"study-consent-{width}")

        page.locator("#consent").check()
        page.get_by_role("button", name="Two-party Turing test").click()
        box = page.locator('[data-input="A"]')
        box.wait_for(timeout=60_000)
        (cookie,) = context.cookies()
        assert cookie["httpOnly"] and not cookie["secure"]  # plain HTTP here: not Secure
        assert page.locator("#hint").inner_text().startswith("Chat with the witness")

        for text in ("hello, who are you?", "what did you have for breakfast?"):
            box.focus()
            page.keyboard.type(text, delay=1)
            page.keyboard.press("Enter")
            page.locator('[data-log="A"] .msg.them').nth(0).wait_for()
            page.wait_for_function(
                "n => document.querySelectorAll('[data-log=\"A\"] .msg.them').length >= n",
                arg=1 if text.startswith("hello") else 2,
            )
        _shot(page, f"study-game-{width}")
        if width == "1280":  # the researcher watches the game live from /admin
            admin = browser.new_context(
                viewport=VIEWPORTS[width],
                http_credentials={"username": "admin", "password": ADMIN_PASSWORD},
            ).new_page()
            admin.goto(base + "/admin")
            assert f"PROLIFIC_PID={PID}" in admin.locator("body").inner_text()
            admin.locator("a[href^='/admin/game/']").first.click()
            admin.locator(
                "table.transcript", has_text="what did you have for breakfast?"
            ).wait_for()
            _shot(admin, "study-admin-transcript-1280")
            admin.close()
        page.locator("#end").click()
        page.locator("#end").click()
        page.locator('input[name="choice"][value="ai"]').check()
        page.locator("#reason").fill("it answered questions with questions")
        page.locator("#verdict button[type=submit]").click()
        page.locator("#reveal").wait_for()
        page.locator("#to-survey").click()

        # The study's survey: its own questions; the birth year bounded by the minimum age.
        form = page.locator("#survey")
        form.wait_for()
        names = set(form.locator("[name]").evaluate_all("els => els.map(e => e.name)"))
        assert names == {
            "birth_year", "chatbot_use", "prior_awareness", "confidence_overall", "strategy"
        }  # fmt: skip
        latest = int(form.locator('[name="birth_year"]').get_attribute("max") or 0)
        assert latest <= 2026 - 18
        form.locator('[name="birth_year"]').fill("1990")
        form.locator('[name="chatbot_use"]').select_option("Weekly")
        form.locator('[name="confidence_overall"]').select_option("5")
        form.locator('[name="strategy"]').fill("it never made typos")
        _shot(page, f"study-survey-{width}")
        form.locator("button[type=submit]").click()

        # The completion code, then Prolific's completion URL.
        page.locator("#handoff-code", has_text="C1A2B3C4").wait_for()
        _shot(page, f"study-completion-{width}")
        page.wait_for_url(PROLIFIC + "**", timeout=30_000)
        assert seen == [PROLIFIC + "submissions/complete?cc=C1A2B3C4"]
        assert errors == []
        browser.close()

        export = json.loads(_admin(base, "/admin/export.json"))
        rows = [
            json.loads(line)
            for line in _admin(base, "/admin/export/study.jsonl").split("\n")
            if line
        ]
    (person,) = export["participants"]
    assert person["recruitment"] == {"PROLIFIC_PID": PID, "STUDY_ID": "st-1", "SESSION_ID": "se-1"}
    assert person["survey"]["birth_year"] == 1990 and person["survey"]["chatbot_use"] == "Weekly"
    assert person["survey"]["confidence_overall"] == 5
    (game,) = export["games"]
    assert game["seats"]["interrogator"]["participant"] == person["participant"]
    (row,) = rows  # the study file for `turinglab report`: the interrogator's Prolific id too
    assert row["interrogator_prolific_pid"] == PID and row["survey_birth_year"] == 1990


def test_declining_consent_sends_to_the_screened_out_url_without_a_session(
    tmp_path: Path,
) -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    with running_arena(_study(tmp_path)) as (base, app), sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        context = browser.new_context(viewport=VIEWPORTS["1280"])
        page = context.new_page()
        seen: list[str] = []
        _landed(page, seen)
        page.goto(f"{base}/?PROLIFIC_PID={PID}")
        page.locator("#decline").click()
        page.locator("#handoff-code", has_text="NOCONSENT").wait_for()
        page.wait_for_url(PROLIFIC + "**", timeout=30_000)
        assert seen == [PROLIFIC + "submissions/complete?cc=NOCONSENT"]
        assert context.cookies() == [] and len(app.state.arena.sessions) == 0
        browser.close()


@pytest.mark.parametrize("kind", ["strong", "gtt"])
def test_stt_and_gtt_lobbies_explain_their_own_game(kind: str) -> None:
    from test_arena_gtt import gtt_setup
    from test_arena_strong import strong_setup

    sync_api = pytest.importorskip("playwright.sync_api")
    setup = strong_setup() if kind == "strong" else gtt_setup()
    with running_arena(setup) as (base, _app), sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_context(viewport=VIEWPORTS["390"], is_mobile=True).new_page()
        page.goto(base + "/")
        page.locator(f"#how-{kind}").wait_for(state="visible")
        for other in {"chat", "live-itt", "strong", "gtt"} - {kind}:
            assert page.locator(f"#how-{other}").is_hidden()
        _shot(page, f"study-lobby-{kind}-390")
        browser.close()


def test_nobody_to_play_with_ends_with_the_timed_out_code() -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    timed_out = {"code": "TIMEOUT9", "url": PROLIFIC + "submissions/complete?cc=TIMEOUT9"}
    study = {"recruitment": {"timed_out": timed_out, "redirect_after_s": 0}}
    setup = make_setup(max_wait_s=0.5, ai_after_s=600, study=study)
    with running_arena(setup) as (base, _app), sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_context(viewport=VIEWPORTS["390"]).new_page()
        seen: list[str] = []
        _landed(page, seen)
        page.goto(f"{base}/?pid=sona-77")
        page.locator("#consent").check()
        page.get_by_role("button", name="Three-party").click()  # needs a second person
        page.locator("#nomatch").wait_for()
        page.locator("#survey button[type=submit]").click()
        page.wait_for_url(PROLIFIC + "**", timeout=30_000)
        assert seen == [PROLIFIC + "submissions/complete?cc=TIMEOUT9"]
        browser.close()


def test_leaving_after_one_of_two_rounds_gets_the_early_exit_code_not_the_full_one(
    tmp_path: Path,
) -> None:
    """ "Finish & exit survey" after the first of two study rounds: the early-exit code and
    its URL, never the completion code; the export keeps the rounds done and the end."""
    sync_api = pytest.importorskip("playwright.sync_api")
    setup = _study(tmp_path, rounds=2)
    kept = ArenaStore(Store(str(tmp_path / "arena.db")), setup)
    with running_arena(setup, store=kept) as (base, _app), sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_context(viewport=VIEWPORTS["1280"]).new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        seen: list[str] = []
        _landed(page, seen)
        page.goto(f"{base}/?PROLIFIC_PID={PID}&STUDY_ID=st-1&SESSION_ID=se-1")
        assert "C1A2B3C4" not in page.content() and "PARTIAL5" not in page.content()
        page.locator("#consent").check()
        page.get_by_role("button", name="Two-party Turing test").click()
        page.locator('[data-input="A"]').wait_for(timeout=60_000)  # alone: an AI witness
        page.locator("#end").click()
        page.locator("#end").click()
        page.locator('input[name="choice"][value="ai"]').check()
        page.locator("#verdict button[type=submit]").click()
        page.locator("#reveal").wait_for()
        page.locator("#to-survey").click()  # leaving after round 1 of 2
        form = page.locator("#survey")
        form.wait_for()
        form.locator('[name="birth_year"]').fill("1985")
        form.locator("button[type=submit]").click()
        page.locator("#handoff-code", has_text="PARTIAL5").wait_for()
        assert "1 of 2 rounds" in page.locator("#thanks-text").inner_text()
        page.wait_for_url(PROLIFIC + "**", timeout=30_000)
        assert seen == [PROLIFIC + "submissions/complete?cc=PARTIAL5"]
        assert errors == []
        browser.close()
        export = json.loads(_admin(base, "/admin/export.json"))
    (person,) = export["participants"]
    assert person["study_end"] == {"end": "early_exit", "rounds_done": 1, "rounds_total": 2}
