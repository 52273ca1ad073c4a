"""The scene the Chromium fault tests share: a browser, two real pages seated in one game, and
two scripted people (fault_fixtures.Talker) in a game of their own beside them.

`two_process_scene` is the usual cast of two arena processes: the pages reach them through a
failover proxy each, as behind nginx (the waiter's page tries process 2 first, the taker's
process 1), and process 1 owns both games. `scene` is the cast alone, on any two addresses
(one process: the same twice). When a test fails inside a scene, each page's socket log is
printed, with every frame's stream position, so a stall shows where it stopped.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from arena_fixtures import Person
from fault_fixtures import Talker, seat_pair
from page_harness import WAIT_MS, FailoverProxy, failover_proxy, open_page, seat_pages, wire
from test_arena_browser import ARGS, CHROMIUM


@dataclass
class Scene:
    waiter: Any  # the page that queued first
    taker: Any  # the page whose process took the match (and owns the game)
    judge: Any  # whichever of them is the interrogator
    witness: Any  # and the person witness
    talkers: list[Talker]
    errors: list[str] = field(default_factory=list)  # the pages' uncaught errors
    tasks: list[asyncio.Task[None]] = field(default_factory=list)  # the talkers at work
    # With two processes (two_process_scene): the proxy each page reaches them through.
    via_one: FailoverProxy | None = None  # the taker's: process 1 first
    via_two: FailoverProxy | None = None  # the waiter's: process 2 first


@contextlib.asynccontextmanager
async def chromium() -> AsyncIterator[Any]:
    """A Chromium browser (Playwright), closed afterwards."""
    api = pytest.importorskip("playwright.async_api")
    async with api.async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            yield browser
        finally:
            await browser.close()


@contextlib.asynccontextmanager
async def scene(
    browser: Any, waiter_url: str, taker_url: str, people: tuple[str, str], bases: list[str]
) -> AsyncIterator[Scene]:
    """Two pages seated together (the taker's process owns their game), and two scripted
    people (on `people`: the waiter's process, the taker's; reconnecting along `bases`) in a
    game of their own, talking until told to decide."""
    errors: list[str] = []
    waiter = await open_page(browser, waiter_url, errors)
    taker = await open_page(browser, taker_url, errors)
    judge, witness = await seat_pages(waiter, taker)
    persons = [Person(people[0]), Person(people[1])]
    tasks: list[asyncio.Task[None]] = []
    try:
        for p in persons:
            assert (await p.connect())["type"] == "status"
        talkers = await seat_pair(*persons, "three-party", bases, "s")
        for t in talkers:
            t.pace_s = 0.1
        tasks += [asyncio.create_task(t.run()) for t in talkers]
        yield Scene(waiter, taker, judge, witness, talkers, errors, tasks)
    except BaseException:
        for name, page in (("waiter", waiter), ("taker", taker)):
            with contextlib.suppress(Exception):
                print(f"{name} page wire:\n  " + "\n  ".join(readable(await wire(page), True)))
        raise
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for p in persons:
            await p.close()


@contextlib.asynccontextmanager
async def two_process_scene(browser: Any, one: str, two: str) -> AsyncIterator[Scene]:
    """`scene` on processes `one` and `two` (their base URLs): each page behind a failover
    proxy of its own; process 1 owns both games, the waiters are relayed from process 2."""
    async with (
        failover_proxy([two, one]) as via_two,
        failover_proxy([one, two]) as via_one,
        scene(browser, via_two.url, via_one.url, (two, one), [one, two]) as s,
    ):
        s.via_one, s.via_two = via_one, via_two
        yield s


def readable(events: list[dict[str, Any]], whole: bool = False) -> list[str]:
    """A wire log as lines (seconds from its start), pongs and pings left out; `whole`: with
    each frame's stream position (and where the page stood after it), id or text too."""
    t0 = events[0]["t"] if events else 0
    return [
        f"{(e['t'] - t0) / 1000:.1f} {e['e']} {e.get('type') or ''} {e.get('code') or ''}"
        f" held={e.get('held', '')}"
        + (
            f" seq={e.get('seq')} {e.get('stream')} at={e.get('at')} ref={e.get('ref')}"
            f" {e.get('id') or e.get('text') or ''}"
            if whole
            else ""
        )
        for e in events
        if e.get("type") not in ("pong", "ping")
    ]


async def until_page(
    page: Any, since_ms: float, timeout_s: float = WAIT_MS / 1000, **want: Any
) -> None:
    """Until `page` is sent a frame matching `want` (type=…, code=…) after `since_ms` (its
    clock)."""
    for _ in range(int(timeout_s / 0.2)):
        for e in await wire(page):
            if (
                e["e"] == "in"
                and e["t"] >= since_ms
                and all(e.get(k) == v for k, v in want.items())
            ):
                return
        await asyncio.sleep(0.2)
    raise AssertionError(f"the page was never sent {want}")


async def page_now(page: Any) -> float:
    """The page's clock (ms), as its wire log has it."""
    return float(await page.evaluate("() => Date.now()"))
