"""The browser's view of chat text (Debian's chromium through Playwright): what the page lets a
person type, counted as it counts (UTF-16 code units: an emoji is two), is what the server
takes; and bidi-override characters typed or pasted never come back on screen."""

from __future__ import annotations

import os
from typing import Any

import pytest

from arena_fixtures import engine_setup, running_arena
from test_arena_itt_chat_browser import chat_setup
from test_arena_strong_browser import ARGS, CHROMIUM, DESKTOP

pytestmark = [
    pytest.mark.browser,
    pytest.mark.server,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="Debian chromium is not installed"),
]

EMOJI = "\U0001f600"


def _own_lines(page: Any, log: str) -> list[str]:
    """The person's own messages as shown, without the screen-reader label."""
    return [
        str(li.evaluate("li => li.childNodes[1].textContent"))
        for li in page.locator(f"{log} .msg.you").all()
    ]


def test_the_page_and_the_server_count_emoji_alike() -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    setup = chat_setup()
    setup.settings = setup.settings.model_copy(update={"ai_after_s": 0})  # meet the AI at once
    with running_arena(setup) as (base, _app), sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_context(viewport=DESKTOP).new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(base + "/")
        page.locator("#consent").check()
        page.get_by_role("button", name="Chat about a topic").click()
        page.wait_for_function("() => !document.getElementById('c-text').readOnly", timeout=60_000)
        box = page.locator("#c-text")
        box.focus()
        # Typed past the limit: the page's maxlength keeps 300 code units, 150 emoji.
        page.keyboard.insert_text(EMOJI * 151 + "!")
        assert box.evaluate("b => [b.value.length, b.maxLength]") == [300, 300]
        assert page.locator("#c-counter").inner_text() == "300/300"
        assert page.locator("#c-counter.over").count() == 0
        box.press("Enter")
        page.locator("#c-log .msg.you").wait_for(timeout=30_000)
        assert _own_lines(page, "#c-log") == [EMOJI * 150]  # all the page allowed, stored
        assert page.locator("#toast").is_hidden()
        assert errors == []
        browser.close()


def test_bidi_overrides_typed_in_the_page_never_come_back() -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    with running_arena(engine_setup()) as (base, app), sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_context(viewport=DESKTOP).new_page()
        page.goto(base + "/")
        page.locator("#consent").check()
        page.get_by_role("button", name="Practice").click()
        box = page.locator('[data-input="A"]')
        box.wait_for()
        box.focus()
        page.keyboard.insert_text("my file is gpj.\u202eexe\u202c and \u2067this\u2069 ok")
        page.keyboard.press("Enter")
        page.locator('[data-log="A"] .msg.you').wait_for(timeout=30_000)
        assert _own_lines(page, '[data-log="A"]') == ["my file is gpj.exe and this ok"]
        (game,) = app.state.arena.games.values()
        said = [m["text"] for m in game.record()["messages"]]
        assert "my file is gpj.exe and this ok" in said
        browser.close()
