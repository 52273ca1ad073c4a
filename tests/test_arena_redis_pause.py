"""Redis paused: a person whose game is played on another process hears nothing from it (their
frames go through Redis), and the heartbeat that would notice hangs rather than fails. The
process holding their socket tells them within the 15 s rule that the connection to their
game is delayed, and again once it is back; the game then goes on.
"""

from __future__ import annotations

import signal
import time

import pytest

from arena_fixtures import Person
from fault_fixtures import own_redis_process, seat_pair, server_processes
from test_arena_faults import RESUMES, SERVER

pytestmark = [pytest.mark.database, pytest.mark.slow]


async def _notice(person: Person, code: str, timeout: float) -> float:
    """Seconds until `person` is shown an error frame `code` (other frames passed over)."""
    start = time.monotonic()
    frame = await person.until("error", timeout=timeout, code=code)
    assert frame["message"]
    return time.monotonic() - start


async def test_people_relayed_from_elsewhere_are_told_when_redis_pauses(postgres_url: str) -> None:
    people: list[Person] = []
    with own_redis_process() as (redis_url, redis_proc):
        fmt = {"db": postgres_url, "redis": redis_url, "setup": RESUMES, "max_outage_s": 60}
        async with server_processes(SERVER, 2, **fmt) as servers:
            (one, _), (two, _) = servers
            try:
                waiter, taker = Person(two), Person(one)  # process 1 owns; the waiter is relayed
                people = [waiter, taker]
                for p in people:
                    assert (await p.connect())["type"] == "status"
                await seat_pair(waiter, taker, "three-party", [one, two], "r")
                redis_proc.send_signal(signal.SIGSTOP)
                try:
                    told_s = await _notice(waiter, "relay-delayed", 30)
                finally:
                    redis_proc.send_signal(signal.SIGCONT)
                assert told_s < 15.0, told_s
                await _notice(waiter, "relay-resumed", 30)
                # The owner's own person was never relayed: no such notice for them.
                assert not any(f.get("code") == "relay-delayed" for f in taker.frames)
            finally:
                for p in people:
                    await p.close()
