"""Faults as people's real pages live them (Chromium), beside scripted people in a game of their
own (fault_fixtures.Talker, the page's protocol): a SIGSTOPped owner, a paused Redis, and
PostgreSQL refusing connections.

In each, two pages play one three-party game (the engine's, which resumes elsewhere) through
the fault; the processes reach each other through Redis and the store through PostgreSQL, and
the pages reach the processes through a proxy of their own, as nginx. Afterwards, for every
page and every scripted person:

* their game finished, or ended with the reason shown (audited in SQL);
* the page shows exactly the stored messages its seat was shown: none unseen, none twice;
* while they were owed something (an input unanswered, or their socket down) they were never
  left past 15 s without a frame or a notice (page_harness.longest_unexplained_wait);
* the processes logged no traceback: every fault here is one they expect.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path

import pytest

from fault_fixtures import (
    audit,
    now_ms,
    own_redis,
    own_redis_process,
    server_processes,
    shown_is_stored,
    tracebacks,
)
from page_harness import (
    WAIT_MS,
    answer,
    ask,
    decide,
    exchange,
    game_of,
    go_on,
    longest_unexplained_wait,
    primed,
    say_anywhere,
    shows_what_is_stored,
    wire,
)
from page_scene import (
    Scene,
    chromium,
    page_now,
    readable,
    scene,
    two_process_scene,
    until_page,
)
from test_arena_browser import CHROMIUM
from test_arena_faults import RESUMES, SERVER, _until
from turinglab.testing.tcp_proxy import TcpProxy

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.database,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="Debian chromium is not installed"),
]
UNTOLD_S = 15.0  # the longest anyone may be owed something without a frame or a notice
PAUSE_S = 22.0  # how long Redis is paused: past one notice and the 15 s after it


async def finish_and_check(s: Scene, postgres_url: str, logs: list[Path]) -> dict[str, float]:
    """Everyone decides; then what each page and person was shown is checked (the module
    docstring). Returns the longest untold wait of each."""
    left = await s.judge.evaluate("() => game.deadline - (Date.now() / 1000 + clockSkew)")
    print(f"talk time left at the end: {left:.1f} s")
    await decide(s.judge, s.witness)
    for t in s.talkers:
        t.decide.set()
    await asyncio.wait_for(asyncio.gather(*s.tasks), WAIT_MS / 1000)
    stored = audit(postgres_url)
    game = stored[await game_of(s.judge)]
    assert game.status == "finished", (game.status, game.flags)
    waits, wires = {}, {}
    for name, page in (("judge page", s.judge), ("witness page", s.witness)):
        await shows_what_is_stored(page, game)
        wires[name] = await wire(page)
        waits[name] = longest_unexplained_wait(wires[name], await page.evaluate("Date.now()"))
    for t in s.talkers:
        assert t.reveal is not None and not t.reveal.get("flagged"), t.reveal
        shown_is_stored(t, stored[t.game], all_of_it=True)
        wires[t.name] = t.wire
        waits[t.name] = longest_unexplained_wait(t.wire, now_ms())
    print("longest untold waits (s):", {k: round(v, 1) for k, v in waits.items()})
    late = {k: readable(wires[k]) for k, w in waits.items() if w > UNTOLD_S}
    for k, lines in late.items():
        print(k, "\n  ".join(lines))
    assert not late, waits
    assert s.errors == []
    assert tracebacks(logs) == []
    return waits


async def test_a_paused_owner_s_pages_go_on_at_the_new_owner(
    postgres_url: str, tmp_path: Path
) -> None:
    """Process 1 owns both games and is SIGSTOPped. A page on it gives the silent process up
    by its heartbeat and reconnects — landing first on the paused process again (it accepts
    the connection and never answers, as behind a round-robin balancer), then on process 2.
    That is past the takeover and the 5 s a killed owner's pages get; the takeover must still
    count the person present, and the game go on with them in it (not ended "the interrogator
    left")."""
    logs = [tmp_path / "one.log", tmp_path / "two.log"]
    with own_redis() as redis_url:
        fmt = {"db": postgres_url, "redis": redis_url, "setup": RESUMES, "max_outage_s": 60}
        async with (
            server_processes(SERVER, 2, logs=logs, **fmt) as servers,
            chromium() as browser,
        ):
            (one, proc_one), (two, _) = servers
            async with two_process_scene(browser, one, two) as s:
                via_one = s.via_one
                assert via_one is not None
                on_one = s.taker  # its socket is on process 1
                for t in s.talkers:  # the paused one's reconnect tries process 1 first
                    if t.person.base == one:
                        t.bases = [two, one]
                await exchange(s.judge, s.witness, 1)
                await primed(s.judge, s.witness)

                paused_at, since = time.monotonic(), await page_now(on_one)
                proc_one.send_signal(signal.SIGSTOP)
                via_one.rotate()  # its next connection goes to process 1, then 2
                # Typed into the pause: held; the page says the server is silent, gives
                # it up, and sends it again at the new owner.
                await say_anywhere(on_one, "said into the pause")
                await until_page(on_one, since, type="game")  # from the new owner
                back_s = time.monotonic() - paused_at
                await go_on(s.judge, s.witness, on_one)
                proc_one.send_signal(signal.SIGCONT)  # it wakes up: nothing changes
                waits = await finish_and_check(s, postgres_url, logs)
                print(f"the paused process's page was back after {back_s:.1f} s")
                assert via_one.connections >= 2  # it did land on the paused one first
                # It waited out both give-ups (the silent socket, the hung handshake): past the
                # takeover (a 10 s TTL) and the 5 s a killed owner's pages are given.
                assert back_s > 15.0, back_s
                assert waits


async def test_redis_paused_pages_relayed_from_elsewhere_are_told_and_go_on(
    postgres_url: str, tmp_path: Path
) -> None:
    """Redis SIGSTOPped 22 s mid-game: a page whose game is played on the other process hears
    nothing from it; its process tells it the connection is delayed within the 15 s rule, and
    again while it lasts (one toast, then 15 s of nothing, was the rule broken), and that it
    is back; the game goes on and finishes, at the process that played it (no takeover:
    every heartbeat expired in the pause, none of a dead process)."""
    logs = [tmp_path / "one.log", tmp_path / "two.log"]
    with own_redis_process() as (redis_url, redis_proc):
        fmt = {"db": postgres_url, "redis": redis_url, "setup": RESUMES, "max_outage_s": 60}
        async with (
            server_processes(SERVER, 2, logs=logs, **fmt) as servers,
            chromium() as browser,
        ):
            (one, _), (two, _) = servers
            async with two_process_scene(browser, one, two) as s:
                relayed = s.waiter  # on process 2; process 1 plays its game
                await exchange(s.judge, s.witness, 1)
                await primed(s.judge, s.witness)
                paused_at, since = time.monotonic(), await page_now(relayed)
                redis_proc.send_signal(signal.SIGSTOP)
                try:
                    # Held: its process cannot forward it to the game's owner.
                    await say_anywhere(relayed, "said into the pause")
                    await until_page(relayed, since, 30, code="relay-delayed")
                    await asyncio.sleep(max(0.0, PAUSE_S - (time.monotonic() - paused_at)))
                finally:
                    redis_proc.send_signal(signal.SIGCONT)
                await until_page(relayed, since, 60, code="relay-resumed")
                await go_on(s.judge, s.witness, relayed)
                await finish_and_check(s, postgres_url, logs)
                # A pause is no death: nobody's game was taken over (test_arena_redis_pause).
                assert _events(logs, "takeover") == []


def _events(logs: list[Path], event: str) -> list[str]:
    """The processes' log lines of one fault event (metrics.fault)."""
    key = f'"event": "{event}"'
    return [line for path in logs for line in path.read_text().splitlines() if key in line]


async def test_postgres_refusing_pages_are_told_and_the_game_goes_on(
    postgres_url: str, tmp_path: Path
) -> None:
    """PostgreSQL refused (and its connections cut) for 5 s mid-game: the pages are told
    saving is delayed, then resumed (taking the snapshot that follows, whose clock stood
    still); nothing said meanwhile is lost or shown twice; the game finishes."""
    logs = [tmp_path / "one.log"]
    proxy = TcpProxy("127.0.0.1", 5432)
    await proxy.start()
    db = postgres_url.replace("127.0.0.1:5432", f"127.0.0.1:{proxy.port}")
    try:
        fmt = {"db": db, "redis": "", "setup": RESUMES, "max_outage_s": 60}
        async with (
            server_processes(SERVER, 1, logs=logs, **fmt) as servers,
            chromium() as browser,
        ):
            ((base, _),) = servers
            async with scene(browser, base, base, (base, base), [base]) as s:
                await exchange(s.judge, s.witness, 1)
                await proxy.refuse()  # no new connection, and the open ones reset
                proxy.cut()
                since = [await page_now(p) for p in (s.judge, s.witness)]
                await ask(s.judge, 2)  # held until saved
                for page, t in zip((s.judge, s.witness), since, strict=True):
                    await until_page(page, t, 30, code="saving-delayed")
                await _until(lambda: all("saving-delayed" in t.notices for t in s.talkers), 30)
                await asyncio.sleep(4.0)  # the rest of the refusal (the fault itself)
                await proxy.accept()
                for page, t in zip((s.judge, s.witness), since, strict=True):
                    await until_page(page, t, 60, code="saving-resumed")
                await answer(s.judge, s.witness, 2)
                await exchange(s.judge, s.witness, 3)
                await finish_and_check(s, postgres_url, logs)
    finally:
        await proxy.stop()
