"""Leaving the queue across processes (cluster.py, `leave_queues`): a page closed while queued
and a consent withdrawn (`POST /withdraw`, possibly answered by another process) take the person
out of the shared queues at once — open matching's Redis queue and blind matching's offer set —
so no other process pairs a newcomer with someone who has gone. Two real server processes on
one Redis namespace."""

from __future__ import annotations

import asyncio

import pytest
import redis.asyncio as aioredis

from arena_fixtures import Person
from test_arena_multiprocess import arena_processes

pytestmark = pytest.mark.slow

SERVER = """
import sys
sys.path.insert(0, {tests!r})
from arena_fixtures import ADMIN_PASSWORD, make_setup, serve_on_fd
from turinglab.arena import create_app
from turinglab.arena.core.matchmaking_wait import MatchDesign
design = {design}
setup = make_setup(ai_after_s=600, max_wait_s=600, design=design)
app = create_app(setup, admin_password=ADMIN_PASSWORD, redis_url="redis://127.0.0.1:6379/0",
                 secret="shared test secret", namespace={ns!r})
serve_on_fd(app, {fd})
"""
OPEN = SERVER.replace("{design}", "None")
# Three-party: everyone waiting is offered as a witness, for the whole (long) drawn wait.
BLIND = SERVER.replace(
    "{design}", "MatchDesign(human_witness_share=1.0, wait_min_s=30, wait_max_s=30)"
)


def _pid(person: Person) -> str:
    (cookie,) = person.http.cookie_jar
    return cookie.value.split(".")[0]  # signed tokens are "<participant id>.<HMAC>"


async def _entries(ns: str, key: str) -> list[str]:
    client = aioredis.Redis.from_url("redis://127.0.0.1:6379/0", decode_responses=True)
    try:
        full = f"turinglab:arena:{ns}:{key}"
        if await client.type(full) == "zset":
            return list(await client.zrange(full, 0, -1))
        return list(await client.lrange(full, 0, -1))
    finally:
        await client.aclose()


async def _until(check: object, what: str, timeout: float = 20.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not await check():  # type: ignore[operator]
        assert asyncio.get_running_loop().time() < deadline, what
        await asyncio.sleep(0.05)


async def _queued(person: Person, mode: str = "two-party") -> None:
    assert (await person.connect())["type"] == "status"
    await person.send(type="join", mode=mode, consent=True)
    assert (await person.until("status"))["state"] == "waiting"


@pytest.mark.parametrize("how", ["closed", "withdrew"])
async def test_open_matching_a_person_who_went_is_out_of_the_shared_queue(how: str) -> None:
    async with arena_processes(OPEN, "") as arena:
        one, two = arena.bases
        gone, newcomer, stays = Person(one), Person(two), Person(two)
        try:
            await _queued(gone)
            pid = _pid(gone)
            queue = await _entries(arena.ns, "queue:two-party")
            assert any(e.startswith(pid + "|") for e in queue)
            if how == "closed":
                await gone.drop()
            else:  # answered by the other process: the queue entry lives on the first
                async with gone.http.post(two + "/withdraw", json={}) as r:
                    assert r.status == 200
                    assert (await r.json())["end"] == "screened_out"

            async def out() -> bool:
                found = await _entries(arena.ns, "queue:two-party")
                return not any(e.startswith(pid + "|") for e in found)

            await _until(out, "still in the shared queue")
            await _queued(newcomer)
            seen = await newcomer.frames_within(1.5)  # with `gone` queued: a game at once
            assert not [f for f in seen if f["type"] == "game"]
            assert (await stays.connect())["type"] == "status"  # someone who is there
            await stays.send(type="join", mode="two-party", consent=True)  # is matched
            games = [await p.until("game") for p in (newcomer, stays)]
            assert games[0]["game"] == games[1]["game"]
        finally:
            for p in (gone, newcomer, stays):
                await p.close()


@pytest.mark.parametrize("how", ["closed", "withdrew"])
async def test_blind_matching_a_person_who_went_is_no_longer_offered(how: str) -> None:
    async with arena_processes(BLIND, "") as arena:
        one, two = arena.bases
        gone = Person(one)
        try:
            await _queued(gone, "three-party")
            pid = _pid(gone)

            async def offered() -> bool:
                found = await _entries(arena.ns, "blind:three-party")
                return any(e.startswith(pid + "|") for e in found)

            await _until(offered, "never offered as a witness")
            if how == "closed":
                await gone.drop()
            else:
                async with gone.http.post(two + "/withdraw", json={}) as r:
                    assert r.status == 200

            async def out() -> bool:
                return not await offered()

            await _until(out, "still offered as a witness after leaving")
        finally:
            await gone.close()
