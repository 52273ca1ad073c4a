"""Blind matching against real server processes under realistic arrivals: does anyone time out
for want of a partner, and does the wait to a game differ by the witness kind? Prints JSON.

    turinglab bench arena --blind 5:20 --arrivals bursts --people 60 --processes 2 \\
        --store postgresql://postgres@127.0.0.1:5432/arena_blind_bench

One to N `serve`-like processes of the engine's two-party game (an AI witness of scripted chat
turns, no typing delay: only matching is measured) under a study design (`--blind MIN:MAX`, the
drawn wait; the match window is MIN, arena/core/match_design.py); with two or more, joined by a
redis-server of the benchmark's own and a PostgreSQL store. People arrive on a schedule fixed
by `--seed` (bench/witness_supply.py: `bursts` of 2–10 within 5 s, `steady`, `trickle`), each
on a process of their own (as a sticky load balancer would send them), and play `--rounds`
rounds: an interrogator asks one question, waits for the answer, ends and gives a verdict; a
person witness answers. With `--rejoin-p` a person waiting closes the page and joins again on
another process 1–3 s later (their draw is kept: arena/cluster/shared_blind.py).

Reported: who timed out for want of a partner (`no-match`, the target is none), who finished
with witness rounds excused (the design's `short_of_witnesses: finish`), and each
interrogation's join-to-game wait by witness kind (a person: another simulated person
witnessed that game), with a two-sample KS p value (few games: a check, not the proof, which
is tests/arena/cluster/test_arena_cluster_blind_bursts.py at n ≥ 1,000).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import secrets
import signal
import socket
import statistics
import subprocess
import sys
import time
from collections import Counter, deque
from dataclasses import dataclass, field
from typing import Any

import aiohttp

from turinglab.bench import arena_services as svc

MODE = "two-party"
ENDS = ("no-match", "rounds-done", "survey-saved")  # a person's last lobby states


def blind_waits(text: str) -> tuple[float, float]:
    """--blind's "MIN:MAX" (seconds), checked."""
    low, sep, high = text.partition(":")
    try:
        waits = (float(low), float(high))
    except ValueError:
        waits = (-1.0, -1.0)
    if not sep or not 0 <= waits[0] <= waits[1]:
        raise ValueError(f"--blind {text!r}: give the drawn wait's range as MIN:MAX seconds")
    return waits


def blind_setup(args: Any) -> Any:
    """The engine's two-party game under the study design the options give."""
    from turinglab.agents.scripted import ScriptedAgent
    from turinglab.arena.core.match_design import MatchDesign
    from turinglab.arena.core.modes import ArenaSettings, ArenaSetup
    from turinglab.arena.modes.engine_modes import interrogation_mode
    from turinglab.games.two_party import TwoPartyExperiment

    cfg = TwoPartyExperiment.model_validate(
        {
            "game": "two-party",
            "interrogators": ["person"],
            "human_witnesses": ["person"],
            "ai_witnesses": [{"agent": "bot", "persona": "none"}],
            "typing_delay": False,
            "time_limit_s": 120,
        }
    )
    bot = ScriptedAgent("bot", ["hi, yes i'm here", "from leeds, you?", "lol no"], cycle=True)
    low, high = blind_waits(args.blind)
    design = MatchDesign(
        human_witness_share=args.share,
        wait_min_s=low,
        wait_max_s=high,
        witness_wait_s=args.witness_wait,
    )
    settings = ArenaSettings(
        rounds=args.rounds, max_wait_s=args.max_wait, seed=args.study_seed, design=design,
        consents_per_address=1_000_000,  # every simulated person comes from 127.0.0.1
    )  # fmt: skip
    mode = interrogation_mode(MODE, "Two-party", cfg)
    return ArenaSetup([mode], {"bot": bot}, {"bot": "BOT"}, settings)


def serve(args: Any) -> None:
    import uvicorn

    from turinglab.arena.core.store_bridge import ArenaStore
    from turinglab.arena.web.app import create_app
    from turinglab.store.database import Store

    setup = blind_setup(args)
    kept = None
    if args.store:
        kept = ArenaStore(Store(args.store), setup, worker=f"bench:{args.port}")
    app = create_app(
        setup,
        admin_password=secrets.token_urlsafe(12),
        store=kept,
        redis_url=args.redis,
        secret="bench secret" if args.redis else None,
        namespace=args.ns,
    )
    config = uvicorn.Config(app, log_level="warning", backlog=4096)
    uvicorn.Server(config).run(sockets=[socket.socket(fileno=args.fd)])


@dataclass
class Tally:
    waits: list[tuple[str, float]] = field(default_factory=list)  # (game, interrogator's wait)
    witnessed: set[str] = field(default_factory=set)  # games a simulated person witnessed
    ends: Counter[str] = field(default_factory=Counter)  # each person's last state
    rounds_played: list[int] = field(default_factory=list)
    rejoins: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    pages: dict[int, Page] = field(default_factory=dict)  # the people not finished yet


class Page:
    """One person's page: a cookie of their own, one socket at a time."""

    def __init__(self, http: aiohttp.ClientSession, base: str) -> None:
        self.http, self.base = http, base
        self.ws: aiohttp.ClientWebSocketResponse | None = None
        self.step = "consent"  # what the person is doing or waiting for (told if stuck)
        self.seen: deque[str] = deque(maxlen=8)  # the last frames' types and states

    async def open(self, base: str) -> dict[str, Any]:
        self.base = base
        self.ws = await self.http.ws_connect(base.replace("http", "ws") + "/ws")
        return await self.recv()

    async def recv(self, timeout: float = 600.0) -> dict[str, Any]:
        assert self.ws is not None
        async with asyncio.timeout(timeout):
            found: dict[str, Any] = await self.ws.receive_json()
            self.seen.append(":".join(str(found.get(k, "")) for k in ("type", "state", "role")))
            return found

    async def send(self, **frame: Any) -> None:
        assert self.ws is not None
        await self.ws.send_json(frame)

    async def until(self, *types: str, timeout: float = 600.0) -> dict[str, Any]:
        self.step = f"waiting for {'/'.join(types)} on {self.base}"
        while True:
            frame = await self.recv(timeout)
            if frame["type"] in types:
                return frame

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()
            self.ws = None


async def person(n: int, at: float, bases: list[str], args: Any, tally: Tally, t0: float) -> None:
    rng = random.Random(f"{args.seed}:{n}")
    await asyncio.sleep(max(0.0, t0 + at - time.time()))
    async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:
        async with http.post(bases[0] + "/consent", json={"consent": True}) as r:
            r.raise_for_status()
        page = Page(http, bases[n % len(bases)])
        tally.pages[n] = page
        await page.open(page.base)
        played, end = 0, "rounds-played"
        try:
            while played < args.rounds:
                outcome = await _one_round(page, bases, rng, args, tally)
                if outcome != "played":
                    end = outcome
                    break
                played += 1
        except (TimeoutError, aiohttp.ClientError) as err:
            end = f"error: {type(err).__name__}"
            tally.errors[type(err).__name__] += 1
        finally:
            await page.close()
    del tally.pages[n]
    tally.ends[end] += 1
    tally.rounds_played.append(played)


async def _one_round(
    page: Page, bases: list[str], rng: random.Random, args: Any, tally: Tally
) -> str:
    """Join, wait (maybe closing the page and joining again elsewhere), play one game."""
    await page.send(type="join", mode=MODE, consent=True)
    joined = time.time()
    frame: dict[str, Any] = {"type": "joined"}
    if rng.random() < args.rejoin_p:
        await asyncio.sleep(rng.uniform(0.5, 1.5))
        await page.close()  # the page closed while waiting ...
        await asyncio.sleep(rng.uniform(1.0, 3.0))
        others = [b for b in bases if b != page.base] or bases
        frame = await page.open(rng.choice(others))  # ... and came back, maybe elsewhere
        tally.rejoins += 1
        # Seated before the page closed (a slow close on a busy machine): the new socket resumes
        # that game, and a join now would be refused.
        if frame["type"] != "game":
            await page.send(type="join", mode=MODE, consent=True)
            joined = time.time()
    while frame["type"] != "game":
        frame = await page.until("game", "status")
        if frame["type"] == "status" and frame["state"] in ENDS:
            return str(frame["state"])
    if frame["role"] == "interrogator":
        tally.waits.append((frame["game"], time.time() - joined))
        await asyncio.sleep(rng.uniform(0.2, 1.0))
        await page.send(type="message", channel=frame["channels"][0], text="are you a person?")
        await _heard(page, frame)
        await page.send(type="end")
        await page.send(type="verdict", choice="human", confidence=60, reason="quick")
    else:
        tally.witnessed.add(frame["game"])
        heard = await _heard(page, frame)
        await page.send(type="message", channel=heard["channel"], text="yes, tired though")
    while (await page.until("reveal", "status"))["type"] != "reveal":
        pass
    return "played"


async def _heard(page: Page, game: dict[str, Any]) -> dict[str, Any]:
    """The partner's first message: in the game's snapshot if it came while the page was away."""
    for said in game.get("messages", []):
        if said.get("sender") == "them":
            return dict(said)
    while True:
        frame = await page.until("message")
        if frame.get("sender") == "them":
            return frame


def _summary(values: list[float]) -> dict[str, Any]:
    v = sorted(values)
    if not v:
        return {"n": 0}
    return {
        "n": len(v),
        "mean": round(statistics.fmean(v), 2),
        "p10": round(v[int(0.1 * len(v))], 2),
        "p50": round(v[len(v) // 2], 2),
        "p90": round(v[min(len(v) - 1, int(0.9 * len(v)))], 2),
        "max": round(v[-1], 2),
    }


async def run(args: Any) -> dict[str, Any]:
    from scipy.stats import ks_2samp

    from turinglab.bench.witness_supply import ARRIVALS, bursts

    listening = [svc.listening_socket() for _ in range(args.processes)]
    bases = [f"http://127.0.0.1:{s.getsockname()[1]}" for s in listening]
    redis = svc.OwnRedis() if args.processes > 1 else None
    if redis is not None:
        redis.start()
    ns = f"bench-{secrets.token_hex(4)}"
    servers = []
    for sock in listening:
        command = [sys.executable, "-m", "turinglab.bench.arena_blind", "--serve"]
        command += ["--port", str(sock.getsockname()[1]), "--fd", str(sock.fileno()), "--ns", ns]
        command += _passed_on(args) + (["--redis", redis.url] if redis is not None else [])
        servers.append(subprocess.Popen(command, pass_fds=(sock.fileno(),)))
    for sock in listening:
        sock.close()
    tally = Tally()
    try:
        await svc.healthy(bases)
        rng = random.Random(args.seed)
        if args.arrivals == "bursts":  # groups of 2-10 within 5 s, `--burst-gap` apart
            arrivals = bursts(args.people, rng, gap_s=args.burst_gap)
        else:
            arrivals = ARRIVALS[args.arrivals](args.people, rng)
        t0 = time.time() + 1.0
        began = time.perf_counter()
        people = (person(n, at, bases, args, tally, t0) for n, at in enumerate(arrivals))
        with contextlib.suppress(TimeoutError):  # the people left are reported as stuck
            async with asyncio.timeout(args.deadline):
                await asyncio.gather(*people)
        wall = time.perf_counter() - began
    finally:
        for server in servers:
            server.send_signal(signal.SIGINT)
        for server in servers:
            try:
                server.wait(30)
            except subprocess.TimeoutExpired:
                server.kill()
        if redis is not None:
            redis.close()
    person_w = [w for g, w in tally.waits if g in tally.witnessed]
    ai_w = [w for g, w in tally.waits if g not in tally.witnessed]
    ks = float(ks_2samp(person_w, ai_w).pvalue) if person_w and ai_w else None
    return {
        "benchmark": "arena-blind",
        "command": "turinglab bench arena " + " ".join(args.argv),
        "machine": {"cpus": os.cpu_count(), "load_avg_at_end": list(os.getloadavg())},
        "processes": args.processes,
        "store": None if not args.store else args.store.split("://", 1)[0],
        "design": {
            "waits_s": args.blind,
            "match_window_s": float(args.blind.split(":")[0]),
            "human_witness_share": args.share,
            "witness_wait_s": args.witness_wait,
            "max_wait_s": args.max_wait,
        },
        "people": args.people,
        "arrivals": args.arrivals,
        "burst_gap_s": args.burst_gap if args.arrivals == "bursts" else None,
        "rounds": args.rounds,
        "rejoins": tally.rejoins,
        "timed_out_for_want_of_a_partner": tally.ends["no-match"],
        "ends": dict(tally.ends),  # rounds-played; rounds-done: witness rounds excused
        "rounds_played": dict(sorted(Counter(tally.rounds_played).items())),
        "errors": dict(tally.errors),
        # Who had not finished by --deadline: what each was waiting for, its last frames.
        "stuck": [
            {"person": n, "step": page.step, "last_frames": list(page.seen)}
            for n, page in sorted(tally.pages.items())
        ],
        "interrogations": len(tally.waits),
        "person_witness_share": round(len(person_w) / max(1, len(tally.waits)), 3),
        "wait_s_person_witness": _summary(person_w),
        "wait_s_ai_witness": _summary(ai_w),
        "wait_ks_p": None if ks is None else round(ks, 3),
        "wall_s": round(wall, 1),
    }


def _passed_on(args: Any) -> list[str]:
    out = ["--blind", args.blind, "--rounds", str(args.rounds), "--share", str(args.share)]
    out += ["--witness-wait", str(args.witness_wait), "--max-wait", str(args.max_wait)]
    out += ["--study-seed", str(args.study_seed)]
    return out + (["--store", args.store] if args.store else [])


def main(argv: list[str] | None = None) -> None:
    from turinglab.bench.witness_supply import ARRIVALS

    ap = argparse.ArgumentParser(prog="turinglab bench arena --arrivals …")
    ap.add_argument("--blind", metavar="MIN:MAX", default="5:20", help="the drawn wait, s")
    ap.add_argument("--arrivals", choices=sorted(ARRIVALS), default="bursts")
    ap.add_argument("--people", type=int, default=60)
    ap.add_argument("--burst-gap", type=float, default=90.0, help="mean s between bursts")
    ap.add_argument("--rounds", type=int, default=3, help="study rounds per person")
    ap.add_argument("--share", type=float, default=0.5, help="human_witness_share")
    ap.add_argument("--witness-wait", type=float, default=30.0, help="witness_wait_s")
    ap.add_argument("--max-wait", type=float, default=120.0, help="max_wait_s")
    ap.add_argument("--rejoin-p", type=float, default=0.1, help="per wait: close, join again")
    ap.add_argument("--processes", type=int, default=1)
    ap.add_argument("--store", help="postgresql:// URL (needed with --processes > 1)")
    ap.add_argument("--seed", type=int, default=0, help="the arrivals and people")
    ap.add_argument("--deadline", type=float, help="s; who has not finished then is reported")
    ap.add_argument("--study-seed", type=int, default=1, help="the arena's seed (the draws)")
    ap.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--port", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--fd", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--ns", default="bench", help=argparse.SUPPRESS)
    ap.add_argument("--redis", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)
    if args.serve:
        serve(args)
        return
    try:
        high = blind_waits(args.blind)[1]
    except ValueError as err:
        ap.error(str(err))
    if high >= args.max_wait:
        ap.error(f"--blind's longest wait ({high:g} s) must be under --max-wait")
    if args.processes > 1 and not (args.store or "").startswith("postgresql"):
        ap.error("--processes > 1 needs a shared postgresql:// --store")
    if args.people < 2 or args.rounds < 1 or not 0 <= args.rejoin_p <= 1:
        ap.error("--people at least 2, --rounds at least 1, --rejoin-p in [0, 1]")
    print(json.dumps(asyncio.run(run(args)), indent=2))


if __name__ == "__main__":
    main()
