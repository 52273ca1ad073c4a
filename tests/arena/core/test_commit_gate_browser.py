"""Commit before show on the Strong Turing Test page, in Debian's chromium (Playwright): with
PostgreSQL stalled behind a TCP proxy, the investigator's question stays off the page (theirs
too) and the page says saving is delayed; once the store answers, the question and both
replies appear. Screenshots (1280 and 390 px) go to $TURINGLAB_SCREENSHOTS when set."""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import Callable, Coroutine, Iterator
from typing import Any

import pytest

from arena_fixtures import running_arena
from fault_fixtures import audit
from test_arena_strong import strong_setup
from test_arena_strong_browser import ARGS, CHROMIUM, DESKTOP, _shoot
from turinglab.arena.core.store_bridge import ArenaStore
from turinglab.store.database import Store
from turinglab.testing.tcp_proxy import TcpProxy

pytestmark = [
    pytest.mark.browser,
    pytest.mark.database,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="Debian chromium is not installed"),
]

HELD = "What did you have for breakfast?"


class ProxyThread:
    """A TcpProxy on an event loop of its own (Playwright's sync API holds this thread)."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.proxy = TcpProxy("127.0.0.1", 5432)
        self.run(self.proxy.start())

    def run(self, coro: Coroutine[Any, Any, Any]) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(60)

    def do(self, call: Callable[[], None]) -> None:
        async def on_loop() -> None:
            call()

        self.run(on_loop())

    def close(self) -> None:
        self.do(self.proxy.flow)
        self.run(self.proxy.stop())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


@pytest.fixture
def proxied(postgres_url: str) -> Iterator[tuple[ProxyThread, str]]:
    proxy = ProxyThread()
    try:
        yield proxy, postgres_url.replace("127.0.0.1:5432", f"127.0.0.1:{proxy.proxy.port}")
    finally:
        proxy.close()


def _until(test: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    end = time.monotonic() + timeout
    while not test():
        assert time.monotonic() < end, f"timed out waiting for {what}"
        time.sleep(0.05)


def test_the_stt_page_shows_a_question_only_once_it_is_stored(
    proxied: tuple[ProxyThread, str], postgres_url: str
) -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    proxy, db = proxied
    setup = strong_setup()
    store = ArenaStore(Store(db), setup, max_outage_s=60)
    try:
        with running_arena(setup, store=store) as (base, app), sync_api.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            page = browser.new_context(viewport=DESKTOP).new_page()
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(base + "/")
            page.locator("#consent").check()
            page.get_by_role("button", name="STT practice: you investigate").click()
            page.locator("#s-compose").wait_for(state="visible")
            games = app.state.arena.games
            _until(lambda: len(games) == 1, "the game")
            (game,) = games
            _until(lambda: game in audit(postgres_url), "the game's row")

            proxy.do(proxy.proxy.stall)
            page.locator("#s-text").fill(HELD)
            page.locator("#s-text").press("Enter")
            page.locator("#toast", has_text="Saving is delayed").wait_for(state="visible")
            assert page.locator(".s-turn").count() == 0  # not even the sender sees it yet
            assert HELD not in page.content()
            assert audit(postgres_url)[game].texts == []
            _shoot(page, "saving-delayed")

            proxy.do(proxy.proxy.flow)
            page.locator('[data-turn="1"] .s-question', has_text=HELD).wait_for()
            page.locator('[data-turn="1"] .s-reply').nth(1).wait_for()
            assert HELD in audit(postgres_url)[game].texts
            assert errors == []
            browser.close()
    finally:
        proxy.do(proxy.proxy.flow)
        store.close()
