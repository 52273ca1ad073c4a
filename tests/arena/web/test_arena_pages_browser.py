"""The participant's game page in Chromium, as a keyboard or screen-reader user and on a
390 px phone: focus stays in the message box after sending, every message names its speaker
for the aria-live log, the time left stays in sight, and "is typing…" is gone once the talk
is over. Screenshots (at 1280 and 390 px) go to $TURINGLAB_SCREENSHOTS when it is set."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from arena_fixtures import engine_setup, make_setup, running_arena
from turinglab.arena.modes.engine_modes import interrogation_mode
from turinglab.games.two_party import TwoPartyExperiment

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]
VIEWPORTS = {"1280": {"width": 1280, "height": 860}, "390": {"width": 390, "height": 844}}

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="Debian chromium is not installed"),
]


def _shot(page: Any, name: str) -> None:
    where = os.environ.get("TURINGLAB_SCREENSHOTS")
    if where:
        Path(where).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(where) / f"{name}.png"))


def _slow_typing_setup() -> Any:
    """Practice against ELIZA whose typing (0.5 s a character after a 1 s read) outlasts the
    moment the test ends the talk, so a typing label is showing then."""
    setup = engine_setup()
    slow = {"base_s": 1.0, "per_char_mean": 0.5, "per_char_sd": 0.0, "think_scale": 0.01}
    two = TwoPartyExperiment.model_validate(
        {"game": "two-party", "interrogators": ["x"], "seed": 5, "typing_delay": True,
         "ai_witnesses": [{"agent": "eliza", "persona": "none"}], "delay": slow}
    )  # fmt: skip
    setup.modes = [interrogation_mode("practice", "Practice", two, solo=True)]
    return setup


def _focused_box(page: Any) -> bool:
    return bool(page.evaluate("document.activeElement?.dataset?.input === 'A'"))


@pytest.mark.parametrize("width", ["1280", "390"])
def test_game_page_for_keyboard_screen_reader_and_phone(width: str) -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    with running_arena(_slow_typing_setup()) as (base, _app), sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        phone = width == "390"
        context = browser.new_context(viewport=VIEWPORTS[width], is_mobile=phone, has_touch=phone)
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(base + "/")
        page.locator("#consent").check()
        page.get_by_role("button", name="Practice").click()
        box = page.locator('[data-input="A"]')
        box.wait_for()
        assert page.locator('[data-log="A"]').get_attribute("aria-live") == "polite"

        # Keyboard only: type, Enter, and the cursor is still in the box while waiting.
        box.focus()
        page.keyboard.type("I feel sad about my mother", delay=1)
        page.keyboard.press("Enter")
        page.locator('[data-log="A"] .msg.you').wait_for()
        assert _focused_box(page)
        typing = page.locator('[data-typing="A"]')
        page.wait_for_function(
            "() => document.querySelector('[data-typing=\"A\"]').textContent !== ''"
        )
        assert typing.inner_text() == "The witness is typing…"  # one witness: no letter
        # Each message names its speaker for screen readers (hidden from sight).
        mine = page.locator('[data-log="A"] .msg.you .sr-only')
        assert mine.text_content() == "You: "
        assert mine.bounding_box()["width"] <= 1
        _shot(page, f"arena-typing-{width}")

        # The time left is in sight at the top, even scrolled to the bottom of a page taller
        # than the window.
        page.set_viewport_size({"width": VIEWPORTS[width]["width"], "height": 480})
        page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
        assert page.evaluate("window.scrollY") > 0 or not phone  # a phone's page scrolls
        clock = page.locator("#countdown").bounding_box()
        assert clock is not None and clock["y"] >= 0 and clock["y"] + clock["height"] <= 480
        _shot(page, f"arena-game-scrolled-{width}")
        page.set_viewport_size(VIEWPORTS[width])

        # Ending the talk while the witness "types": the label goes at once.
        page.locator("#end").click()
        page.locator("#end").click()
        page.locator("#verdict").wait_for()
        assert typing.text_content() == ""
        _shot(page, f"arena-verdict-no-typing-{width}")
        page.locator('input[name="choice"][value="ai"]').check()
        page.locator("#verdict button[type=submit]").click()
        page.locator("#reveal").wait_for()
        assert typing.text_content() == "" and errors == []
        browser.close()


def test_focus_returns_to_the_box_once_the_reply_is_in() -> None:
    """Enter sends; the reply comes; the next message is typed without touching the mouse."""
    sync_api = pytest.importorskip("playwright.sync_api")
    with running_arena(engine_setup()) as (base, _app), sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_context(viewport=VIEWPORTS["1280"]).new_page()
        page.goto(base + "/")
        page.locator("#consent").check()
        page.get_by_role("button", name="Practice").click()
        box = page.locator('[data-input="A"]')
        box.wait_for()
        box.focus()
        page.keyboard.type("My mother takes care of me", delay=1)
        page.keyboard.press("Enter")
        reply = page.locator('[data-log="A"] .msg.them')
        reply.wait_for()
        assert reply.locator(".sr-only").text_content() == "Witness: "
        page.wait_for_function("() => !document.querySelector('[data-input=\"A\"]').readOnly")
        assert _focused_box(page)
        page.keyboard.type("and my father", delay=1)  # straight on, no click
        page.keyboard.press("Enter")
        page.locator('[data-log="A"] .msg.you', has_text="and my father").wait_for()
        browser.close()


def test_the_interrogator_sees_why_the_game_ended_when_the_witness_left() -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    setup = make_setup(abandon_after_s=0.5)
    with running_arena(setup) as (base, _app), sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        pages = []
        for width in ("1280", "390"):
            page = browser.new_context(viewport=VIEWPORTS[width]).new_page()
            page.goto(base + "/")
            page.locator("#consent").check()
            page.get_by_role("button", name="Three-party").click()
            pages.append(page)
        for page in pages:
            page.locator("#v-game").wait_for()
        judge, witness = (
            pages if "interrogator" in pages[0].locator("#role").inner_text() else pages[::-1]
        )
        judge.locator('[data-input="A"]').focus()
        judge.keyboard.type("hello, anyone there?", delay=1)
        judge.keyboard.press("Enter")
        witness.locator('[data-log="A"] .msg.them').wait_for()
        witness.context.close()  # the witness closes their tab
        flagged = judge.locator("#flagged")
        flagged.wait_for(timeout=10_000)
        assert "The other person left the game" in flagged.inner_text()
        assert judge.locator('[data-input="A"]').get_attribute("readonly") is not None
        width = "1280" if judge is pages[0] else "390"
        judge.evaluate(
            "() => new Promise(r => setTimeout(r, 800))"
        )  # the smooth scroll, for the shot
        _shot(judge, f"arena-partner-left-{width}")
        browser.close()
