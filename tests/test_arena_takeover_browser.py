"""A SIGKILLed process's game as its people's real pages live it (Chromium), beside scripted
people (fault_fixtures.Talker: the page's protocol) in another game it owned.

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
import os
import signal

import pytest

from arena_fixtures import Person
from fault_fixtures import audit, seat_pair, shown_is_stored
from page_harness import (
    WAIT_MS,
    decide,
    exchange,
    failover_proxy,
    game_of,
    open_page,
    seat_pages,
    shows_what_is_stored,
)
from test_arena_browser import ARGS, CHROMIUM
from test_arena_multiprocess import arena_processes
from test_arena_takeover import SERVER

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.database,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="Debian chromium is not installed"),
]


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
            waiter = await open_page(browser, via_two.url, errors)
            taker = await open_page(browser, via_one.url, errors)
            judge, witness = await seat_pages(waiter, taker)
            # Scripted people beside them, in a game process 1 owns too.
            people = [Person(two), Person(one)]
            for p in people:
                assert (await p.connect())["type"] == "status"
            talkers = await seat_pair(*people, "three-party", [one, two], "s")
            for t in talkers:
                t.pace_s = 0.1
            tasks = [asyncio.create_task(t.run()) for t in talkers]
            await exchange(judge, witness, 1)

            arena.procs[0].send_signal(signal.SIGKILL)
            arena.procs[0].wait(10)

            # Process 2 takes both games over; the pages and the talkers go on there.
            await exchange(judge, witness, 2)
            await decide(judge, witness)
            for t in talkers:
                t.decide.set()
            await asyncio.wait_for(asyncio.gather(*tasks), WAIT_MS / 1000)

            stored = audit(postgres_url)
            game = stored[await game_of(judge)]
            assert game.status == "finished", (game.status, game.flags)
            for page in (judge, witness):
                # Every stored message its addressee's page shows, once; nothing else.
                await shows_what_is_stored(page, game)
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
