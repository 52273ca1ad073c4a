"""The arena in a real browser (Debian's chromium through Playwright) against a real server.

Two browser contexts — an interrogator at desktop width and a human witness at phone width —
play a full three-party game with a scripted AI witness: consent, matchmaking, messages both
ways, a `<script>` message shown as text, a reload mid-game that restores every message, the
verdict with confidence and reason, the reveal on both screens. What the server recorded must
equal what was typed. No page may request anything from another host; admin pages answer 401
without the password.

Set TURINGLAB_SCREENSHOTS=<dir> to save screenshots of every screen at both widths.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

from arena_fixtures import (
    ADMIN_PASSWORD,
    SECRET_AGENT,
    engine_setup,
    make_setup,
    running_arena,
)

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]
DESKTOP = {"width": 1280, "height": 860}
PHONE = {"width": 390, "height": 844}
XSS = "<script>window.__pwned = 1</script><img src=x onerror=window.__pwned=2>"

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="Debian chromium is not installed"),
]


class Shots:
    def __init__(self) -> None:
        where = os.environ.get("TURINGLAB_SCREENSHOTS")
        self.dir = Path(where) if where else None
        if self.dir:
            self.dir.mkdir(parents=True, exist_ok=True)

    def take(self, page: Any, name: str) -> None:
        if self.dir is not None:
            page.screenshot(path=str(self.dir / f"{name}.png"), full_page=True)


def _enter(page: Any, base: str, requests: list[str], errors: list[str]) -> None:
    page.on("request", lambda r: requests.append(r.url))
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(base + "/")
    page.locator("#v-lobby").wait_for()
    page.locator("#consent").check()


def _say(page: Any, channel: str, text: str) -> None:
    box = page.locator(f'[data-input="{channel}"]')
    box.wait_for()
    page.wait_for_function(
        'c => !document.querySelector(`[data-input="${c}"]`).readOnly', arg=channel
    )
    box.click()
    page.keyboard.type(text, delay=2)
    box.press("Enter")


def _said(bubble: Any) -> str:
    """A message's text, without the speaker label screen readers get (.sr-only)."""
    return str(bubble.evaluate("li => li.childNodes[1].textContent"))


def _bubble(page: Any, channel: str, sender: str, text: str) -> Any:
    loc = page.locator(f'[data-log="{channel}"] .msg.{sender}', has_text=text)
    loc.wait_for(timeout=30_000)  # milliseconds, unless the machine is very busy
    return loc


def test_three_party_game_in_two_browsers() -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    shots = Shots()
    records: list[dict[str, Any]] = []
    with running_arena(on_finished=records.append) as (base, app), sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        requests: list[str] = []
        errors: list[str] = []
        one = browser.new_context(viewport=DESKTOP).new_page()
        two = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True).new_page()
        _enter(one, base, requests, errors)
        shots.take(one, "lobby-1280")
        _enter(two, base, requests, errors)
        shots.take(two, "lobby-390")

        one.get_by_role("button", name="Three-party").click()
        one.locator("#v-waiting").wait_for()
        shots.take(one, "waiting-1280")
        two.get_by_role("button", name="Three-party").click()
        for page in (one, two):
            page.locator("#v-game").wait_for()
        judge, witness = (
            (one, two) if "interrogator" in one.locator("#role").inner_text() else (two, one)
        )
        assert "witness" in witness.locator("#role").inner_text()
        for page in (judge, witness):  # the study's rounds (SPEC §2: 8 per participant)
            assert page.locator("#round").inner_text() == "Round 1 of 8"

        _say(judge, "A", "hello A, what did you have for breakfast?")
        _say(judge, "B", "hello B, what did you have for breakfast?")
        heard = _said(_bubble(witness, "A", "them", "hello"))
        human = heard[6]  # the alias the person sits behind on the interrogator's screen
        ai = "B" if human == "A" else "A"
        # The AI witness answers after a typing indicator; the person answers with markup.
        _bubble(judge, ai, "them", "hi there")
        _say(witness, "A", XSS)
        shown = _bubble(judge, human, "them", "window.__pwned")
        assert XSS in shown.inner_text()
        assert judge.evaluate("window.__pwned") is None
        assert judge.locator("[data-log] script, [data-log] img").count() == 0
        shots.take(judge, "three-party-interrogator-1280")
        shots.take(witness, "three-party-witness-390")
        judge.set_viewport_size(PHONE)
        shots.take(judge, "three-party-interrogator-390")
        judge.set_viewport_size(DESKTOP)

        # Pasting is blocked, and the counter counts.
        box = judge.locator(f'[data-input="{human}"]')
        box.click()
        judge.keyboard.type("abc")
        assert (
            judge.locator(f'[data-log="{human}"]')
            .locator("xpath=..")
            .locator(".counter")
            .inner_text()
            == "3/300"
        )
        box.fill("")

        # A reload mid-game restores every message from the server.
        judge.reload()
        judge.locator("#v-game").wait_for()
        _bubble(judge, human, "them", "window.__pwned")
        _bubble(judge, ai, "them", "hi there")
        assert judge.locator(".msg").count() == 4

        _say(judge, human, "nice, and where do you live?")
        _bubble(witness, "A", "them", "where do you live")
        _say(witness, "A", "near the station, it's loud")
        _bubble(judge, human, "them", "near the station")

        judge.locator("#end").click()
        judge.locator("#end").click()
        judge.locator("#verdict").wait_for()
        witness.locator("#await-verdict").wait_for()
        judge.locator(f'input[name="choice"][value="{human}"]').check()
        judge.locator("#confidence").fill("77")
        judge.locator("#reason").fill("typos & <b>slang</b>")
        shots.take(judge, "verdict-1280")
        judge.set_viewport_size(PHONE)
        shots.take(judge, "verdict-390")
        judge.set_viewport_size(DESKTOP)
        judge.get_by_role("button", name="Submit verdict").click()

        for page in (judge, witness):
            page.locator("#reveal").wait_for()
            assert "Zorblax (scripted)" in page.locator("#sides").inner_text()
        assert "You were right" in judge.locator("#outcome").inner_text()
        assert "(you)" in witness.locator("#sides").inner_text()
        shots.take(judge, "reveal-1280")
        shots.take(witness, "reveal-390")

        deadline = time.time() + 30  # the record lands in milliseconds; a busy machine is slow
        while not records and time.time() < deadline:
            time.sleep(0.05)
        (rec,) = records
        seat = {v["kind"]: s for s, v in rec["seats"].items() if s != "interrogator"}
        typed = [(m["sender"], m["text"]) for m in rec["messages"]]
        assert typed[0] == ("interrogator", "hello A, what did you have for breakfast?")
        assert ("interrogator", "hello B, what did you have for breakfast?") in typed
        assert ("interrogator", "nice, and where do you live?") in typed
        assert (seat["human"], XSS) in typed
        assert (seat["human"], "near the station, it's loud") in typed
        assert (seat["ai"], "hi there") in typed and len(typed) == 6
        (j,) = rec["judgements"]
        assert (j["verdict"], j["confidence"], j["reason"]) == (
            seat["human"],
            77.0,
            "typos & <b>slang</b>",
        )
        assert rec["seats"][seat["ai"]]["agent"] == SECRET_AGENT

        # The exit survey is stored against the anonymous id.
        witness.get_by_role("button", name="Finish & exit survey").click()
        witness.locator("#v-survey").wait_for()
        witness.locator('input[name="birth_year"]').fill("1990")
        witness.locator('select[name="chatbot_use"]').select_option("Weekly")
        witness.locator('textarea[name="strategy"]').fill("ask about the weather")
        shots.take(witness, "survey-390")
        witness.get_by_role("button", name="Send").click()
        witness.locator("#v-thanks").wait_for()
        people = app.state.arena.export()["participants"]
        surveyed = [p for p in people if p["survey"]]
        assert surveyed[0]["survey"]["strategy"] == "ask about the weather"
        assert surveyed[0]["survey"]["birth_year"] == 1990  # typed: a number question

        # Admin pages are closed without the password, even with a participant's cookie
        # (chromium's navigation would stop at the login prompt, so ask through its context).
        for path in ("/admin", "/admin/export.json", "/admin/live.json"):
            assert judge.request.get(base + path).status == 401
        # With the password, the admin page lists the finished game per AI witness.
        with_pw = browser.new_context(
            http_credentials={"username": "admin", "password": ADMIN_PASSWORD}
        ).new_page()
        with_pw.goto(base + "/admin")
        assert SECRET_AGENT in with_pw.locator("body").inner_text()
        shots.take(with_pw, "admin-1280")

        assert errors == []
        assert requests and all(u.startswith(base) for u in requests), requests
        browser.close()


def test_solo_practice_against_eliza() -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    shots = Shots()
    with running_arena() as (base, app), sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        requests: list[str] = []
        errors: list[str] = []
        page = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True).new_page()
        _enter(page, base, requests, errors)
        page.get_by_role("button", name="Practice vs ELIZA").click()
        page.locator("#v-game").wait_for()
        assert "practice" in page.locator("#mode").inner_text().lower()
        assert page.locator("#round").is_hidden()  # practice is not a study round
        _say(page, "A", "I am unhappy with my job")
        reply = _said(_bubble(page, "A", "them", "").first)
        assert reply.isupper()  # ELIZA's 1966 capitals
        shots.take(page, "practice-eliza-390")
        page.locator("#end").click()
        page.locator("#end").click()
        page.locator('input[name="choice"][value="ai"]').check()
        page.get_by_role("button", name="Submit verdict").click()
        page.locator("#reveal").wait_for()
        assert "You were right" in page.locator("#outcome").inner_text()
        export = app.state.arena.export()
        assert export["games"] == [] and len(export["practice_games"]) == 1
        assert export["practice_games"][0]["judgements"][0]["verdict"] == "ai"
        assert errors == [] and all(u.startswith(base) for u in requests)
        browser.close()


def test_after_the_last_round_only_the_exit_survey_is_offered() -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    shots = Shots()
    setup = make_setup(ai_after_s=0, rounds=1)
    with running_arena(setup) as (base, _app), sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        requests: list[str] = []
        errors: list[str] = []
        page = browser.new_context(viewport=DESKTOP).new_page()
        _enter(page, base, requests, errors)
        page.get_by_role("button", name="Two-party").click()
        page.locator("#v-game").wait_for()
        assert page.locator("#round").inner_text() == "Round 1 of 1"
        _say(page, "A", "are you a person?")
        _bubble(page, "A", "them", "")
        page.locator("#end").click()
        page.locator("#end").click()
        page.locator('input[name="choice"][value="human"]').check()
        page.get_by_role("button", name="Submit verdict").click()
        page.locator("#reveal").wait_for()
        assert page.locator("#again").is_hidden()  # no "play another game" after the last
        shots.take(page, "last-round-reveal-1280")
        page.reload()  # the reveal (and what it offers) comes back from the server
        page.locator("#reveal").wait_for()
        assert page.locator("#again").is_hidden()
        page.get_by_role("button", name="Finish & exit survey").click()
        page.locator("#v-survey").wait_for()
        assert "all 1 round —" in page.locator("#alldone").inner_text()
        shots.take(page, "rounds-done-survey-1280")
        page.set_viewport_size(PHONE)
        shots.take(page, "rounds-done-survey-390")
        assert errors == [] and all(u.startswith(base) for u in requests)
        browser.close()


def test_engine_three_party_game_with_eliza_in_two_browsers() -> None:
    """The same in the browser with the engine's own three-party game and ELIZA."""
    sync_api = pytest.importorskip("playwright.sync_api")
    records: list[dict[str, Any]] = []
    with (
        running_arena(engine_setup(), on_finished=records.append) as (base, _app),
        sync_api.sync_playwright() as p,
    ):
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        requests: list[str] = []
        errors: list[str] = []
        pages = [browser.new_context(viewport=v).new_page() for v in (DESKTOP, PHONE)]
        for page in pages:
            _enter(page, base, requests, errors)
            page.get_by_role("button", name="Three-party").click()
        for page in pages:
            page.locator("#v-game").wait_for()
        judge, witness = (
            pages if "interrogator" in pages[0].locator("#role").inner_text() else pages[::-1]
        )
        _say(judge, "A", "Hello A, I am worried about my exams")
        _say(judge, "B", "Hello B, I am worried about my exams")
        _bubble(witness, "A", "them", "worried")
        _say(witness, "A", "oh no, which ones? i had mine last year")
        judge.locator("[data-log] .msg.them", has_text="which ones").wait_for(timeout=30_000)
        human = (
            "A" if judge.locator('[data-log="A"] .msg.them', has_text="which ones").count() else "B"
        )
        ai = "B" if human == "A" else "A"
        _bubble(judge, human, "them", "which ones")
        eliza = _said(_bubble(judge, ai, "them", "").first)
        assert eliza.isupper()
        judge.locator("#end").click()
        judge.locator("#end").click()
        judge.locator(f'input[name="choice"][value="{human}"]').check()
        judge.locator("#confidence").fill("64")
        judge.locator("#reason").fill("ELIZA answered in capitals")
        judge.get_by_role("button", name="Submit verdict").click()
        for page in pages:
            page.locator("#reveal").wait_for()
            assert "An AI: ELIZA" in page.locator("#sides").inner_text()
        deadline = time.time() + 30  # the record lands in milliseconds; a busy machine is slow
        while not records and time.time() < deadline:
            time.sleep(0.05)
        (rec,) = records
        assert rec["status"] == "finished" and rec["correct"] is True
        (j,) = rec["judgements"]
        assert (j["confidence"], j["reason"]) == (64.0, "ELIZA answered in capitals")
        typed = {m["text"] for m in rec["messages"]}
        assert "oh no, which ones? i had mine last year" in typed
        assert errors == [] and all(u.startswith(base) for u in requests)
        browser.close()
