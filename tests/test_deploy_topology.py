"""deploy/local-topology.sh brings up what deploy/docker-compose.yml describes — two
`turinglab serve` processes on PostgreSQL + Redis behind nginx with TLS — and two people play a
game through it: sessions over HTTPS get Secure cookies (the proxy's X-Forwarded-Proto is
trusted), the socket goes through the proxy to either process, and the admin pages answer."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import ssl
import subprocess
import sys
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import yaml

from arena_fixtures import Person
from fault_fixtures import own_redis
from turinglab.bench.arena_services import free_port

ROOT = Path(__file__).parent.parent
SCRIPT = ROOT / "deploy" / "local-topology.sh"
PASSWORD = "deploy test password"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.database,
    pytest.mark.server,
    pytest.mark.skipif(shutil.which("nginx") is None, reason="nginx is not installed"),
]


def _config(tmp_path: Path) -> Path:
    """configs/arena_study.yaml with ELIZA as the only AI witness (no model to load)."""
    data = yaml.safe_load((ROOT / "configs" / "arena_study.yaml").read_text())
    data["experiment"]["ai_witnesses"] = [{"agent": "eliza", "persona": "none"}]
    data["experiment"]["typing_delay"] = False
    data["agents"], data["store"] = {}, None
    path = tmp_path / "study.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def _launcher(tmp_path: Path) -> Path:
    """`turinglab` as this test's Python runs it (the worktree's code)."""
    exe = tmp_path / "turinglab"
    exe.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m turinglab "$@"\n')
    exe.chmod(0o755)
    return exe


async def _ready(proc: subprocess.Popen[str], lines: list[str]) -> None:
    assert proc.stdout is not None
    while True:
        line = await asyncio.to_thread(proc.stdout.readline)
        assert line, "the topology script ended before it was ready:\n" + "".join(lines)
        lines.append(line)
        if line.startswith("ready: "):
            return


def _person(base: str, tls: ssl.SSLContext) -> Person:
    person = Person(base)
    person.http = aiohttp.ClientSession(
        cookie_jar=aiohttp.CookieJar(unsafe=True), connector=aiohttp.TCPConnector(ssl=tls)
    )
    return person


async def _consent(person: Person) -> str:
    """Start a session through the proxy; the Set-Cookie header as sent."""
    async with person.http.post(person.base + "/consent", json={"consent": True}) as r:
        r.raise_for_status()
        return r.headers["Set-Cookie"]


async def test_the_local_topology_serves_a_game_over_tls(tmp_path: Path, postgres_url: str) -> None:
    tls_port, ports = free_port(), [free_port(), free_port()]
    work = tmp_path / "work"
    with own_redis() as redis_url:
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join(sys.path),
            "TLS_PORT": str(tls_port),
            "ARENA_PORTS": " ".join(map(str, ports)),
            "STORE": postgres_url,
            "REDIS": redis_url,
            "WORKDIR": str(work),
            "TURINGLAB": str(_launcher(tmp_path)),
            "TURINGLAB_ADMIN_PASSWORD": PASSWORD,
        }
        proc = subprocess.Popen(
            ["bash", str(SCRIPT), str(_config(tmp_path))],
            env=env, stdout=subprocess.PIPE, text=True, start_new_session=True,
        )  # fmt: skip
        lines: list[str] = []
        try:
            await asyncio.wait_for(_ready(proc, lines), 300)
            await _play_through(f"https://127.0.0.1:{tls_port}", work, ports)
        finally:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(60)
            finally:
                if proc.poll() is None:
                    os.killpg(proc.pid, signal.SIGKILL)
        assert proc.returncode == 0
        for port in ports:  # both arena processes stopped with the script
            with pytest.raises(aiohttp.ClientConnectionError):
                async with aiohttp.ClientSession() as s:
                    await s.get(f"http://127.0.0.1:{port}/healthz")


async def _play_through(base: str, work: Path, ports: list[int]) -> None:
    tls = ssl.create_default_context(cafile=str(work / "arena.crt"))
    a, b = _person(base, tls), _person(base, tls)
    try:
        for p in (a, b):
            cookie = await _consent(p)
            assert "Secure" in cookie and "HttpOnly" in cookie and "SameSite=strict" in cookie
            assert (await p.connect())["type"] == "status"
        await a.send(type="join", mode="two-party", consent=True)
        await b.send(type="join", mode="two-party", consent=True)
        # The study's blind design decides each part: the two are matched with each other,
        # or each interrogates an AI (ELIZA); either way every game is played to its end.
        played = await asyncio.gather(_play(a), _play(b))
        assert "interrogator" in played
        await _admin_answers(base, tls, played.count("interrogator"))
    finally:
        await a.close()
        await b.close()
    # Straight to a process (plain HTTP, no proxy): not Secure.
    async with (
        aiohttp.ClientSession() as s,
        s.post(f"http://127.0.0.1:{ports[0]}/consent", json={"consent": True}) as r,
    ):
        assert "Secure" not in r.headers["Set-Cookie"]


async def _play(person: Person) -> str:
    """One person's part, whoever the design made them; returns their role."""
    game = await person.until("game", timeout=120)
    if game["role"] == "witness":
        assert (await person.until("message", sender="them", timeout=60))[
            "text"
        ] == "hello over tls"
        await person.send(type="message", channel="A", text="hi, a person here")
        return "witness"
    await person.send(type="message", channel="A", text="hello over tls")
    await person.until("message", sender="them", timeout=60)
    await person.send(type="end")
    await person.send(type="verdict", choice="human", confidence=70, reason="typos")
    assert isinstance((await person.until("reveal", timeout=60))["correct"], bool)
    return "interrogator"


async def _admin_answers(base: str, tls: ssl.SSLContext, games: int) -> None:
    auth = {"Authorization": aiohttp.encode_basic_auth("admin", PASSWORD)}
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=tls)) as s:
        async with s.get(base + "/admin/export.json", headers=auth) as r:
            export: dict[str, Any] = await r.json()
        async with s.get(base + "/openapi.json") as r:
            assert r.status == 404
    assert [g["status"] for g in export["games"]] == ["finished"] * games
