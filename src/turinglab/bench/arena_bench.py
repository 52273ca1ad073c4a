"""Arena load benchmark: simulated people over real websockets against one server process.

Each simulated game is two people in a three-party game with an instant AI witness: the
interrogator writes to both witnesses every `interval` seconds, the human witness answers each
message after `interval / 2`. Every person-to-person message carries its id and send time, so
the receiving side measures the relay latency (send -> frame received at the other person) and
the run counts lost and duplicated messages. Prints JSON.

    python -m turinglab.bench.arena_bench --games 100 --store /tmp/arena.db
    python -m turinglab.bench.arena_bench --games 100 --processes 2 \
        --store postgresql://postgres@127.0.0.1:5432/bench --redis redis://127.0.0.1:6379/0

`--store` writes every game to the store as `serve` does; with `--processes N` people are spread
evenly over N server processes joined by Redis (cluster.py), so most games span two processes.

By default the engine's three-party game is played with an instant scripted AI witness;
`--setup MODULE:FUNCTION` names another function returning an `ArenaSetup` with a
"three-party" mode (e.g. `arena_fixtures:make_setup` with tests/ on the path).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import os
import platform
import random
import secrets
import signal
import socket
import statistics
import subprocess
import sys
import time
from collections import Counter
from typing import Any

import aiohttp


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def engine_setup(**settings: Any) -> Any:
    """The engine's three-party game (games/three_party.py) with an instant scripted AI
    witness and no typing delay: what is measured is the arena and the game, not a model."""
    from turinglab.agents.scripted import ScriptedAgent
    from turinglab.arena.engine_modes import interrogation_mode
    from turinglab.arena.modes import ArenaSettings, ArenaSetup
    from turinglab.games.three_party import ThreePartyExperiment

    cfg = ThreePartyExperiment.model_validate(
        {
            "game": "three-party",
            "interrogators": ["person"],
            "human_witnesses": ["person"],
            "ai_witnesses": [{"agent": "bot", "persona": "none"}],
            "typing_delay": False,
            "time_limit_s": 600,
        }
    )
    bot = ScriptedAgent("bot", ["sure", "no idea", "lol", "maybe"], cycle=True)
    mode = interrogation_mode("three-party", "Three-party", cfg)
    return ArenaSetup([mode], {"bot": bot}, {"bot": "BOT"}, ArenaSettings(**settings))


def _load_setup(spec: str) -> Any:
    module, _, func = spec.partition(":")
    return getattr(importlib.import_module(module), func)(
        frames_per_s=50, frame_burst=100, ai_after_s=3600
    )


def serve(setup_spec: str, port: int, store: str | None, redis: str | None, ns: str) -> None:
    import uvicorn

    from turinglab.arena.app import create_app
    from turinglab.arena.store_bridge import ArenaStore
    from turinglab.store.database import Store

    setup = _load_setup(setup_spec)
    kept = None if store is None else ArenaStore(Store(store), setup, worker=f"bench:{port}")
    app = create_app(
        setup,
        admin_password=secrets.token_urlsafe(12),
        store=kept,
        redis_url=redis,
        secret="bench secret" if redis else None,
        namespace=ns,
    )
    try:
        uvicorn.run(
            app,
            host="127.0.0.1",
            port=port,
            log_level="warning",
            backlog=4096,
            ws_per_message_deflate=False,  # as `serve` runs it
        )
    finally:
        if kept is not None:
            kept.close()


def _redacted(url: str | None) -> str | None:
    return None if url is None else url.split("://", 1)[0] if "://" in url else "sqlite"


def _cpu_s(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Tally:
    def __init__(self) -> None:
        self.sent: set[str] = set()  # witness -> interrogator message ids
        self.expected_from_judge = 0  # interrogator -> human witness messages
        self.received: Counter[str] = Counter()
        self.latency_ms: list[float] = []
        self.errors: Counter[str] = Counter()
        self.games_done = 0

    def got(self, text: str) -> None:
        mid, _, sent_at = text.partition("@")
        if mid.startswith("p"):  # person-to-person messages only (AI replies are not relays)
            self.received[mid] += 1
            self.latency_ms.append((time.time() - float(sent_at)) * 1000)


async def _person(http: aiohttp.ClientSession, base: str) -> aiohttp.ClientWebSocketResponse:
    async with http.get(base + "/") as r:
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
    http: aiohttp.ClientSession, bases: list[str], n: int, args: Any, tally: Tally
) -> None:
    """One person: joins, then plays whichever role the server gave them (the server decides
    who plays with whom, so people of one 'game' here may meet others)."""
    rng = random.Random(args.seed * 100_003 + n)  # seeded per person; recorded in the output
    await asyncio.sleep(rng.uniform(0, args.ramp))  # people arrive over the ramp, not at once
    ws = await _person(http, bases[n % len(bases)])  # with several processes: spread evenly
    q: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    reader = asyncio.create_task(_frames(ws, tally, q))
    try:
        await _until(q, "status")
        await ws.send_json({"type": "join", "mode": "three-party", "consent": True})
        snap = await _until(q, "game")
        if snap["role"] == "interrogator":
            await _interrogate(ws, q, n, args, tally, rng)
        else:
            await _witness(ws, q, n, args, tally, rng)
    finally:
        await ws.close()
        reader.cancel()


async def _interrogate(
    ws: Any, q: asyncio.Queue[dict[str, Any]], n: int, args: Any, tally: Tally, rng: random.Random
) -> None:
    for k in range(args.rounds):
        for ch in ("A", "B"):
            text = f"pj{n}.{k}{ch}@{time.time()}"
            await ws.send_json({"type": "message", "channel": ch, "text": text})
        seen: set[str] = set()
        while len(seen) < 2:  # both witnesses answered
            frame = await asyncio.wait_for(q.get(), 60)
            if frame["type"] == "message" and frame["sender"] == "them":
                seen.add(frame["channel"])
        await asyncio.sleep(args.interval * rng.uniform(0.5, 1.5))
    # Of these, only the messages to the person are relays between people; which channel that
    # was is hidden from the client, so the count is checked at the witness's end.
    tally.expected_from_judge += args.rounds
    await ws.send_json({"type": "verdict", "choice": "A", "confidence": 50, "reason": ""})
    await _until(q, "reveal")
    tally.games_done += 1


async def _witness(
    ws: Any, q: asyncio.Queue[dict[str, Any]], n: int, args: Any, tally: Tally, rng: random.Random
) -> None:
    k = 0
    while True:
        frame = await asyncio.wait_for(q.get(), 120)
        if frame["type"] == "reveal":
            return
        if frame["type"] == "message" and frame["sender"] == "them":
            await asyncio.sleep(args.interval / 2 * rng.uniform(0.5, 1.5))
            mid = f"pw{n}.{k}"
            k += 1
            tally.sent.add(mid)
            await ws.send_json({"type": "message", "channel": "A", "text": f"{mid}@{time.time()}"})


async def run(args: Any) -> dict[str, Any]:
    load = round(os.getloadavg()[0], 2)
    if args.processes > 1 and not args.redis:
        raise SystemExit("error: --processes > 1 needs --redis (and a shared --store)")
    ports = [args.port or _free_port()] + [_free_port() for _ in range(args.processes - 1)]
    bases = [f"http://127.0.0.1:{port}" for port in ports]
    ns = f"bench-{secrets.token_hex(4)}"
    servers = []
    for i, port in enumerate(ports):
        command = [sys.executable, "-m", "turinglab.bench.arena_bench", "--serve", args.setup]
        if args.profile:  # the server's own profile, for finding where it spends its time
            command[1:1] = ["-m", "cProfile", "-o", f"{args.profile}.{i}"]
        command += ["--port", str(port), "--ns", ns]
        if args.store:
            command += ["--store", args.store]
        if args.redis:
            command += ["--redis", args.redis]
        servers.append(subprocess.Popen(command))
    tally = Tally()
    try:
        connector = aiohttp.TCPConnector(limit=0)
        jar = aiohttp.DummyCookieJar()
        async with aiohttp.ClientSession(connector=connector, cookie_jar=jar) as http:
            for base in bases:
                for _ in range(400):
                    try:
                        async with http.get(base + "/healthz") as r:
                            if r.status == 200:
                                break
                    except aiohttp.ClientError:
                        await asyncio.sleep(0.05)
            cpu0 = sum(_cpu_s(s.pid) for s in servers)
            t0, own0 = time.perf_counter(), time.process_time()
            people = [
                asyncio.create_task(_simulated(http, bases, n, args, tally))
                for n in range(2 * args.games)
            ]
            results = await asyncio.gather(*people, return_exceptions=True)
            wall = time.perf_counter() - t0
            cpu = sum(_cpu_s(s.pid) for s in servers) - cpu0
            client_cpu = time.process_time() - own0
    finally:
        for server in servers:
            server.send_signal(signal.SIGINT)  # uvicorn shuts down cleanly (cProfile writes)
        for server in servers:
            try:
                server.wait(30)
            except subprocess.TimeoutExpired:
                server.kill()
    failures = Counter(type(r).__name__ for r in results if isinstance(r, BaseException))
    lat = sorted(tally.latency_ms)

    def pct(p: float) -> float | None:
        return round(lat[min(len(lat) - 1, int(p * len(lat)))], 2) if lat else None

    return {
        "benchmark": "arena",
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "load_avg_1m_at_start": load,  # other work on the box inflates the tail
        },
        "processes": args.processes,
        "store": _redacted(args.store),
        "redis": args.redis,
        "games": args.games,
        "people": 2 * args.games,
        "rounds": args.rounds,
        "interval_s": args.interval,
        "ramp_s": args.ramp,
        "seed": args.seed,
        "games_completed": tally.games_done,
        "person_failures": dict(failures),
        "relayed_messages": sum(tally.received.values()),
        "lost": len(tally.sent - set(tally.received))
        + tally.expected_from_judge
        - sum(1 for m in tally.received if m.startswith("pj")),
        "duplicated": sum(1 for c in tally.received.values() if c > 1),
        "relay_ms": {
            "p50": pct(0.5),
            "p90": pct(0.9),
            "p99": pct(0.99),
            "max": pct(1.0),
            "mean": round(statistics.fmean(lat), 2) if lat else None,
        },
        "error_frames": dict(tally.errors),
        "wall_s": round(wall, 2),
        "server_cpu_s": round(cpu, 2),
        "client_cpu_s": round(client_cpu, 2),  # the simulated people share the same 2 cores
    }


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m turinglab.bench.arena_bench")
    ap.add_argument(
        "--setup", default="turinglab.bench.arena_bench:engine_setup", help="MODULE:FUNCTION"
    )
    ap.add_argument("--games", type=int, default=50, help="concurrent three-party games")
    ap.add_argument("--rounds", type=int, default=4, help="messages per conversation side")
    ap.add_argument("--interval", type=float, default=2.0, help="seconds between messages")
    ap.add_argument("--ramp", type=float, default=5.0, help="people arrive over this many s")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--profile", help="write each server's cProfile stats to FILE.<i>")
    ap.add_argument(
        "--store", help="write every game to this store (SQLite path or postgresql:// URL)"
    )
    ap.add_argument("--processes", type=int, default=1, help="server processes (needs --redis)")
    ap.add_argument("--redis", help="redis:// URL joining several server processes")
    ap.add_argument("--serve", help=argparse.SUPPRESS)
    ap.add_argument("--port", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--ns", default="bench", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.serve:
        serve(args.serve, args.port, args.store, args.redis, args.ns)
        return
    print(json.dumps(asyncio.run(run(args)), indent=2))


if __name__ == "__main__":
    main()
