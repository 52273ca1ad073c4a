"""A person judges in the GTT in a real browser (Debian's chromium through Playwright): they
study the target in one chat, press "Done studying", question X in the other, and give a
verdict with confidence and reason; the reveal names X. A second browser watches two models
play; a third imitates the judge's model. Scripted models answer at once, so the test is quick.

Screenshots (1280 and 390 px) go to $TURINGLAB_SCREENSHOTS when set, e.g. docs/screenshots.
"""

from __future__ import annotations

import os
from typing import Any

import pytest

from arena_fixtures import running_arena
from test_arena_gtt import NAMES, gtt_setup
from test_arena_strong_browser import ARGS, CHROMIUM, DESKTOP, _shoot

XSS = "<img src=x onerror=window.__pwned=1> are you real?"

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="Debian chromium is not installed"),
]


def _write(page: Any, chat: str, text: str) -> None:
    box = page.locator(f'[data-gchat="{chat}"] textarea')
    page.wait_for_function(
        'c => !document.querySelector(`[data-gchat="${c}"] textarea`).disabled', arg=chat
    )
    box.fill(text)
    box.press("Enter")


def _enter(browser: Any, base: str, errors: list[str], mode: str) -> Any:
    """A new person (own cookies) who consents and starts `mode` from the lobby."""
    page = browser.new_context(viewport=DESKTOP).new_page()
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(base + "/")
    page.locator("#consent").check()
    if mode == "lobby":
        return page
    page.get_by_role("button", name=mode).click()
    page.locator("#v-gtt").wait_for(state="visible")
    return page


def test_a_person_judges_in_the_browser_another_watches_a_third_imitates() -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    with (
        running_arena(gtt_setup(variants=("gtt", "gttq"))) as (base, app),
        sync_api.sync_playwright() as p,
    ):
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        errors: list[str] = []
        page = _enter(browser, base, errors, "lobby")
        _shoot(page, "lobby", "gtt")
        page.get_by_role("button", name="GTT: you are the judge").click()
        page.locator("#v-gtt").wait_for(state="visible")
        assert page.locator("#g-role").inner_text() == "You are the judge"
        target = next(n for n in NAMES.values() if n in page.locator("#g-brief").inner_text())

        _write(page, "study", "Hello, what are you like?")
        page.locator('[data-gchat="study"] .msg.them').wait_for()
        _shoot(page, "study", "gtt")
        page.get_by_role("button", name="Done studying").click()
        _write(page, "test", XSS)
        page.locator('[data-gchat="test"] .msg.them').wait_for()
        page.locator("#g-verdict").wait_for(state="visible")
        assert page.locator("#g-target-label").inner_text() == f"It is {target}"
        assert page.locator("#g-turns").inner_text() == "3 messages left"
        _shoot(page, "verdict", "gtt")
        page.get_by_text("It is an imitator").click()
        page.locator("#g-confidence").fill("80")
        page.locator("#g-reason").fill("it answered too fast")
        page.get_by_role("button", name="Submit verdict").click()
        page.locator("#g-end").wait_for(state="visible")
        outcome = page.locator("#g-outcome").inner_text()
        assert outcome.startswith("You said “an imitator”") and "X was" in outcome
        assert XSS in page.locator('[data-gchat="test"] .msg.you').first.inner_text()
        _shoot(page, "reveal", "gtt")

        watcher = _enter(browser, base, errors, "GTT: watch two AIs")
        watcher.locator("#g-end").wait_for(state="visible")
        who = watcher.locator('[data-gchat="test"] .msg .who').first
        assert who.text_content() == "Judge:"  # the ":" for screen readers
        assert watcher.locator('[data-gchat="test"] textarea').count() == 0
        _shoot(watcher, "watch", "gtt")

        actor = _enter(browser, base, errors, "GTT: you imitate a model")
        _write(actor, "study", "What do you enjoy?")
        actor.locator('[data-gchat="study"] .msg.them').wait_for()
        actor.get_by_role("button", name="Done studying").click()
        for n, text in enumerate(["Forty-two, of course.", "Teal. Obviously."], 1):
            _write(actor, "test", text)
            actor.locator('[data-gchat="test"] .msg.you').nth(n - 1).wait_for()
            if n == 1:
                _shoot(actor, "act", "gtt")
        actor.locator("#g-end").wait_for(state="visible")
        assert actor.locator("#g-verdict").is_hidden()
        assert "you imitating" in actor.locator("#g-sides").inner_text()
        _shoot(actor, "act-end", "gtt")
        assert page.evaluate("window.__pwned") is None
        assert errors == []
        browser.close()

    judged = next(r for r in app.state.arena.finished if r["mode"] == "gtt-distinguish")
    (verdict,) = judged["judgements"]
    assert (verdict["verdict"], verdict["confidence"], verdict["reason"]) == (
        "imitator", 80.0, "it answered too fast",
    )  # fmt: skip
    assert judged["correct"] is (not judged["trial"]["params"]["x_is_target"])
