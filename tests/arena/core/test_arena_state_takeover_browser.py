"""A Strong Turing Test page (Chromium) whose process is SIGKILLed mid-game shows its game's end,
not the lobby: two arena processes share PostgreSQL and Redis, the page reaches them through a
failover proxy (as behind nginx), and its game's owner dies after the first turn. The page's
socket closes; it reconnects to the other process naming its place in its stream (`game`,
`stream`, `seq`: kept by its own protocol.js from the numbered state frames), and is shown its
game there (the new owner's rebuilt game, a new stream: "moved"), with its one turn once, and
plays on — instead of the lobby, which is what a page that named no game was sent."""

from __future__ import annotations

import os
import signal
from urllib.parse import parse_qs, urlparse

import pytest
from sqlalchemy import select

from page_harness import WAIT_MS, failover_proxy, open_page
from page_scene import chromium
from test_arena_browser import CHROMIUM
from test_arena_stored_end_kinds import EVERY_KIND_SERVER
from test_arena_takeover_inputs_wait_for_rebuild import two_processes
from turinglab.store.schema import games

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.database,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="Debian chromium is not installed"),
]


async def test_an_stt_page_whose_process_dies_shows_its_game_not_the_lobby(
    postgres_url: str,
) -> None:
    async with (
        two_processes(EVERY_KIND_SERVER, postgres_url) as (arena, store, _people),
        chromium() as browser,
        failover_proxy(arena.bases) as proxy,
    ):
        errors: list[str] = []
        page = await open_page(browser, proxy.url, errors)
        sockets: list[str] = []
        page.on("websocket", lambda ws: sockets.append(ws.url))
        await page.get_by_role("button", name="STT practice: you investigate").click()
        await page.locator("#v-strong").wait_for(timeout=WAIT_MS)
        await page.locator("#s-text").fill("What did you eat today?")
        await page.locator("#s-text").press("Enter")
        await page.locator(".s-pick").first.wait_for(timeout=WAIT_MS)
        game = await page.evaluate("() => page.at.game")

        with store.engine.connect() as conn:
            named = games.c.setup["arena_game"].as_string() == game
            (worker,) = conn.execute(select(games.c.worker).where(named)).one()
        owner = arena.ports.index(int(str(worker).split("/", 1)[0]))
        arena.procs[owner].send_signal(signal.SIGKILL)
        arena.procs[owner].wait(10)

        # The new owner's state: a new stream, taken; the game goes on from where it was.
        await page.wait_for_function(
            "g => page.at && page.at.game === g && document.querySelector('#conn').textContent"
            " === 'connected' && window.__wire.some((w) => w.e === 'toast' &&"
            " w.text.includes('moved'))",
            arg=game,
            timeout=WAIT_MS,
        )
        assert await page.locator("#v-lobby").is_hidden()
        assert await page.locator(".s-turn").count() == 1
        question = page.locator(".s-turn .s-question .s-text")
        assert await question.first.inner_text() == "What did you eat today?"
        await page.locator(".s-pick").first.click()
        await page.locator("#s-compose").wait_for(state="visible", timeout=WAIT_MS)
        await page.locator("#s-text").fill("Describe rain.")
        await page.locator("#s-text").press("Enter")
        await page.locator(".s-turn").nth(1).locator(".s-pick").first.wait_for(timeout=WAIT_MS)
        turns = [await t.get_attribute("data-turn") for t in await page.locator(".s-turn").all()]
        assert turns == ["1", "2"]  # each turn once, none lost
        assert await page.locator(".s-turn").first.locator(".s-outcome").count() == 1
        # Every socket after the first named the page's game and a place in its stream.
        assert len(sockets) >= 2
        for url in sockets[1:]:
            place = {k: v[0] for k, v in parse_qs(urlparse(url).query).items()}
            assert place["game"] == game and place["stream"] and place["seq"].isdigit(), url
        assert errors == []
