"""The arena benchmark's simulated people: one client process plays its share of them.

Each simulated game is two people in a three-party game with an instant AI witness: the
interrogator writes to both witnesses every `interval` seconds, the human witness answers each
message after `interval / 2`. Every person-to-person message carries its id and send time, so
the receiving side measures the relay latency (send -> frame received at the other person) and
the run counts lost and duplicated messages.

The people run in their own processes (arena_bench.py starts them), never in a server's, so a
client that falls behind shows as client CPU, not as the server's latency. A client prints its
`Tally` as JSON; arena_bench.py merges the tallies of all clients.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections import Counter
from dataclasses import dataclass, field, fields
from typing import Any

import aiohttp

from turinglab.heap import settle_heap


@dataclass
class Tally:
    sent: list[str] = field(default_factory=list)  # witness -> interrogator message ids
    expected_from_judge: int = 0  # interrogator -> human witness messages
    received: Counter[str] = field(default_factory=Counter)
    latency_ms: list[tuple[float, float]] = field(default_factory=list)  # (sent at, ms)
    errors: Counter[str] = field(default_factory=Counter)
    failures: Counter[str] = field(default_factory=Counter)  # people whose script broke, by why
    games: list[tuple[float, float]] = field(default_factory=list)  # (start, end), interrogators
    join_ms: list[float] = field(default_factory=list)  # page load -> game snapshot, per person
    cpu_s: float = 0.0

    def got(self, text: str) -> None:
        mid, _, sent_at = text.partition("@")
        if mid.startswith("p"):  # person-to-person messages only (AI replies are not relays)
            self.received[mid] += 1
            self.latency_ms.append((float(sent_at), (time.time() - float(sent_at)) * 1000))

    def merge(self, other: Tally) -> None:
        self.sent += other.sent
        self.expected_from_judge += other.expected_from_judge
        self.received.update(other.received)
        self.latency_ms += other.latency_ms
        self.errors.update(other.errors)
        self.failures.update(other.failures)
        self.games += other.games
        self.join_ms += other.join_ms
        self.cpu_s += other.cpu_s

    def to_json(self) -> str:
        return json.dumps({f.name: getattr(self, f.name) for f in fields(self)})

    @classmethod
    def from_json(cls, text: str) -> Tally:
        data = json.loads(text)
        return cls(
            sent=data["sent"],
            expected_from_judge=data["expected_from_judge"],
            received=Counter(data["received"]),
            latency_ms=[(a, b) for a, b in data["latency_ms"]],
            errors=Counter(data["errors"]),
            failures=Counter(data["failures"]),
            games=[(a, b) for a, b in data["games"]],
            join_ms=data["join_ms"],
            cpu_s=data["cpu_s"],
        )

    def lost(self) -> int:
        from_judge = sum(1 for m in self.received if m.startswith("pj"))
        return len(set(self.sent) - set(self.received)) + self.expected_from_judge - from_judge

    def peak_games(self) -> int:
        """Most games in progress at one moment (an interrogator between start and reveal)."""
        edges = sorted([(a, 1) for a, _ in self.games] + [(b, -1) for _, b in self.games])
        live = peak = 0
        for _, step in edges:
            live += step
            peak = max(peak, live)
        return peak


@dataclass(frozen=True)
class Script:
    rounds: int
    interval: float
    ramp: float
    seed: int


async def _person(http: aiohttp.ClientSession, base: str) -> aiohttp.ClientWebSocketResponse:
    async with http.post(base + "/consent", json={"consent": True}) as r:  # starts a session
        cookie = r.cookies["turinglab_session"].value
    return await http.ws_connect(
        base.replace("http", "ws") + "/ws", headers={"Cookie": f"turinglab_session={cookie}"}
    )


async def _frames(ws: aiohttp.ClientWebSocketResponse, tally: Tally, out: asyncio.Queue) -> None:
    async for msg in ws:
        if msg.type != aiohttp.WSMsgType.TEXT:
            break
        frame = json.loads(msg.data)
        if frame["type"] == "message" and frame["sender"] == "them":
            tally.got(frame["text"])
        elif frame["type"] == "error":
            tally.errors[frame["code"]] += 1
        await out.put(frame)


async def _until(q: asyncio.Queue[dict[str, Any]], kind: str) -> dict[str, Any]:
    while True:
        frame = await asyncio.wait_for(q.get(), 60)
        if frame["type"] == kind:
            return frame


async def _simulated(
    http: aiohttp.ClientSession, base: str, n: int, script: Script, tally: Tally
) -> None:
    """One person: joins, then plays whichever role the server gave them (the server decides
    who plays with whom, so people of one 'game' here may meet others)."""
    rng = random.Random(script.seed * 100_003 + n)  # seeded per person; recorded in the output
    await asyncio.sleep(rng.uniform(0, script.ramp))  # people arrive over the ramp, not at once
    arrived = time.time()
    ws = await _person(http, base)
    q: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    reader = asyncio.create_task(_frames(ws, tally, q))
    try:
        await _until(q, "status")
        await ws.send_json({"type": "join", "mode": "three-party", "consent": True})
        snap = await _until(q, "game")
        tally.join_ms.append((time.time() - arrived) * 1000)
        if snap["role"] == "interrogator":
            started = time.time()
            await _interrogate(ws, q, n, script, tally, rng)
            tally.games.append((started, time.time()))
        else:
            await _witness(ws, q, n, script, tally, rng)
    finally:
        await ws.close()
        reader.cancel()


async def _interrogate(
    ws: Any, q: asyncio.Queue[dict[str, Any]], n: int, s: Script, tally: Tally, rng: random.Random
) -> None:
    for k in range(s.rounds):
        for ch in ("A", "B"):
            text = f"pj{n}.{k}{ch}@{time.time()}"
            await ws.send_json({"type": "message", "channel": ch, "text": text})
        seen: set[str] = set()
        while len(seen) < 2:  # both witnesses answered
            frame = await asyncio.wait_for(q.get(), 60)
            if frame["type"] == "message" and frame["sender"] == "them":
                seen.add(frame["channel"])
        await asyncio.sleep(s.interval * rng.uniform(0.5, 1.5))
    # Of these, only the messages to the person are relays between people; which channel that
    # was is hidden from the client, so the count is checked at the witness's end.
    tally.expected_from_judge += s.rounds
    await ws.send_json({"type": "end"})  # the server takes a verdict only after the end
    await ws.send_json({"type": "verdict", "choice": "A", "confidence": 50, "reason": ""})
    await _until(q, "reveal")


async def _witness(
    ws: Any, q: asyncio.Queue[dict[str, Any]], n: int, s: Script, tally: Tally, rng: random.Random
) -> None:
    k = 0
    while True:
        frame = await asyncio.wait_for(q.get(), 120)
        if frame["type"] == "reveal":
            return
        if frame["type"] == "message" and frame["sender"] == "them":
            await asyncio.sleep(s.interval / 2 * rng.uniform(0.5, 1.5))
            mid = f"pw{n}.{k}"
            k += 1
            tally.sent.append(mid)
            await ws.send_json({"type": "message", "channel": "A", "text": f"{mid}@{time.time()}"})


async def play(people: list[tuple[int, str]], script: Script, start_at: float) -> Tally:
    """Play every (person number, server base URL) given; the ramp starts at `start_at` (epoch
    seconds), the same moment in every client process."""
    settle_heap()  # as the server does: a collector's pause here would read as its latency
    tally = Tally()
    own0 = time.process_time()
    await asyncio.sleep(max(0.0, start_at - time.time()))
    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(
        connector=connector, cookie_jar=aiohttp.DummyCookieJar()
    ) as http:
        results = await asyncio.gather(
            *(_simulated(http, base, n, script, tally) for n, base in people),
            return_exceptions=True,
        )
    tally.failures.update(type(r).__name__ for r in results if isinstance(r, BaseException))
    tally.cpu_s = time.process_time() - own0
    return tally
