"""POST /consent starts a session (a participant in memory, a row in the store): a loop from
one address is cut off after `consents_per_address` within the window, and one process holds
at most `max_sessions`, while people at other addresses, and a person who already has a
session, go on as before (issue 32: a bot could fill the study with empty participants).
Addresses are the client's as uvicorn gives them: X-Forwarded-For counts only from a trusted
proxy (--proxy-headers)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from arena_fixtures import ADMIN_PASSWORD, Person, make_setup, serving_in_thread
from turinglab.arena import create_app
from turinglab.arena.core.store_bridge import ArenaStore
from turinglab.arena.http.new_records import AddressWindow
from turinglab.store.database import Store

pytestmark = pytest.mark.server

BOT, PERSON, OTHER = "203.0.113.9", "198.51.100.7", "192.0.2.44"


@contextlib.contextmanager
def arena_behind_proxy(store: ArenaStore | None = None, **settings: Any) -> Iterator[tuple]:
    """The arena as `turinglab serve --proxy-headers` runs it (the test is the proxy)."""
    app = create_app(make_setup(**settings), admin_password=ADMIN_PASSWORD, store=store)
    with serving_in_thread(app, proxy_headers=True, forwarded_allow_ips="127.0.0.1") as base:
        yield base, app


async def consent(
    http: aiohttp.ClientSession, base: str, address: str | None
) -> tuple[int, str | None]:
    headers = {} if address is None else {"X-Forwarded-For": address}
    async with http.post(base + "/consent", json={"consent": True}, headers=headers) as r:
        return r.status, r.headers.get("Retry-After")


def cookieless() -> aiohttp.ClientSession:
    return aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar())  # a bot keeps none


async def test_a_consent_loop_is_cut_off_and_real_people_are_not(tmp_path: Path) -> None:
    setup = make_setup()
    kept = ArenaStore(Store(str(tmp_path / "a.db")), setup)
    with arena_behind_proxy(kept, consents_per_address=5) as (base, app):
        arena = app.state.arena
        async with cookieless() as bot:
            answers = [await consent(bot, base, BOT) for _ in range(40)]
        assert [s for s, _ in answers[:5]] == [200] * 5
        assert {s for s, _ in answers[5:]} == {429}
        assert all(wait is not None and 1 <= int(wait) <= 601 for _, wait in answers[5:])
        assert len(arena.sessions) == 5

        # Someone else meanwhile consents and plays, as always.
        person = Person(base)
        try:
            status, _ = await consent(person.http, base, PERSON)
            assert status == 200
            await person.connect()
            await person.send(type="join", mode="practice", consent=True)
            await person.until("game")
            await person.send(type="message", channel="A", text="I am fine, thank you")
            assert (await person.until("message", sender="them"))["text"].isupper()  # ELIZA
            # A person who has a session is never counted: a reload, recruitment ids later.
            async with person.http.post(
                base + "/consent",
                json={"consent": True, "ids": {"PROLIFIC_PID": "abc123"}},
                headers={"X-Forwarded-For": BOT},
            ) as r:
                assert r.status == 200
        finally:
            await person.close()
        assert len(arena.sessions) == 6

        for _ in range(600):  # the store's rows: the 5 the bot got, and the person's
            if kept.people(100).total == 6:
                break
            await asyncio.sleep(0.05)
        assert kept.people(100).total == 6
    kept.close()


async def test_forwarded_addresses_count_only_from_a_trusted_proxy() -> None:
    """Served without --proxy-headers, a bot cannot dodge the limit by naming addresses."""
    app = create_app(make_setup(consents_per_address=3), admin_password=ADMIN_PASSWORD)
    with serving_in_thread(app, proxy_headers=False) as base:  # as serve runs by default
        async with cookieless() as bot:
            statuses = [(await consent(bot, base, f"10.0.0.{i}"))[0] for i in range(10)]
    assert statuses == [200] * 3 + [429] * 7
    assert len(app.state.arena.sessions) == 3


async def test_one_process_holds_at_most_max_sessions() -> None:
    with arena_behind_proxy(max_sessions=4) as (base, app):
        async with cookieless() as bots:
            statuses = [(await consent(bots, base, f"10.1.0.{i}"))[0] for i in range(9)]
        assert statuses == [200] * 4 + [503] * 5
        assert len(app.state.arena.sessions) == 4
        async with cookieless() as late:
            assert (await consent(late, base, OTHER))[0] == 503


def test_the_window_slides_and_the_address_table_is_bounded() -> None:
    throttle = AddressWindow()
    for t in (0.0, 1.0, 2.0):
        assert throttle.retry_after("a", t, 3, 60.0) is None
        throttle.started("a", t, 3)
    assert throttle.retry_after("a", 30.0, 3, 60.0) == pytest.approx(30.0)
    assert throttle.retry_after("b", 30.0, 3, 60.0) is None
    assert throttle.retry_after("a", 60.5, 3, 60.0) is None  # the first start is a minute old
    for i in range(10_050):
        throttle.started(f"x{i}", 0.0, 3)
    assert len(throttle._started) == 10_000
