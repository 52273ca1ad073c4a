"""The Strong Turing Test page re-sends inputs as the chat pages do (inputs.js), in Chromium
against a real server: the socket is cut right after the respondent's answer went out; the
page reconnects, is sent its whole state, sends the answer again with the same id, and the
server applies it once (the next turn is asked, the answer is shown once, no error)."""

from __future__ import annotations

import os
import re
from typing import Any

import pytest

from arena_fixtures import running_arena
from test_arena_browser import ARGS, CHROMIUM, PHONE
from test_arena_resume_browser import Wire, _is_message
from test_arena_strong import strong_setup
from test_arena_strong_browser import _write

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="Debian chromium is not installed"),
]


def test_the_stt_page_resends_an_answer_after_a_cut_and_it_is_applied_once() -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    with running_arena(strong_setup()) as (base, app), sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        errors: list[str] = []
        page = browser.new_context(viewport=PHONE).new_page()
        page.on("pageerror", lambda e: errors.append(str(e)))
        wire = Wire()
        page.route_web_socket(re.compile(r"/ws(\?.*)?$"), wire.route)
        page.goto(base + "/")
        page.locator("#consent").check()
        page.get_by_role("button", name="STT practice: you answer").click()
        page.locator("#v-strong").wait_for(state="visible")

        wire.cut_after = _is_message("porridge with honey")
        _write(page, "porridge with honey")
        second: Any = page.locator('[data-turn="2"]')

        def sent() -> list[Any]:
            return [f for f in wire.to_server if _is_message("porridge with honey")(f)]

        # Wait for all three: the new view may show turn 2 before the page's re-send (sent
        # right after it renders that view) has passed through the route.
        for _ in range(300):  # polled: Playwright runs the route's callbacks while it waits
            if len(wire.urls) == 2 and second.count() and len(sent()) >= 2:
                break
            page.wait_for_timeout(100)
        assert len(wire.urls) == 2  # cut, and connected again
        again = sent()
        assert len(again) == 2 and again[0]["id"] == again[1]["id"]  # re-sent, same id
        _write(page, "grey and steady")
        page.locator("#s-end-card").wait_for(state="visible")  # the session has ended
        for _ in range(50):
            if app.state.arena.finished:
                break
            page.wait_for_timeout(100)
        (record,) = app.state.arena.finished
        said = [m["text"] for m in record["messages"] if m.get("text") == "porridge with honey"]
        assert said == ["porridge with honey"]  # applied once
        assert not [f for f in wire.to_server if f.get("type") == "message" and "id" not in f]
        assert errors == []
        browser.close()
