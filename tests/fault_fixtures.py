"""Pieces of the arena's fault tests: a Redis of their own, people who keep talking through a
fault, and an audit of the store in SQL.

A `Talker` is one scripted participant over the real websocket protocol, behaving as the page
does. It records every message frame it is shown (the acknowledgements the arena gave),
answers what it is asked (a witness) or asks on every channel in turn (the interrogator, until
told to decide), and follows its game when it is rebuilt elsewhere (a `game` snapshot after a
takeover) or when it is told to reconnect. What it takes, keeps and sends is the page's call
(arena/core/page_protocol.py, the rules of static/protocol.js): frames of its game stream in order
and once, a new owner's snapshot always, a gap asking for the rest, inputs with ids sent
again until answered.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import redis
from sqlalchemy import create_engine, text

from arena_fixtures import Person
from test_arena_store import _wait_up
from turinglab.arena.core import page_protocol as P
from turinglab.arena.core.page_protocol import PageProtocol
from turinglab.bench.arena_services import free_port
from turinglab.store.database import store_url


@contextlib.contextmanager
def own_redis() -> Iterator[str]:
    """A redis-server of this test's own on a free port (nothing persisted)."""
    with own_redis_process() as (url, _proc):
        yield url


@contextlib.contextmanager
def own_redis_process() -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """`own_redis`, with its process (to pause it)."""
    exe = shutil.which("redis-server")
    if exe is None:
        pytest.fail("redis-server is not installed (apt-get install redis-server)")
    port = free_port()
    workdir = tempfile.mkdtemp(prefix="turinglab-redis-")
    proc = subprocess.Popen(
        [exe, "--port", str(port), "--save", "", "--appendonly", "no", "--dir", workdir],
        stdout=subprocess.DEVNULL,
    )
    client = redis.Redis(port=port)
    try:
        for _ in range(200):
            with contextlib.suppress(redis.ConnectionError):
                if client.ping():
                    break
            assert proc.poll() is None, "redis-server died"
            threading.Event().wait(0.05)
        yield f"redis://127.0.0.1:{port}/0", proc
    finally:
        client.close()
        proc.send_signal(signal.SIGCONT)
        proc.terminate()
        proc.wait(10)
        shutil.rmtree(workdir, ignore_errors=True)


@contextlib.asynccontextmanager
async def server_processes(
    script: str, n: int, logs: list[Path] | None = None, **fmt: Any
) -> AsyncIterator[list[Any]]:
    """`n` arena server processes from `script` (formatted with tests, port and `fmt`), each
    up; yields [(base, process)], stopped (SIGCONT, SIGTERM, then SIGKILL) afterwards. With
    `logs` (a path each), their output goes there (for a test to read), not to the test's."""
    tests = os.path.dirname(__file__)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    ports = [free_port() for _ in range(n)]
    outs = [open(path, "wb") for path in logs or []]  # noqa: SIM115 (closed below)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", script.format(tests=tests, port=p, **fmt)],
            env=env,
            stdout=outs[i] if outs else None,
            stderr=subprocess.STDOUT if outs else None,
        )
        for i, p in enumerate(ports)
    ]
    out = [(f"http://127.0.0.1:{p}", proc) for p, proc in zip(ports, procs, strict=True)]
    try:
        for base, proc in out:
            await _wait_up(base, proc)
        yield out
    finally:
        for proc in procs:
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    proc.send_signal(signal.SIGCONT)
                    proc.send_signal(signal.SIGTERM)
        for proc in procs:
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)
        for out in outs:
            out.close()


def tracebacks(logs: list[Path]) -> list[str]:
    """Each traceback the processes logged, with the line before it (what was being done)."""
    found = []
    for path in logs:
        lines = path.read_text(errors="replace").splitlines()
        found += [
            "\n".join(lines[max(0, i - 1) : i + 12])
            for i, line in enumerate(lines)
            if line.startswith("Traceback")
        ]
    return found


def now_ms() -> float:
    return time.monotonic() * 1000


@dataclass
class Talker:
    """One scripted participant that behaves as the arena page does (arena.js, inputs.js);
    `seen` is every message frame text it was shown, in order.

    Its protocol is the page's (arena/core/page_protocol.py, the rules of static/protocol.js,
    checked against the same vectors in test_page_protocol.py): every input carries an id and
    is kept until the server answers it, and goes again when overdue, after a reconnect once
    caught up, and after a snapshot that does not show it; a ping every beat, and a server
    silent past the page's limit (or a handshake that hangs) is given up; a lost socket is
    opened again after the page's backoff, on the next process (as nginx would send it),
    naming the last frame taken. `wire` logs its traffic as page_harness's recorder does."""

    person: Person
    name: str
    bases: list[str]  # where to reconnect (another process first)
    role: str = ""
    game: str = ""
    seen: list[str] = field(default_factory=list)
    last: dict[str, str] = field(default_factory=dict)  # channel -> "you"/"them"
    channels: list[str] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)  # codes of error frames shown
    reveal: dict[str, Any] | None = None
    said: int = 0
    decide: asyncio.Event = field(default_factory=asyncio.Event)
    progress: asyncio.Event = field(default_factory=asyncio.Event)  # set at each message seen
    pace_s: float = 0.05
    page: PageProtocol = field(default_factory=PageProtocol)  # what the page takes and sends
    duplicates: int = 0  # frames the page dropped (already taken, or before a gap)
    resumes: int = 0  # resumes the page asked for (a gap, a frame of another stream)
    resent: int = 0  # inputs sent again
    wire: list[dict[str, Any]] = field(default_factory=list)
    clock: Any = now_ms  # the page's clock (ms); the conformance test sets its own
    _next_beat: float = 0.0

    def snapshot(self, frame: dict[str, Any]) -> None:
        self.role, self.game, self.channels = frame["role"], frame["game"], frame["channels"]
        self.seen = [m["text"] for m in frame["messages"]]
        self.last = {}
        for m in frame["messages"]:
            if m["sender"] != "game":
                self.last[m["channel"]] = m["sender"]
        if frame.get("reveal"):
            self.reveal = frame["reveal"]

    async def run(self) -> None:
        """Talk until the game reveals who was who."""
        self._next_beat = self.clock() + P.PING_MS
        await self._act_or_reconnect()
        while self.reveal is None:
            try:
                frame = await self.person.recv(timeout=max(0.05, self._beat_in_s()))
            except TimeoutError:
                await self._beat()
                continue
            except (TypeError, AssertionError, aiohttp.ClientError, ConnectionError):
                # The socket closed (its process died): go to the next process.
                self._log("close")
                await self._reconnect()
                continue
            if not await self._accept(frame):
                continue
            kind = frame["type"]
            if kind == "game":
                self.snapshot(frame)
            elif kind == "message":
                self.seen.append(frame["text"])
                if frame["sender"] != "game":
                    self.last[frame["channel"]] = frame["sender"]
                self.progress.set()
            elif kind == "error":
                self.notices.append(frame["code"])
                if frame["code"] == "reconnect":
                    await self._reconnect()
            elif kind == "reveal":
                self.reveal = frame
                return
            await self._act_or_reconnect()

    def _log(self, e: str, **what: Any) -> None:
        self.wire.append({"t": now_ms(), "e": e, **what})

    def _beat_in_s(self) -> float:
        return (self._next_beat - self.clock()) / 1000

    async def _beat(self) -> None:
        """The page's heartbeat, every PING_MS."""
        if self._beat_in_s() > 0:
            return
        self._next_beat = self.clock() + P.PING_MS
        beat = self.page.tick(self.clock(), "open")
        if beat.dead:  # the server stopped answering (a paused process): go elsewhere
            self._log("given-up")
            await self._reconnect()
            return
        if beat.late:  # the page's toast: the server is not answering yet
            self._log("toast")
            self.notices.append("late")
        for frame in beat.sends:
            await self._sent_again(frame)

    async def _accept(self, frame: dict[str, Any]) -> bool:
        """Whether the page takes `frame`; what the page sends in answer goes."""
        taken = self.page.frame(frame, self.clock())
        self._log("in", type=frame["type"], code=frame.get("code"), held=len(self.page.unanswered))
        for out in taken.sends:
            self.resumes += out["type"] == "resume"
            await self._sent_again(out)
        self.duplicates += not taken.take
        if taken.notice is not None:
            self.notices.append(taken.notice)
        return taken.take

    async def _sent_again(self, frame: dict[str, Any]) -> None:
        self.resent += "id" in frame
        await self._send(frame)

    async def _send(self, frame: dict[str, Any]) -> None:
        # A socket that is going: the reconnect resumes (and sends inputs again).
        if "id" in frame:
            self._log("out", type=frame["type"], id=frame["id"], held=len(self.page.unanswered))
        with contextlib.suppress(AssertionError, aiohttp.ClientError, ConnectionError):
            await self.person.send(**frame)

    def first(self, frame: dict[str, Any]) -> None:
        """The snapshot that seated them (read before the talker ran)."""
        self.page.frame(frame, self.clock())
        self.snapshot(frame)

    async def _input(self, frame: dict[str, Any]) -> None:
        """An input the server applies once: kept (with its id) until answered."""
        frame = {"id": secrets.token_hex(6), **frame}
        for out in self.page.input(frame, self.clock(), self.person.ws is not None):
            await self._send(out)

    def _deciding(self) -> bool:
        """Whether an end and verdict are already on their way."""
        return any(h.frame["type"] in ("end", "verdict") for h in self.page.unanswered.values())

    async def _act_or_reconnect(self) -> None:
        try:
            await self._act()
        except (aiohttp.ClientError, ConnectionError):
            # The socket closed as we wrote (its process died): the next process.
            self._log("close")
            await self._reconnect()

    async def _reconnect(self) -> None:
        """As the page: back off, open a socket on the next process naming the last frame
        taken; a handshake not done within the page's limit is given up, and tried again."""
        await self.person.drop()
        while True:
            await asyncio.sleep(self.page.closed(None, random.random())["delay_ms"] / 1000)
            self.bases = [*self.bases[1:], self.bases[0]]
            self.person.base = self.bases[0]
            url = self.person.base.replace("http", "ws") + "/ws"
            params = {k: str(v) for k, v in (self.page.query() or {}).items()}
            self.page.connecting(self.clock())
            try:
                async with asyncio.timeout(P.OPEN_MS / 1000):
                    self.person.ws = await self.person.http.ws_connect(url, params=params)
            except (TimeoutError, aiohttp.ClientError, OSError):
                self._log("given-up")
                continue
            self.page.opened(self.clock())
            self._log("open")
            self._next_beat = self.clock() + P.PING_MS
            return

    async def _act(self) -> None:
        if self.reveal is not None or self.person.ws is None:
            return
        await asyncio.sleep(self.pace_s)
        if self.role == "interrogator":
            if self.decide.is_set() and all(v == "them" for v in self.last.values()):
                if not self._deciding():  # the server takes a verdict only after "end"
                    await self._input({"type": "end"})
                    await self._input(
                        {"type": "verdict", "choice": "A", "confidence": 50, "reason": "-"}
                    )
                return
            for ch in self.channels:
                if self.last.get(ch) != "you" and not self.decide.is_set():
                    self.said += 1
                    self.last[ch] = "you"
                    await self._say(ch, f"{self.name} q{self.said} on {ch}")
        elif self.role == "witness":
            for ch in self.channels:
                if self.last.get(ch) == "them":
                    self.said += 1
                    self.last[ch] = "you"
                    await self._send({"type": "typing", "channel": ch})
                    await self._say(ch, f"{self.name} a{self.said}")

    async def _say(self, channel: str, text: str) -> None:
        # `after`: how many messages were shown before it (a snapshot showing it answers it).
        await self._input(
            {"type": "message", "channel": channel, "text": text, "after": len(self.seen)}
        )


async def seat_pair(waiter: Person, taker: Person, mode: str, bases: list[str], name: str):
    """`waiter` queues first, `taker` takes the match (its process owns the game)."""
    await waiter.send(type="join", mode=mode, consent=True)
    assert (await waiter.until("status"))["state"] == "waiting"
    await taker.send(type="join", mode=mode, consent=True)
    talkers = []
    for i, p in enumerate((waiter, taker)):
        t = Talker(p, f"{name}{'wt'[i]}", list(bases))
        t.first(await p.until("game", timeout=30))
        talkers.append(t)
    return talkers


@dataclass
class StoredGame:
    id: int
    arena_game: str
    status: str
    flags: list[str]
    seqs: list[int]
    texts: list[str]
    visible: list[list[str]]
    seats: dict[str, str]  # participant id -> seat


def audit(url: str) -> dict[str, StoredGame]:
    """Every arena game in the store, read in plain SQL (not through the code under test)."""
    engine = create_engine(store_url(url))
    out: dict[str, StoredGame] = {}
    with engine.connect() as conn:
        rows = conn.execute(text("SELECT id, status, flags, setup FROM games ORDER BY id")).all()
        for gid, status, flags, setup in rows:
            if not setup.get("arena_game"):
                continue
            msgs = conn.execute(
                text("SELECT seq, text, visible_to FROM messages WHERE game_id = :g ORDER BY seq"),
                {"g": gid},
            ).all()
            seats = dict(
                conn.execute(
                    text(
                        "SELECT participant, seat FROM seats WHERE game_id = :g AND kind = 'human'"
                    ),
                    {"g": gid},
                ).all()
            )
            out[setup["arena_game"]] = StoredGame(
                gid, setup["arena_game"], status, list(flags or []),
                [m.seq for m in msgs], [m.text for m in msgs],
                [m.visible_to.split(",") for m in msgs], seats,
            )  # fmt: skip
        dupes = conn.execute(
            text("SELECT count(*) FROM (SELECT game_id, seq FROM messages "
                 "GROUP BY game_id, seq HAVING count(*) > 1) d")
        ).scalar()  # fmt: skip
    engine.dispose()
    assert dupes == 0
    return out


def paused_seconds(url: str) -> dict[str, float]:
    """arena game id -> the seconds its clock stood still, as stored (plain SQL)."""
    engine = create_engine(store_url(url))
    with engine.connect() as conn:
        rows = conn.execute(text("SELECT setup, paused_s FROM games")).all()
    engine.dispose()
    return {s["arena_game"]: float(p) for s, p in rows if s.get("arena_game")}


def shown_is_stored(talker: Talker, game: StoredGame, *, all_of_it: bool = False) -> None:
    """What a person was shown is what the store holds for their seat: in order, each once,
    none missing before it (all of it, once the game has ended normally)."""
    seat = "interrogator"
    if talker.role != "interrogator":
        seat = next(s for s in game.seats.values() if s != "interrogator")
    mine = [t for t, vis in zip(game.texts, game.visible, strict=True) if seat in vis]
    expected = mine if all_of_it else mine[: len(talker.seen)]
    assert talker.seen == expected, (talker.name, talker.seen, mine)
