"""A paused owner's people, as their pages live it: nobody reloads for them. A page whose socket
is open on a SIGSTOPped process notices only when its heartbeat's limit passes (15 s without a
frame, protocol.js); the takeover must count them present that long. Each game goes on at the
new owner with the person who was on the paused process back in it (shown the new owner's
snapshot, which the page takes and says the game moved) and finishes — not abandoned as "the
interrogator left" ~4 s after the takeover, as it was with a 5 s grace.
"""

from __future__ import annotations

import asyncio
import signal

import pytest

from arena_fixtures import Person
from fault_fixtures import audit, own_redis, seat_pair, server_processes, shown_is_stored
from test_arena_faults import RESUMES, SERVER, _each_progresses, _finish, _until

pytestmark = [pytest.mark.database, pytest.mark.slow]


async def test_a_paused_owner_s_people_find_their_game_by_their_page_s_heartbeat(
    postgres_url: str,
) -> None:
    people: list[Person] = []
    with own_redis() as redis_url:
        fmt = {"db": postgres_url, "redis": redis_url, "setup": RESUMES, "max_outage_s": 60}
        async with server_processes(SERVER, 2, **fmt) as servers:
            (one, proc_one), (two, _) = servers
            try:
                waiter, taker = Person(two), Person(one)  # process 1 takes (owns) the game
                people = [waiter, taker]
                for p in people:
                    assert (await p.connect())["type"] == "status"
                talkers = await seat_pair(waiter, taker, "three-party", [one, two], "p")
                for t in talkers:
                    t.pace_s = 0.1
                paused = next(t for t in talkers if t.person.base == one)
                paused.bases = [one, two]
                tasks = [asyncio.create_task(t.run()) for t in talkers]
                await _each_progresses(talkers)

                proc_one.send_signal(signal.SIGSTOP)
                # Its page gives the silent process up and is back, at the new owner, in its game.
                await _until(lambda: "moved" in paused.notices, 90, "the paused one's page back")
                await _each_progresses(talkers, 60)
                await _finish(talkers, tasks)
            finally:
                for p in people:
                    await p.close()

    game = audit(postgres_url)[talkers[0].game]
    assert game.status == "finished", game.flags
    for t in talkers:
        assert t.reveal is not None and not t.reveal.get("flagged"), t.reveal
        shown_is_stored(t, game, all_of_it=True)
