"""/admin shows the whole study whichever process serves it: two real server processes on
PostgreSQL + Redis, people on both, each process's admin page listing all of them with their
recruitment ids, rounds and games, every live game, and blind matching's fallbacks (one count
for the study in Redis; each process's own in /metrics).

Set TURINGLAB_SCREENSHOTS=<dir> (e.g. docs/screenshots) to save /admin at 1280 and 390 px.
"""

from __future__ import annotations

import asyncio
import html
import os
import re
import time
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from arena_fixtures import ADMIN_PASSWORD, Person
from test_arena_multiprocess import arena_processes

AUTH = {"Authorization": aiohttp.encode_basic_auth("admin", ADMIN_PASSWORD)}
CHROMIUM = "/usr/bin/chromium"

# Blind matching: an interrogator is always drawn for a person witness, so one alone in
# two-party meets an AI at their drawn time (a fallback); three-party seats two people.
SERVER = """
import sys
sys.path.insert(0, {tests!r})
from arena_fixtures import serve_on_fd
from arena_fixtures import ADMIN_PASSWORD, make_setup
from turinglab.arena import create_app
from turinglab.arena.core.matchmaking_wait import MatchDesign
from turinglab.arena.core.store_bridge import ArenaStore
from turinglab.store.database import Store
design = MatchDesign(human_witness_share=1.0, wait_min_s=1.0, wait_max_s=1.5)
setup = make_setup(design=design)
app = create_app(
    setup, admin_password=ADMIN_PASSWORD, store=ArenaStore(Store({db!r}), setup, worker={port!r}),
    redis_url="redis://127.0.0.1:6379/0", secret="shared test secret", namespace={ns!r},
)
serve_on_fd(app, {fd})
"""


async def _get(base: str, path: str) -> str:
    async with aiohttp.ClientSession() as s, s.get(base + path, headers=AUTH) as r:
        assert r.status == 200, (path, r.status)
        return await r.text()


async def _consent(person: Person, ids: dict[str, str]) -> str:
    """A session with recruitment ids, as the page posts them; the person's id."""
    async with person.http.post(person.base + "/consent", json={"consent": True, "ids": ids}) as r:
        r.raise_for_status()
    (cookie,) = person.http.cookie_jar
    return cookie.value.split(".")[0]  # signed tokens are "<participant id>.<HMAC>"


def _people(page: str) -> dict[str, list[str]]:
    """participant id -> the other cells of their row in the Participants table."""
    table = page.split("<h2>Participants</h2>", 1)[1].split("</table>", 1)[0]
    rows = re.findall(r"<tr>(.*?)</tr>", table, re.S)
    cells = [[html.unescape(c) for c in re.findall(r"<td>(.*?)</td>", r, re.S)] for r in rows]
    return {row[0]: row[1:] for row in cells if row}


@pytest.mark.database
@pytest.mark.server
async def test_every_process_admin_lists_the_whole_study(postgres_url: str) -> None:
    async with arena_processes(SERVER, postgres_url) as arena:
        here, there = arena.bases
        a, b, c, d, e = (Person(base) for base in (here, there, here, there, here))
        people = [a, b, c, d, e]
        try:
            ids = {
                "a": await _consent(a, {"PROLIFIC_PID": "pa0", "STUDY_ID": "s1"}),
                "b": await _consent(b, {"PROLIFIC_PID": "pb1", "STUDY_ID": "s1"}),
                "c": await _consent(c, {"pid": "c-practice"}),
                "d": await _consent(d, {}),
                "e": await _consent(e, {}),  # consented, never played
            }
            for p in (a, b, c, d):
                await p.connect()
            for p, mode in ((a, "three-party"), (b, "three-party"), (c, "practice")):
                await p.send(type="join", mode=mode, consent=True)
            await d.send(type="join", mode="two-party", consent=True)
            games = [await p.until("game", timeout=15) for p in (a, b, c, d)]
            assert games[0]["game"] == games[1]["game"]  # matched across the processes

            want = {
                ids["a"]: ["1 of 8", "1", "", "PROLIFIC_PID=pa0 STUDY_ID=s1"],
                ids["b"]: ["1 of 8", "1", "", "PROLIFIC_PID=pb1 STUDY_ID=s1"],
                ids["c"]: ["0 of 8", "1", "", "pid=c-practice"],  # practice is no round
                ids["d"]: ["1 of 8", "1", "", ""],
                ids["e"]: ["0 of 8", "0", "", ""],
            }
            pages = {base: await _listing(base, want) for base in (here, there)}
            for page in pages.values():  # each process's page, whoever its people are
                assert "5 participants · 3 live games · 0 finished" in page
                for g in games:
                    assert f'href="/admin/game/{g["game"]}"' in page
            # d's interrogation was drawn with a person, none was free: an AI (on `there`).
            assert "matchmaking fallbacks: 1 (0 on this process)" in pages[here]
            assert "matchmaking fallbacks: 1 (1 on this process)" in pages[there]
            for base, n in ((here, 0), (there, 1)):
                metrics = await _get(base, "/metrics")
                assert f"turinglab_arena_matchmaking_fallbacks_total {n}\n" in metrics

            # Ended from `here`'s admin (played on `there`): flagged, d's round given back;
            # then d's exit survey, saved by `there`.
            await _end(here, games[3]["game"])
            await d.until("reveal")
            await d.send(type="survey", answers={"prior_awareness": "No"})
            await d.until("status", state="survey-saved")
            want[ids["d"]] = ["0 of 8", "1", "done", ""]
            page = await _listing(here, want)
            assert "2 live games · 1 finished (1 flagged or abandoned)" in page

            if os.environ.get("TURINGLAB_SCREENSHOTS") and os.path.exists(CHROMIUM):
                await _screenshots(here, Path(os.environ["TURINGLAB_SCREENSHOTS"]))
        finally:
            for p in people:
                await p.close()


async def _listing(base: str, want: dict[str, list[str]]) -> str:
    """`base`'s /admin once its Participants table shows `want` (the other process's writes
    reach the store within a group commit), or as it is after 10 s."""
    started = time.monotonic()
    while True:
        page = await _get(base, "/admin")
        listed = {pid: row[:4] for pid, row in _people(page).items()}
        if listed == want or time.monotonic() - started > 10:
            assert listed == want, base
            return page
        await asyncio.sleep(0.1)


async def _end(base: str, game: str) -> None:
    page = await _get(base, f"/admin/game/{game}")
    csrf = re.search(r'name="csrf" value="([^"]+)"', page)
    assert csrf is not None, page
    form = {"csrf": csrf.group(1), "reason": "stuck (a test)"}
    async with aiohttp.ClientSession() as s:
        url = f"{base}/admin/game/{game}/end"
        async with s.post(url, data=form, headers=AUTH, allow_redirects=False) as r:
            assert r.status == 303


async def _screenshots(base: str, where: Path) -> None:
    from playwright.async_api import async_playwright

    where.mkdir(parents=True, exist_ok=True)
    sizes: dict[str, Any] = {"1280": (1280, 860), "390": (390, 844)}
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            for label, (width, height) in sizes.items():
                context = await browser.new_context(
                    viewport={"width": width, "height": height},
                    http_credentials={"username": "admin", "password": ADMIN_PASSWORD},
                )
                page = await context.new_page()
                await page.goto(base + "/admin")
                await page.screenshot(path=str(where / f"arena-admin-{label}.png"), full_page=True)
                await context.close()
        finally:
            await browser.close()
