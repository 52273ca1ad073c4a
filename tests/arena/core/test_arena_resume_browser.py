"""The page's side of resilient frames, in Chromium against a real server (a practice game
against ELIZA). Playwright sits on the page's websocket (`route_web_socket`) and forwards every
frame both ways, except where the test makes a fault:

* an input lost on its way to the server: the page keeps showing "Sending…" only until it
  sends it again (same id); the server applies it once and ELIZA answers once;
* the socket cut right after a message went out, so the echo and the reply are lost with it:
  the page reconnects naming the last frame it saw (`?game=…&stream=…&seq=…`) and is sent
  exactly what it missed, each message shown once;
* a server that stops answering (frames no longer reach the page): the page's heartbeat
  notices and it connects again, and the game goes on;
* a join lost with its connection (its server died before reading it): the first status on
  the new connection shows the lobby, and the page joins again by itself.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from arena_fixtures import running_arena
from test_arena_browser import ARGS, CHROMIUM, PHONE, _enter, _said, _say

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="Debian chromium is not installed"),
]

Frame = dict[str, Any]


class Wire:
    """The page's websocket, relayed to the server by the test, with faults on demand."""

    def __init__(self) -> None:
        self.urls: list[str] = []
        self.to_server: list[Frame] = []  # every frame the page sent, dropped or not
        self.lose_input: Callable[[Frame], bool] | None = None  # drop the next match
        self.cut_after: Callable[[Frame], bool] | None = None  # close after forwarding it
        self.lost_with_server: Callable[[Frame], bool] | None = None  # drop it, then close
        self.silent: set[int] = set()  # connections whose server frames no longer arrive

    def route(self, ws: Any) -> None:
        n = len(self.urls)
        self.urls.append(ws.url)
        server = ws.connect_to_server()

        def up(message: str | bytes) -> None:
            frame = json.loads(message)
            self.to_server.append(frame)
            if self.lose_input is not None and self.lose_input(frame):
                self.lose_input = None
                return
            if self.lost_with_server is not None and self.lost_with_server(frame):
                self.lost_with_server = None  # as if its server died before reading it
                server.close()
                ws.close()
                return
            server.send(message)
            if self.cut_after is not None and self.cut_after(frame):
                self.cut_after = None
                server.close()
                ws.close()

        def down(message: str | bytes) -> None:
            if n not in self.silent:
                ws.send(message)

        ws.on_message(up)
        server.on_message(down)


def _messages(page: Any) -> list[str]:
    return [_said(li) for li in page.locator('[data-log="A"] .msg').all()]


def _wait_messages(page: Any, n: int) -> list[str]:
    page.wait_for_function(
        "n => document.querySelectorAll('[data-log=\"A\"] .msg').length >= n",
        arg=n,
        timeout=60_000,
    )
    return _messages(page)


def _is_message(text: str) -> Callable[[Frame], bool]:
    return lambda f: f.get("type") == "message" and f.get("text") == text


@contextlib.contextmanager
def _wired_page() -> Iterator[tuple[Any, Wire]]:
    """A phone-sized page of a running arena whose websocket goes through a Wire; at the
    end, no page error and no request outside the arena."""
    sync_api = pytest.importorskip("playwright.sync_api")
    with running_arena() as (base, _app), sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        requests: list[str] = []
        errors: list[str] = []
        page = browser.new_context(viewport=PHONE).new_page()
        wire = Wire()
        page.route_web_socket(re.compile(r"/ws(\?.*)?$"), wire.route)
        _enter(page, base, requests, errors)
        yield page, wire
        assert errors == [] and all(u.startswith(base) for u in requests)
        browser.close()


def test_the_page_resends_lost_inputs_resumes_after_a_cut_and_leaves_a_silent_server() -> None:
    with _wired_page() as (page, wire):
        page.get_by_role("button", name="Practice vs ELIZA").click()
        page.locator("#v-game").wait_for()
        _say(page, "A", "I am unhappy with my job")
        assert len(_wait_messages(page, 2)) == 2  # mine and ELIZA's answer

        # 1. An input lost on its way: "Sending…" until the page sends it again (same id).
        wire.lose_input = _is_message("my boss shouts at me")
        _say(page, "A", "my boss shouts at me")
        box = page.locator('[data-input="A"]')
        assert box.get_attribute("placeholder") == "Sending…"
        said = _wait_messages(page, 4)
        assert said[2] == "my boss shouts at me" and len(said) == 4
        sent = [f for f in wire.to_server if _is_message("my boss shouts at me")(f)]
        assert len(sent) == 2 and sent[0]["id"] == sent[1]["id"]  # lost once, then re-sent
        assert box.get_attribute("placeholder") == "Type a message (Enter sends)"

        # 2. The socket cut just after a message went out: what the server sent meanwhile
        # comes on the next socket, which names where the page was.
        wire.cut_after = _is_message("I dream about holidays")
        _say(page, "A", "I dream about holidays")
        said = _wait_messages(page, 6)
        assert len(wire.urls) == 2 and "stream=" in wire.urls[1] and "seq=" in wire.urls[1]
        assert said[4] == "I dream about holidays" and len(said) == 6
        assert said.count("I dream about holidays") == 1

        # 3. A server that stops answering: after the heartbeat's limit the page connects
        # again (a third socket), and the game goes on.
        wire.silent.add(1)
        for _ in range(600):  # polled: Playwright runs the route's callbacks while it waits
            if len(wire.urls) == 3:
                break
            page.wait_for_timeout(100)
        page.wait_for_function(
            "() => document.querySelector('#conn').textContent === 'connected'", timeout=60_000
        )
        assert len(wire.urls) == 3
        _say(page, "A", "are you listening")
        said = _wait_messages(page, 8)
        assert said[6] == "are you listening" and len(said) == 8


def test_a_join_lost_with_its_server_is_sent_again_on_the_next_connection() -> None:
    with _wired_page() as (page, wire):
        wire.lost_with_server = lambda f: f.get("type") == "join"
        page.get_by_role("button", name="Practice vs ELIZA").click()
        page.locator("#v-game").wait_for(timeout=60_000)
        joins = [f for f in wire.to_server if f.get("type") == "join"]
        assert len(joins) == 2 and len(wire.urls) == 2  # lost with the first socket, re-sent
        _say(page, "A", "hello there")
        assert len(_wait_messages(page, 2)) == 2  # the game goes on: mine and ELIZA's answer
