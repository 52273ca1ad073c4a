"""Two arena server processes as one arena: PostgreSQL under both, Redis between them.

The interrogator is connected to one process and the human witness to the other; they are
matched through Redis, play a whole three-party game, and the game is stored exactly once.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import redis
import redis.asyncio as aioredis

from arena_fixtures import Person, make_setup
from test_arena_store import _three_party, _wait_up
from turinglab.arena.cluster.cluster import SignedSessions
from turinglab.arena.core.store_bridge import ArenaStore
from turinglab.bench.arena_services import listening_socket
from turinglab.store.database import Store

TESTS = Path(__file__).parents[2]


@dataclass
class Processes:
    ns: str  # the Redis namespace
    ports: list[int]
    bases: list[str]
    procs: list[subprocess.Popen[bytes]]


SERVER = """
import sys
sys.path.insert(0, {tests!r})
from arena_fixtures import serve_on_fd
from arena_fixtures import ADMIN_PASSWORD, make_setup
from turinglab.arena import create_app
from turinglab.arena.cluster.cluster import SignedSessions
from turinglab.arena.core.store_bridge import ArenaStore
from turinglab.store.database import Store
setup = make_setup(ai_after_s=600)
app = create_app(
    setup, admin_password=ADMIN_PASSWORD, store=ArenaStore(Store({db!r}), setup, worker={port!r}),
    redis_url="redis://127.0.0.1:6379/0", secret="shared test secret", namespace={ns!r},
)
serve_on_fd(app, {fd})
"""


def drop_namespace(ns: str) -> None:
    """Remove an arena namespace's Redis keys (tests share one Redis)."""
    client = redis.Redis.from_url("redis://127.0.0.1:6379/0")
    keys = list(client.scan_iter(f"turinglab:arena:{ns}:*"))
    if keys:
        client.delete(*keys)
    client.close()


@contextlib.asynccontextmanager
async def alive_namespace(*processes: str) -> AsyncIterator[tuple[aioredis.Redis, str]]:
    """A fresh arena namespace in the shared Redis with `processes` marked alive (their
    heartbeats, without the TTL); yields (client, key prefix), removed afterwards."""
    ns = f"test-{uuid.uuid4().hex[:8]}"
    client = aioredis.Redis.from_url("redis://127.0.0.1:6379/0", decode_responses=True)
    prefix = f"turinglab:arena:{ns}:"
    for proc in processes:
        await client.set(f"{prefix}alive:{proc}", "1")
    try:
        yield client, prefix
    finally:
        await client.aclose()
        drop_namespace(ns)


@contextlib.asynccontextmanager
async def arena_processes(
    server: str, db: str, n: int = 2, redis_urls: list[str] | None = None
) -> AsyncIterator[Processes]:
    """`n` server processes of one arena (`server`: a script formatted with tests, db, port,
    ns, fd and redis — each process's own Redis URL from `redis_urls`, the local Redis by
    default) in a fresh Redis namespace, each up; stopped (SIGTERM, then SIGKILL) afterwards."""
    ns = f"test-{uuid.uuid4().hex[:8]}"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    socks = [listening_socket() for _ in range(n)]  # held from the start: no port race
    ports = [int(sock.getsockname()[1]) for sock in socks]
    procs = []
    urls = redis_urls or ["redis://127.0.0.1:6379/0"] * n
    for sock, port, url in zip(socks, ports, urls, strict=True):
        code = server.format(tests=str(TESTS), db=db, port=port, fd=sock.fileno(), ns=ns, redis=url)
        procs.append(
            subprocess.Popen([sys.executable, "-c", code], env=env, pass_fds=[sock.fileno()])
        )
        sock.close()  # the child holds it now
    bases = [f"http://127.0.0.1:{p}" for p in ports]
    try:
        for base, proc in zip(bases, procs, strict=True):
            await _wait_up(base, proc)
        yield Processes(ns, ports, bases, procs)
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in procs:
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)
        drop_namespace(ns)


@pytest.mark.database
async def test_two_processes_play_one_game(postgres_url: str) -> None:
    people: list[Person] = []
    async with arena_processes(SERVER, postgres_url) as arena:
        try:
            a, b = Person(arena.bases[0]), Person(arena.bases[1])
            people = [a, b]
            for p in people:
                assert (await p.connect())["type"] == "status"
            await a.send(type="join", mode="three-party", consent=True)
            assert (await a.until("status"))["state"] == "waiting"
            await b.send(type="join", mode="three-party", consent=True)
            ga, gb = await a.until("game"), await b.until("game")
            assert ga["game"] == gb["game"]
            judge, witness = (a, b) if ga["role"] == "interrogator" else (b, a)
            typed = await _three_party(judge, witness)
            # `a` is on the process that did not take the match (b's took a from the queue),
            # so its reconnect is answered by the owner across Redis, with the whole game.
            await a.drop()
            snapshot = await a.connect()
            assert snapshot["type"] == "game" and snapshot["game"] == ga["game"]
            assert len(snapshot["messages"]) == (8 if a is judge else 4)
            await judge.send(type="end")  # a verdict only after the end
            await judge.send(type="verdict", choice="A", confidence=55, reason="why not")
            await judge.until("reveal")
            await witness.until("reveal")
        finally:
            for p in people:
                await p.close()

    kept = ArenaStore(Store(postgres_url), make_setup(ai_after_s=600))
    try:
        (game,) = kept.records()  # stored once, by the process that played it
        assert game["game"] == ga["game"] and game["status"] == "finished"
        humans = {s for s, v in game["seats"].items() if v["kind"] == "human"}
        assert [m["text"] for m in game["messages"] if m["sender"] in humans] == typed
        assert len(game["judgements"]) == 1
    finally:
        kept.close()
        kept.store.close()


def test_signed_sessions_are_known_to_every_process_and_cannot_be_forged() -> None:
    one, two = SignedSessions("shared"), SignedSessions("shared")
    person = one.new()
    seen = two.get(person.token)
    assert seen is not None and seen.id == person.id  # another process, same person
    pid, _, sig = person.token.partition(".")
    assert two.get(f"p-000000000000.{sig}") is None  # a signature is for one id only
    assert two.get(pid) is None and two.get(None) is None
    assert SignedSessions("other secret").get(person.token) is None
