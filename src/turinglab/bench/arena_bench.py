"""Arena load benchmark: simulated people over real websockets against server processes.

Each simulated game is two people in a three-party game with an instant AI witness
(arena_people.py); the people run in client processes of their own, apart from the servers,
and every person-to-person message is timed from its send to its arrival at the other person,
counted (lost, duplicated) and reported with both sides' CPU. Prints JSON.

    python -m turinglab.bench.arena_bench --games 100 --store /tmp/arena.db
    python -m turinglab.bench.arena_bench --games 100 --processes 2 \
        --store postgresql://postgres@127.0.0.1:5432/bench --redis redis://127.0.0.1:6379/0

`--store` writes every game to the store as `serve` does; with `--processes N` people are spread
evenly over N server processes joined by Redis (cluster.py), so most games span two processes.
`--clients N` spreads the simulated people over N client processes; `--loop`, `--http` and
`--ws` choose uvicorn's implementations (the defaults are those `serve` uses).

By default the engine's three-party game is played with an instant scripted AI witness;
`--setup MODULE:FUNCTION` names another function returning an `ArenaSetup` with a
"three-party" mode (e.g. `arena_fixtures:make_setup` with tests/ on the path).
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import importlib
import json
import os
import platform
import secrets
import signal
import socket
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Any

import aiohttp

from turinglab.bench.arena_people import Script, Tally, play


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


@dataclass(frozen=True)
class ServerOptions:
    setup: str
    port: int
    store: str | None
    redis: str | None
    ns: str
    loop: str
    http: str
    ws: str
    profile: str | None  # write the server's CPU profile here


def serve(o: ServerOptions) -> None:
    import uvicorn

    from turinglab.arena.app import create_app
    from turinglab.arena.serve import uvicorn_options
    from turinglab.arena.store_bridge import ArenaStore
    from turinglab.heap import settle_heap
    from turinglab.store.database import Store

    setup = _load_setup(o.setup)
    kept = None if o.store is None else ArenaStore(Store(o.store), setup, worker=f"bench:{o.port}")
    app = create_app(
        setup,
        admin_password=secrets.token_urlsafe(12),
        store=kept,
        redis_url=o.redis,
        secret="bench secret" if o.redis else None,
        namespace=o.ns,
    )
    # CPU time of this (the event loop's) thread: on a busy machine, wall time would charge
    # other processes' turns on the CPU to whatever function happened to be running.
    settle_heap()  # as `serve` does
    profile = cProfile.Profile(time.thread_time) if o.profile else None
    if profile is not None:
        profile.enable()
    try:
        uvicorn.run(
            app,
            host="127.0.0.1",
            port=o.port,
            log_level="warning",
            backlog=4096,
            **{**uvicorn_options(), "loop": o.loop, "http": o.http, "ws": o.ws},
        )
    finally:
        if profile is not None and o.profile:
            profile.disable()
            profile.dump_stats(o.profile)
        if kept is not None:
            kept.close()


def _redacted(url: str | None) -> str | None:
    return None if url is None else url.split("://", 1)[0] if "://" in url else "sqlite"


def _cpu_s(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _waited_s(pid: int) -> float:
    """Seconds the process's threads were ready to run but waited for a CPU (other work on the
    machine): what a busy shared machine adds to every figure here."""
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{task}/schedstat") as f:
            total += int(f.read().split()[1])
    return total / 1e9


def _prioritise(pid: int, nice: int | None) -> None:
    """Give a process's session (autogroup) this nice value, so that on a machine shared with
    other work the benchmark measures the arena rather than its neighbours (negative: root)."""
    if nice is None:
        return
    try:
        with open(f"/proc/{pid}/autogroup", "w") as f:
            f.write(str(nice))
    except OSError as err:
        raise SystemExit(f"error: --priority {nice}: {err}") from None


def _server_command(args: Any, port: int, ns: str, i: int) -> list[str]:
    command = [sys.executable, "-m", "turinglab.bench.arena_bench", "--serve", args.setup]
    command += ["--port", str(port), "--ns", ns]
    command += ["--loop", args.loop, "--http", args.http, "--ws", args.ws]
    if args.profile:  # the server's own profile, for finding where it spends its time
        command += ["--profile", f"{args.profile}.{i}"]
    if args.store:
        command += ["--store", args.store]
    if args.redis:
        command += ["--redis", args.redis]
    return command


def _client_command(args: Any, bases: list[str], c: int, start_at: float) -> list[str]:
    return [
        *(sys.executable, "-m", "turinglab.bench.arena_bench", "--client", str(c)),
        *("--clients", str(args.clients), "--games", str(args.games)),
        *("--rounds", str(args.rounds), "--interval", str(args.interval)),
        *("--ramp", str(args.ramp), "--seed", str(args.seed), "--start-at", str(start_at)),
        *(arg for base in bases for arg in ("--base", base)),
    ]


def _my_people(args: Any, bases: list[str]) -> list[tuple[int, str]]:
    """Client `args.client`'s share: person n talks to server n % P, in client (n // P) % C, so
    every client holds people of every server."""
    p = len(bases)
    return [
        (n, bases[n % p]) for n in range(2 * args.games) if (n // p) % args.clients == args.client
    ]


async def _healthy(bases: list[str]) -> None:
    async with aiohttp.ClientSession() as http:
        for base in bases:
            for _ in range(400):
                try:
                    async with http.get(base + "/healthz") as r:
                        if r.status == 200:
                            break
                except aiohttp.ClientError:
                    await asyncio.sleep(0.05)
            else:
                raise SystemExit(f"error: the server at {base} did not start")


async def run(args: Any) -> dict[str, Any]:
    load = round(os.getloadavg()[0], 2)
    if args.processes > 1 and not args.redis:
        raise SystemExit("error: --processes > 1 needs --redis (and a shared --store)")
    ports = [args.port or _free_port()] + [_free_port() for _ in range(args.processes - 1)]
    bases = [f"http://127.0.0.1:{port}" for port in ports]
    ns = f"bench-{secrets.token_hex(4)}"
    # Each server and client process in a session of its own: Linux shares the CPU fairly
    # between sessions (autogroups) first, so on a machine busy with other work the people's
    # CPU would otherwise come out of the servers' share.
    servers = [
        subprocess.Popen(_server_command(args, p, ns, i), start_new_session=True)
        for i, p in enumerate(ports)
    ]
    for server in servers:
        _prioritise(server.pid, args.priority)
    clients: list[subprocess.Popen[str]] = []
    tally = Tally()
    try:
        await _healthy(bases)
        start_at = time.time() + 2.0  # every client process is up and waiting by then
        clients = [
            subprocess.Popen(
                _client_command(args, bases, c, start_at),
                stdout=subprocess.PIPE,
                text=True,
                start_new_session=True,
            )
            for c in range(args.clients)
        ]
        for client in clients:
            _prioritise(client.pid, args.priority)
        cpu0 = sum(_cpu_s(s.pid) for s in servers)
        waited0 = sum(_waited_s(s.pid) for s in servers)
        await asyncio.sleep(max(0.0, start_at - time.time()))
        t0 = time.perf_counter()
        outputs = await asyncio.gather(*(asyncio.to_thread(c.communicate) for c in clients))
        wall = time.perf_counter() - t0
        cpu = sum(_cpu_s(s.pid) for s in servers) - cpu0
        waited = sum(_waited_s(s.pid) for s in servers) - waited0
        for client, (out, _err) in zip(clients, outputs, strict=True):
            if client.returncode != 0:
                raise SystemExit(f"error: a client process failed (exit {client.returncode})")
            tally.merge(Tally.from_json(out))
    finally:
        procs: list[subprocess.Popen[Any]] = [*clients, *servers]
        for proc in procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)  # uvicorn shuts down cleanly (profiles written)
        for proc in procs:
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()

    def pct(values: list[float], p: float) -> float | None:
        return round(values[min(len(values) - 1, int(p * len(values)))], 2) if values else None

    lat, joins = sorted(ms for _, ms in tally.latency_ms), sorted(tally.join_ms)
    # Messages sent once everybody has arrived: the steady state, without the connection storm
    steady = sorted(ms for at, ms in tally.latency_ms if at >= start_at + args.ramp)

    return {
        "benchmark": "arena",
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "load_avg_1m_at_start": load,  # other work on the box inflates the tail
        },
        "processes": args.processes,
        "clients": args.clients,
        "server": {"loop": args.loop, "http": args.http, "ws": args.ws},
        "store": _redacted(args.store),
        "redis": args.redis,
        "games": args.games,
        "people": 2 * args.games,
        "rounds": args.rounds,
        "interval_s": args.interval,
        "ramp_s": args.ramp,
        "seed": args.seed,
        "priority": args.priority,
        "games_completed": len(tally.games),
        "peak_concurrent_games": tally.peak_games(),
        "person_failures": dict(tally.failures),
        "relayed_messages": sum(tally.received.values()),
        "lost": tally.lost(),
        "duplicated": sum(1 for c in tally.received.values() if c > 1),
        "relay_ms": {
            "p50": pct(lat, 0.5),
            "p90": pct(lat, 0.9),
            "p99": pct(lat, 0.99),
            "max": pct(lat, 1.0),
            "mean": round(statistics.fmean(lat), 2) if lat else None,
        },
        "relay_ms_after_ramp": {
            "messages": len(steady),
            "p50": pct(steady, 0.5),
            "p99": pct(steady, 0.99),
            "max": pct(steady, 1.0),
        },
        # arrival (page load) -> in a game: connections, the lobby and a game's start
        "join_ms": {"p50": pct(joins, 0.5), "p99": pct(joins, 0.99), "max": pct(joins, 1.0)},
        "error_frames": dict(tally.errors),
        "wall_s": round(wall, 2),
        "server_cpu_s": round(cpu, 2),  # all server processes, every thread
        "server_waited_for_cpu_s": round(waited, 2),
        "client_cpu_s": round(tally.cpu_s, 2),  # the simulated people share the same cores
    }


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="turinglab bench arena")
    ap.add_argument(
        "--setup", default="turinglab.bench.arena_bench:engine_setup", help="MODULE:FUNCTION"
    )
    ap.add_argument("--games", type=int, default=50, help="concurrent three-party games")
    ap.add_argument("--rounds", type=int, default=4, help="messages per conversation side")
    ap.add_argument("--interval", type=float, default=2.0, help="seconds between messages")
    ap.add_argument("--ramp", type=float, default=5.0, help="people arrive over this many s")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--profile", help="write each server's CPU profile (cProfile) to FILE.<i>")
    ap.add_argument(
        "--store", help="write every game to this store (SQLite path or postgresql:// URL)"
    )
    ap.add_argument("--processes", type=int, default=1, help="server processes (needs --redis)")
    ap.add_argument("--redis", help="redis:// URL joining several server processes")
    ap.add_argument("--clients", type=int, default=1, help="client processes for the people")
    ap.add_argument(
        "--priority",
        type=int,
        help="nice value of the servers' and clients' sessions (Linux autogroups; "
        "negative needs root): on a shared machine, measure the arena, not its neighbours",
    )
    ap.add_argument("--loop", help="uvicorn event loop (default: as `serve` runs it)")
    ap.add_argument("--http", help="uvicorn HTTP implementation (likewise)")
    ap.add_argument("--ws", help="uvicorn websocket implementation (likewise)")
    ap.add_argument("--serve", help=argparse.SUPPRESS)
    ap.add_argument("--client", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--base", action="append", default=[], help=argparse.SUPPRESS)
    ap.add_argument("--start-at", type=float, default=0.0, help=argparse.SUPPRESS)
    ap.add_argument("--port", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--ns", default="bench", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    for name in ("games", "rounds", "processes", "clients"):
        if getattr(args, name) < 1:
            ap.error(f"--{name} must be at least 1, not {getattr(args, name)}")
    if args.client is not None:  # a client process: the people only, no server imports
        script = Script(args.rounds, args.interval, args.ramp, args.seed)
        tally = asyncio.run(play(_my_people(args, args.base), script, args.start_at))
        print(tally.to_json())
        return
    from turinglab.arena.serve import uvicorn_options

    defaults = uvicorn_options()
    for name in ("loop", "http", "ws"):
        setattr(args, name, getattr(args, name) or defaults[name])
    if args.serve:
        options = ServerOptions(
            args.serve, args.port, args.store, args.redis, args.ns,
            args.loop, args.http, args.ws, args.profile,
        )  # fmt: skip
        serve(options)
        return
    print(json.dumps(asyncio.run(run(args)), indent=2))


if __name__ == "__main__":
    main()
