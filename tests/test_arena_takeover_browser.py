"""A SIGKILLed process's game as its people's real pages live it (Chromium), beside scripted
people (resilient_talker.ResilientTalker: the page's protocol) in another game it owned.

Two arena processes share PostgreSQL and Redis; each page reaches them through a proxy of its
own that, as nginx does, sends a connection to the next process when one refuses it. Both
games are owned by process 1, which is killed mid-game. The page whose socket was on process 2
all along is sent the new owner's snapshot — a new stream whose `seq` is below the page's (the
page used to drop it, and every frame after it, and the game hung); the other reconnects to
process 2. Each game then finishes, and each page shows exactly the messages the store holds
for its seat: none unseen by its addressee, none twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections import Counter
from collections.abc import AsyncIterator
from typing import Any

import pytest

from arena_fixtures import Person
from fault_fixtures import audit, seat_pair, shown_is_stored
from resilient_talker import ResilientTalker
from test_arena_browser import ARGS, CHROMIUM, PHONE
from test_arena_multiprocess import arena_processes
from test_arena_takeover import SERVER

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.database,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="Debian chromium is not installed"),
]
WAIT_MS = 90_000  # conditions, not speed: generous for a loaded machine


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    with contextlib.suppress(ConnectionError, OSError):
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    with contextlib.suppress(ConnectionError, OSError):
        writer.close()


@contextlib.asynccontextmanager
async def failover_proxy(bases: list[str]) -> AsyncIterator[str]:
    """A TCP proxy: each connection goes to the first of `bases` that accepts it."""
    ports = [int(b.rsplit(":", 1)[1]) for b in bases]

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        for port in ports:
            try:
                up_r, up_w = await asyncio.open_connection("127.0.0.1", port)
            except OSError:
                continue
            await asyncio.gather(_pipe(reader, up_w), _pipe(up_r, writer))
            return
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    try:
        yield f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
    finally:
        server.close()


async def _open_page(browser: Any, base: str, errors: list[str]) -> Any:
    page = await (await browser.new_context(viewport=PHONE)).new_page()
    page.on("pageerror", lambda e: errors.append(str(e)))
    await page.goto(base + "/")
    await page.locator("#v-lobby").wait_for(timeout=WAIT_MS)
    await page.locator("#consent").check()
    return page


async def _say(page: Any, channel: str, text: str) -> None:
    await page.wait_for_function(
        'c => { const b = document.querySelector(`[data-input="${c}"]`); return b && !b.readOnly }',
        arg=channel,
        timeout=WAIT_MS,
    )
    box = page.locator(f'[data-input="{channel}"]')
    await box.fill(text)  # typed keys are not needed here; Enter sends as the page does
    await box.press("Enter")


# Every message bubble on a page, without the screen readers' speaker label.
BUBBLES = "[...document.querySelectorAll('.log .msg')].map(li => li.childNodes[1].textContent)"


async def _shown(page: Any) -> list[str]:
    return list(await page.evaluate(f"() => {BUBBLES}"))


async def _until_replies(page: Any, channel: str, n: int) -> None:
    await page.wait_for_function(
        '([c, n]) => document.querySelectorAll(`[data-log="${c}"] .msg.them`).length >= n',
        arg=[channel, n],
        timeout=WAIT_MS,
    )


async def _round(judge: Any, witness: Any, turn: int) -> None:
    """The interrogator asks both witnesses; the person answers; both answers arrive."""
    for ch in ("A", "B"):
        await _say(judge, ch, f"page question {turn} for {ch}")
    mine = str(await witness.evaluate("() => game.channels[0]"))  # the witness's one chat
    await _until_replies(witness, mine, turn)
    await _say(witness, mine, f"page answer {turn}")
    for ch in ("A", "B"):
        await _until_replies(judge, ch, turn)


async def _pid(page: Any) -> str:
    cookies = await page.context.cookies()
    value = next(c["value"] for c in cookies if c["name"] == "turinglab_session")
    return str(value).partition(".")[0]


async def test_a_killed_process_s_game_goes_on_in_real_pages(postgres_url: str) -> None:
    api = pytest.importorskip("playwright.async_api")
    errors: list[str] = []
    async with (
        arena_processes(SERVER, postgres_url) as arena,
        failover_proxy([arena.bases[1], arena.bases[0]]) as via_two,
        failover_proxy([arena.bases[0], arena.bases[1]]) as via_one,
        api.async_playwright() as pw,
    ):
        one, two = arena.bases
        browser = await pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        people: list[Person] = []
        tasks: list[asyncio.Task[None]] = []
        try:
            # The pages' game: the first waits on process 2, the second's process 1 seats them.
            waiter = await _open_page(browser, via_two, errors)
            await waiter.get_by_role(
                "button", name="Three-party"
            ).first.click()  # the engine's (it resumes)
            await waiter.locator("#v-waiting").wait_for(timeout=WAIT_MS)
            taker = await _open_page(browser, via_one, errors)
            await taker.get_by_role(
                "button", name="Three-party"
            ).first.click()  # the engine's (it resumes)
            for page in (waiter, taker):
                await page.locator("#v-game").wait_for(timeout=WAIT_MS)
            roles = {p: await p.locator("#role").text_content() for p in (waiter, taker)}
            judge = next(p for p, r in roles.items() if "interrogator" in str(r))
            witness = taker if judge is waiter else waiter
            # Scripted people beside them, in a game process 1 owns too.
            people = [Person(two), Person(one)]
            for p in people:
                assert (await p.connect())["type"] == "status"
            talkers = []
            for t in await seat_pair(*people, "three-party", [one, two], "s"):
                scripted = ResilientTalker(t.person, t.name, t.bases, pace_s=0.1)  # as the page
                scripted.first(t.person.frames[-1])
                talkers.append(scripted)
            tasks = [asyncio.create_task(t.run()) for t in talkers]
            await _round(judge, witness, 1)

            arena.procs[0].send_signal(signal.SIGKILL)
            arena.procs[0].wait(10)

            # Process 2 takes both games over; the pages and the talkers go on there.
            await _round(judge, witness, 2)
            await judge.locator("#end").click()
            await judge.locator("#end").click()  # two clicks: ending is final
            await judge.locator("#verdict").wait_for(timeout=WAIT_MS)
            await judge.locator('input[name="choice"]').first.check()
            await judge.locator("#verdict button").click()
            for page in (judge, witness):
                await page.locator("#reveal").wait_for(timeout=WAIT_MS)
            for t in talkers:
                t.decide.set()
            await asyncio.wait_for(asyncio.gather(*tasks), WAIT_MS / 1000)

            stored = audit(postgres_url)
            game_id = str(await judge.evaluate("() => game.game"))
            game = stored[game_id]
            assert game.status == "finished", (game.status, game.flags)
            for page in (judge, witness):
                seat = game.seats[await _pid(page)]
                mine = [t for t, vis in zip(game.texts, game.visible, strict=True) if seat in vis]
                shown = await _shown(page)
                # Every stored message its addressee's page shows, once; nothing else.
                assert Counter(shown) == Counter(mine), (seat, shown, mine)
                assert await page.locator("#flagged").is_hidden()
                assert (await page.locator("#outcome").text_content() or "").strip()
            for t in talkers:
                assert t.reveal is not None and not t.reveal.get("flagged"), t.reveal
                shown_is_stored(t, stored[t.game], all_of_it=True)
            assert errors == []
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            for p in people:
                await p.close()
            await browser.close()
