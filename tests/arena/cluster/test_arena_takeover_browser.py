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

from fault_fixtures import audit, shown_is_stored
from page_harness import WAIT_MS, decide, exchange, game_of, shows_what_is_stored
from page_scene import chromium, two_process_scene
from test_arena_browser import CHROMIUM
from test_arena_multiprocess import arena_processes
from test_arena_takeover import SERVER

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.database,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="Debian chromium is not installed"),
]


async def test_a_killed_process_s_game_goes_on_in_real_pages(postgres_url: str) -> None:
    async with (
        arena_processes(SERVER, postgres_url) as arena,
        chromium() as browser,
    ):
        one, two = arena.bases
        # The pages' game: the first waits on process 2, the second's process 1 seats them;
        # scripted people beside them, in a game process 1 owns too.
        async with two_process_scene(browser, one, two) as s:
            judge, witness = s.judge, s.witness
            await exchange(judge, witness, 1)

            arena.procs[0].send_signal(signal.SIGKILL)
            arena.procs[0].wait(10)

            # Process 2 takes both games over; the pages and the talkers go on there.
            await exchange(judge, witness, 2)
            await decide(judge, witness)
            for t in s.talkers:
                t.decide.set()
            await asyncio.wait_for(asyncio.gather(*s.tasks), WAIT_MS / 1000)

            stored = audit(postgres_url)
            game = stored[await game_of(judge)]
            assert game.status == "finished", (game.status, game.flags)
            for page in (judge, witness):
                # Every stored message its addressee's page shows, once; nothing else.
                await shows_what_is_stored(page, game)
            for t in s.talkers:
                assert t.reveal is not None and not t.reveal.get("flagged"), t.reveal
                shown_is_stored(t, stored[t.game], all_of_it=True)
            assert s.errors == []
