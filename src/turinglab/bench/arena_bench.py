"""Arena load benchmark: realistic simulated people over real websockets against server
processes, with faults injected on request. `turinglab bench arena --help`; prints JSON.

    turinglab bench arena --games 250 --store postgresql://postgres@127.0.0.1:5432/arena_bench
    turinglab bench arena --games 500 --processes 2 --store postgresql://… --fault sigkill

`--games G` is the concurrency aimed at: 2·G people arrive over `--ramp` seconds on a schedule
fixed in advance (open loop) and each plays study rounds back to back (arena_people.py), so
about G three-party games run at once; the report says how many truly did (peak and
time-averaged). The game is the engine's three-party game (5-minute games, 8 rounds each by
default) with a scripted AI witness that answers at once from real chat turns, behind the
arena's own typing-delay model (the paper's delays, shown as a person's typing timeline).

The servers and the people's client processes each run in a session of their own; with
`--processes N` (N > 1) the servers are joined by a redis-server the benchmark starts for
itself. CPU is read from /proc: the servers, the benchmark's Redis, and the PostgreSQL
backends serving the store's database (arena_services.py). After the run the store is audited
in SQL (arena_audit.py).

Faults (`--fault`, repeatable; the first `--fault-after` seconds after the ramp, then every
`--fault-every` seconds): `sigkill` kills the last server process (the others take its games
over), `redis-restart` restarts the benchmark's Redis empty, `pg-outage` refuses and cuts every
PostgreSQL connection for 5 s (through a proxy of the benchmark's own).
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import json
import logging
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
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from turinglab.bench import arena_services as svc
from turinglab.bench.arena_blind import blind_waits
from turinglab.bench.arena_people import Script, play
from turinglab.bench.arena_tally import Tally

FAULTS = ("sigkill", "redis-restart", "pg-outage")
PG_OUTAGE_S = 5.0


def engine_setup(
    game_s: float, rounds: int, max_wait_s: float, seed: int, blind: str | None = None
) -> Any:
    """The engine's three-party game (games/three_party.py): one person interrogates, one
    witnesses, and a scripted AI witness answers with real chat turns, at once, behind the
    arena's typing-delay model (the paper's delays): what is measured is the arena, not a
    model. Default frame rate limits (not the per-address consent limit: every simulated person
    shares one address); open matching (people are paired as they wait), or with
    `blind` ("MIN:MAX" s) a study design's blind matching, each wait drawn from that range."""
    from turinglab.agents.scripted import ScriptedAgent
    from turinglab.arena.core.matchmaking_wait import MatchDesign
    from turinglab.arena.core.modes import ArenaSettings, ArenaSetup
    from turinglab.arena.modes.engine_modes import interrogation_mode
    from turinglab.bench.chat_texts import chat_turns
    from turinglab.games.three_party import ThreePartyExperiment

    cfg = ThreePartyExperiment.model_validate(
        {
            "game": "three-party",
            "interrogators": ["person"],
            "human_witnesses": ["person"],
            "ai_witnesses": [{"agent": "bot", "persona": "none"}],
            "typing_delay": True,
            "time_limit_s": game_s,
        }
    )
    replies = list(random.Random(seed).sample(chat_turns(), 200))
    bot = ScriptedAgent("bot", replies, cycle=True)
    mode = interrogation_mode("three-party", "Three-party", cfg)
    design = None
    if blind is not None:
        low, high = blind_waits(blind)
        design = MatchDesign(wait_min_s=low, wait_max_s=high)
    settings = ArenaSettings(
        rounds=rounds, max_wait_s=max_wait_s, seed=seed, design=design,
        consents_per_address=1_000_000,  # every simulated person comes from 127.0.0.1
    )  # fmt: skip
    return ArenaSetup([mode], {"bot": bot}, {"bot": "BOT"}, settings)


@dataclass(frozen=True)
class ServerOptions:
    port: int
    fd: int  # the listening socket the benchmark bound (no port race)
    store: str | None
    redis: str | None
    ns: str
    loop: str
    http: str
    ws: str
    profile: str | None  # write the server's CPU profile here
    game_s: float
    rounds: int
    max_wait_s: float
    study_seed: int
    blind: str | None  # a study design's blind matching, waits drawn in "MIN:MAX" s


def serve(o: ServerOptions) -> None:
    import uvicorn

    from turinglab.arena.core.store_bridge import ArenaStore
    from turinglab.arena.web.app import create_app
    from turinglab.arena.web.serve import uvicorn_options
    from turinglab.heap import settle_heap
    from turinglab.store.database import Store

    setup = engine_setup(o.game_s, o.rounds, o.max_wait_s, o.study_seed, o.blind)
    if os.environ.get("TURINGLAB_BENCH_TRACE"):  # the cluster's decisions, for tracing a run
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter(f"%(asctime)s {o.port} %(message)s"))
        for name in (
            "turinglab.arena.cluster.cluster",
            "turinglab.arena.cluster.cluster_store_routes",
        ):
            trace = logging.getLogger(name)
            trace.setLevel(logging.DEBUG)
            trace.addHandler(handler)
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
        options = {**uvicorn_options(), "loop": o.loop, "http": o.http, "ws": o.ws}
        config = uvicorn.Config(app, log_level="warning", backlog=4096, **options)
        uvicorn.Server(config).run(sockets=[socket.socket(fileno=o.fd)])
    finally:
        if profile is not None and o.profile:
            profile.disable()
            profile.dump_stats(o.profile)
        if kept is not None:
            kept.close()


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


def _server_command(
    args: Any, sock: socket.socket, ns: str, i: int, store: str | None, redis: str | None
) -> list[str]:
    command = [sys.executable, "-m", "turinglab.bench.arena_bench", "--serve"]
    command += ["--port", str(sock.getsockname()[1]), "--fd", str(sock.fileno())]
    command += ["--ns", ns, "--study-seed", str(args.study_seed)]
    command += ["--loop", args.loop, "--http", args.http, "--ws", args.ws]
    command += ["--game-s", str(args.game_s), "--rounds", str(args.rounds)]
    command += ["--max-wait", str(args.max_wait)]
    if args.blind:
        command += ["--blind", args.blind]
    if args.profile:  # the server's own profile, for finding where it spends its time
        command += ["--profile", f"{args.profile}.{i}"]
    if store:
        command += ["--store", store]
    if redis:
        command += ["--redis", redis]
    return command


def _client_command(args: Any, bases: list[str], c: int, start_at: float) -> list[str]:
    return [
        *(sys.executable, "-m", "turinglab.bench.arena_bench", "--client", str(c)),
        *("--clients", str(args.clients), "--games", str(args.games)),
        *("--rounds", str(args.rounds), "--ramp", str(args.ramp), "--seed", str(args.seed)),
        *("--reconnect-p", str(args.reconnect_p), "--abandon-p", str(args.abandon_p)),
        *("--max-wait", str(args.max_wait), "--start-at", str(start_at)),
        *("--pace", str(args.pace)),
        *(arg for base in bases for arg in ("--base", base)),
    ]


def _my_people(args: Any) -> list[tuple[int, float]]:
    """Client `args.client`'s share: (person, arrival offset), every person's arrival drawn
    from the seed alone (the schedule does not depend on the server)."""
    arrivals = random.Random(args.seed)
    people = [(n, arrivals.uniform(0, args.ramp)) for n in range(2 * args.games)]
    return [(n, at) for n, at in people if n % args.clients == args.client]


def _pct(values: list[float], p: float) -> float | None:
    return round(values[min(len(values) - 1, int(p * len(values)))], 1) if values else None


def _summary(values: list[float]) -> dict[str, Any]:
    v = sorted(values)
    return {
        "n": len(v),
        "p50": _pct(v, 0.5),
        "p90": _pct(v, 0.9),
        "p99": _pct(v, 0.99),
        "max": _pct(v, 1.0),
        "mean": round(statistics.fmean(v), 1) if v else None,
    }


class _Faults:
    """Injects the faults asked for, one after another, on a thread of their own."""

    def __init__(self, args: Any, servers: list[Any], redis: Any, proxy: Any, t0: float):
        self.plan = [
            (t0 + args.ramp + args.fault_after + k * args.fault_every, kind)
            for k, kind in enumerate(args.fault)
        ]
        self.servers, self.redis, self.proxy, self.t0 = servers, redis, proxy, t0
        self.done: list[dict[str, Any]] = []
        self.killed_cpu = 0.0

    async def run(self) -> None:
        for at, kind in self.plan:
            await asyncio.sleep(max(0.0, at - time.time()))
            began = time.time()
            await asyncio.to_thread(self._inject, kind)
            took = time.time() - began
            self.done.append(
                {"fault": kind, "at_s": round(began - self.t0, 1), "took_s": round(took, 2)}
            )

    def _inject(self, kind: str) -> None:
        if kind == "sigkill":
            victim = self.servers[-1]
            self.killed_cpu = svc.cpu_s(victim.pid)
            victim.send_signal(signal.SIGKILL)
        elif kind == "redis-restart":
            self.redis.restart()
        elif kind == "pg-outage":
            self.proxy.outage(PG_OUTAGE_S)


def _check(args: Any) -> None:
    if args.processes > 1 and args.redis is None:
        args.redis = "own"
    if "redis-restart" in args.fault and args.redis != "own":
        raise SystemExit("error: --fault redis-restart restarts the benchmark's own Redis only")
    if "sigkill" in args.fault and args.processes < 2:
        raise SystemExit("error: --fault sigkill needs --processes 2 or more (one takes over)")
    if "pg-outage" in args.fault and not (args.store or "").startswith("postgresql"):
        raise SystemExit("error: --fault pg-outage needs a postgresql:// --store")
    if args.processes > 1 and not (args.store or "").startswith("postgresql"):
        raise SystemExit("error: --processes > 1 needs a shared postgresql:// --store")


async def run(args: Any) -> dict[str, Any]:
    from turinglab.arena.core.store_bridge import arena_run_id
    from turinglab.bench.arena_audit import audit_store
    from turinglab.bench.chat_texts import distribution

    _check(args)
    load_start = [round(x, 2) for x in os.getloadavg()]
    # Bound here and handed down: a port chosen free and bound later by the server could be
    # taken meanwhile by an outgoing connection (it was, once: "address already in use").
    listening = [svc.listening_socket() for _ in range(args.processes)]
    ports = [int(sock.getsockname()[1]) for sock in listening]
    bases = [f"http://127.0.0.1:{port}" for port in ports]
    ns = f"bench-{secrets.token_hex(4)}"
    redis = svc.OwnRedis() if args.redis == "own" else None
    if redis is not None:
        redis.start()
    redis_url = redis.url if redis is not None else args.redis
    proxy = svc.PgProxy(args.store) if "pg-outage" in args.fault else None
    store = proxy.url if proxy is not None else args.store
    pg = None
    if (args.store or "").startswith("postgresql"):
        pg = svc.PgBackends(args.store, urlsplit(args.store).path.lstrip("/"))
    # Each server and client process in a session of its own: Linux shares the CPU fairly
    # between sessions (autogroups) first, so on a machine busy with other work the people's
    # CPU would otherwise come out of the servers' share.
    servers = [
        subprocess.Popen(
            _server_command(args, sock, ns, i, store, redis_url),
            start_new_session=True,
            pass_fds=(sock.fileno(),),
        )
        for i, sock in enumerate(listening)
    ]
    for sock in listening:  # the servers hold them now; one that dies closes its port
        sock.close()
    for server in servers:
        _prioritise(server.pid, args.priority)
    if redis is not None and redis.proc is not None:
        _prioritise(redis.proc.pid, args.priority)
    clients: list[subprocess.Popen[str]] = []
    tally = Tally()
    faults = None
    try:
        await svc.healthy(bases)
        start_at = time.time() + 3.0  # every client process is up and waiting by then
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
        if pg is not None:
            pg.__enter__()
        cpu0 = sum(svc.cpu_s(s.pid) for s in servers)
        waited0 = sum(svc.waited_s(s.pid) for s in servers)
        redis0 = redis.cpu() if redis is not None else 0.0
        own0 = time.process_time()
        faults = _Faults(args, servers, redis, proxy, start_at)
        injecting = asyncio.create_task(faults.run())
        await asyncio.sleep(max(0.0, start_at - time.time()))
        t0 = time.perf_counter()
        outputs = await asyncio.gather(*(asyncio.to_thread(c.communicate) for c in clients))
        wall = time.perf_counter() - t0
        injecting.cancel()
        cpu = sum(svc.cpu_s(s.pid) for s in servers) + faults.killed_cpu - cpu0
        waited = sum(svc.waited_s(s.pid) for s in servers) - waited0
        redis_cpu = (redis.cpu() - redis0) if redis is not None else 0.0
        own = time.process_time() - own0  # the PostgreSQL proxy, when there is one
        if pg is not None:
            pg.__exit__(None, None, None)
        for client, (out, _err) in zip(clients, outputs, strict=True):
            if client.returncode != 0:
                raise SystemExit(f"error: a client process failed (exit {client.returncode})")
            tally.merge(Tally.from_json(out))
        load_end = [round(x, 2) for x in os.getloadavg()]
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
        if redis is not None:
            redis.close()
        if proxy is not None:
            proxy.close()

    audit = None
    if args.store:
        run_id = arena_run_id(
            engine_setup(args.game_s, args.rounds, args.max_wait, args.study_seed, args.blind)
        )
        audit = audit_store(args.store, run_id, tally.acked)
    ramped = start_at + args.ramp
    conc = tally.concurrency()
    game_s = sum(b - a for a, b in tally.games)
    pg_cpu = pg.cpu() if pg is not None else 0.0
    total = cpu + pg_cpu + redis_cpu
    told = tally.told_after_abandon_s()
    return {
        "benchmark": "arena-realistic",
        "command": "turinglab bench arena " + " ".join(args.argv),
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "load_avg_at_start": load_start,  # 1, 5, 15 min: other work on the box
            "load_avg_at_end": load_end,
        },
        "processes": args.processes,
        "clients": args.clients,
        "server": {"loop": args.loop, "http": args.http, "ws": args.ws},
        "store": svc_redacted(args.store),
        "redis": "own redis-server" if redis is not None else svc_redacted(args.redis),
        "priority": args.priority,
        "people": {
            "games_aimed_at": args.games,
            "people": 2 * args.games,
            "rounds": args.rounds,
            "game_s": args.game_s,
            "ramp_s": args.ramp,
            "reconnect_p": args.reconnect_p,
            "abandon_p": args.abandon_p,
            "pace": args.pace,
            "seed": args.seed,
            "study_seed": args.study_seed,
            "blind_waits_s": args.blind,  # None: open matching
            "message_chars": distribution(),
        },
        "faults": faults.done if faults is not None else [],
        "concurrent_games": conc,
        "games_played": len(tally.games),
        "outcomes": dict(tally.outcomes),  # per person and game, as each person saw it
        "store_audit": audit,
        "relay_ms": _summary([ms for _, ms in tally.relay_ms]),
        "relay_ms_after_ramp": _summary([ms for at, ms in tally.relay_ms if at >= ramped]),
        "shown_as_sent_ms": _summary([ms for _, ms in tally.ack_ms]),
        # join -> game shown, from the later of the game's two joins (the arena's part)
        "join_ms": _summary(tally.match_ms()),
        # each person's own wait, a partner's arrival included: first round, later rounds
        "join_wait_ms_first_round": _summary(
            [(b - a) * 1000 for _, r, a, b in tally.joins if r == 0]
        ),
        "join_wait_ms_later_rounds": _summary([(b - a) * 1000 for _, r, a, b in tally.joins if r]),
        "arrival_to_lobby_ms": _summary(tally.lobby_ms),
        "relayed_messages": sum(tally.received.values()),
        "lost": len(tally.lost()),
        "lost_ids": tally.lost()[:20],
        "duplicated": tally.duplicated(),
        "longest_wait_without_a_frame_s": round(tally.longest_owed[0], 2),
        "longest_wait_was_for": tally.longest_owed[1],
        "longest_wait_began_s": round(tally.longest_owed[2] - start_at, 1),  # beside `faults`
        "longest_wait_person": tally.longest_owed[3],
        # an input sent until it was answered, whatever the person was told meanwhile
        "longest_input_answer_s": round(tally.longest_input[0], 2),
        "longest_input_was": tally.longest_input[1],
        "longest_input_began_s": round(tally.longest_input[2] - start_at, 1),
        "longest_input_person": tally.longest_input[3],
        "long_waits": tally.long_waits[:20],  # their pages' state at the end
        "odd_frames": [  # unexpected mid-game: another game's snapshot, a lobby status
            {**odd, "at": round(odd["at"] - start_at, 1)} for odd in tally.odd_frames[:20]
        ],
        "abandons": len(tally.left),
        "told_after_abandon_s": {  # and the game of the slowest, to trace it
            "n": len(told),
            "max": round(told[-1][0], 1) if told else None,
            "max_game": told[-1][1] if told else None,
        },
        "error_frames": dict(tally.errors),
        # who was left waiting: join sent (s after the start), round, statuses seen after it
        "left_waiting": [
            {"joined_s": round(t - start_at, 1), "round": r, "statuses": seen, "person": who}
            for t, r, seen, who in sorted(tally.stuck)[:30]
        ],
        "counts": dict(tally.counts),
        "person_failures": dict(tally.failures),
        "max_client_late_s": round(tally.max_late_s, 3),
        "wall_s": round(wall, 1),
        "cpu_s": {
            "servers": round(cpu, 2),
            "postgres_backends": round(pg_cpu, 2),
            "redis": round(redis_cpu, 2),
            "clients": round(tally.cpu_s, 2),  # the simulated people share the same cores
            "benchmark_and_proxy": round(own, 2),
            "servers_waited_for_cpu": round(waited, 2),
        },
        "game_seconds": round(game_s, 1),
        # server + PostgreSQL + Redis CPU per second of one game: cores per concurrent game
        "cores_per_1000_concurrent_games": round(1000 * total / game_s, 3) if game_s else None,
    }


def svc_redacted(url: str | None) -> str | None:
    return None if url is None else url.split("://", 1)[0] if "://" in url else "sqlite"


def main(argv: list[str] | None = None) -> None:
    given = list(sys.argv[1:] if argv is None else argv)
    if any(a == "--arrivals" or a.startswith("--arrivals=") for a in given):
        from turinglab.bench.arena_blind import main as blind_main  # two-party blind study

        blind_main(given)
        return
    ap = argparse.ArgumentParser(prog="turinglab bench arena")
    ap.add_argument("--games", type=int, default=50, help="concurrent three-party games aimed at")
    ap.add_argument("--rounds", type=int, default=8, help="study rounds per person")
    ap.add_argument("--game-s", type=float, default=300.0, help="each game's time limit")
    ap.add_argument("--ramp", type=float, default=60.0, help="people arrive over this many s")
    ap.add_argument("--reconnect-p", type=float, default=0.02, help="per person and game")
    ap.add_argument("--abandon-p", type=float, default=0.01, help="per person and game")
    ap.add_argument("--max-wait", type=float, default=60.0, help="lobby wait before no-match")
    ap.add_argument(
        "--blind",
        metavar="MIN:MAX",
        help="a study design's blind matching, each wait drawn in MIN..MAX s (default: open);"
        " with --arrivals steady|bursts|trickle: the two-party blind study instead"
        " (bench/arena_blind.py: timeouts and waits by witness kind)",
    )
    ap.add_argument(
        "--pace", type=float, default=1.0, help="scale people's reading/typing times (tests)"
    )
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--study-seed", type=int, help="the arena's seed (default: a fresh one)")
    ap.add_argument("--profile", help="write each server's CPU profile (cProfile) to FILE.<i>")
    ap.add_argument("--store", help="store every game here (SQLite path or postgresql:// URL)")
    ap.add_argument("--processes", type=int, default=1, help="server processes")
    ap.add_argument("--redis", help="redis:// URL joining the processes (default: its own)")
    ap.add_argument("--clients", type=int, default=1, help="client processes for the people")
    ap.add_argument("--fault", action="append", default=[], choices=FAULTS)
    ap.add_argument("--fault-after", type=float, default=20.0, help="first fault: s after ramp")
    ap.add_argument("--fault-every", type=float, default=40.0, help="s between faults")
    ap.add_argument(
        "--priority",
        type=int,
        help="nice value of the servers' and clients' sessions (Linux autogroups; "
        "negative needs root): on a shared machine, measure the arena, not its neighbours",
    )
    ap.add_argument("--loop", help="uvicorn event loop (default: as `serve` runs it)")
    ap.add_argument("--http", help="uvicorn HTTP implementation (likewise)")
    ap.add_argument("--ws", help="uvicorn websocket implementation (likewise)")
    ap.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--client", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--base", action="append", default=[], help=argparse.SUPPRESS)
    ap.add_argument("--start-at", type=float, default=0.0, help=argparse.SUPPRESS)
    ap.add_argument("--port", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--fd", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--ns", default="bench", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)
    for name in ("games", "rounds", "processes", "clients"):
        if getattr(args, name) < 1:
            ap.error(f"--{name} must be at least 1, not {getattr(args, name)}")
    if args.rounds < 2:  # rounds.py: half of them as witness, so 1 round is never a witness
        ap.error("--rounds must be at least 2 (half of a person's rounds are as a witness)")
    if args.game_s < 5 or args.ramp < 0 or not 0 < args.pace <= 10:
        ap.error("--game-s must be at least 5, --ramp not negative, --pace in (0, 10]")
    if not (0 <= args.reconnect_p <= 1 and 0 <= args.abandon_p <= 1):
        ap.error("--reconnect-p and --abandon-p are probabilities (0 to 1)")
    if args.blind is not None:
        try:
            high = blind_waits(args.blind)[1]
        except ValueError as err:
            ap.error(str(err))
        if high >= args.max_wait:
            ap.error(f"--blind's longest wait ({high:g} s) must be under --max-wait")
    if args.client is not None:  # a client process: the people only, no server imports
        script = Script(
            args.rounds, args.reconnect_p, args.abandon_p, args.seed, args.max_wait, args.pace
        )
        tally = asyncio.run(play(_my_people(args), args.base, script, args.start_at))
        print(tally.to_json())
        return
    from turinglab.arena.web.serve import uvicorn_options

    defaults = uvicorn_options()
    for name in ("loop", "http", "ws"):
        setattr(args, name, getattr(args, name) or defaults[name])
    if args.study_seed is None:
        args.study_seed = secrets.randbelow(2**31)  # a run of its own in the store
    if args.serve:
        options = ServerOptions(
            args.port, args.fd, args.store, args.redis, args.ns, args.loop, args.http, args.ws,
            args.profile, args.game_s, args.rounds, args.max_wait, args.study_seed, args.blind,
        )  # fmt: skip
        serve(options)
        return
    print(json.dumps(asyncio.run(run(args)), indent=2))


if __name__ == "__main__":
    main()
