"""Redis cost of a relayed input: what one message costs when the sender's socket is on a
process other than the one playing their game (cluster.py: `proc:<owner>` in, `to:<id>` out).

    PYTHONPATH=src:tests .venv/bin/python benchmarks/arena_relay.py --exchanges 200 \
        --out benchmarks/arena_relay.json              # ~15 s
    ... --exchanges 200 --one-remote --out benchmarks/arena_relay_one_remote.json

Two arena servers (uvicorn, each in a thread with its own event loop, as in the tests) share
a redis-server of the benchmark's own (so `INFO commandstats` counts only them). Two people
are matched on the three-party test game; then both sockets are moved to the process that
does NOT play the game, so every input they send is relayed. Each exchange: the interrogator
asks both witnesses, the person witness answers (3 relayed inputs). Reported per relayed
input: Redis commands by type (INFO commandstats delta, less an idle window of the same
length: heartbeats and ticks), client round trips (pipelines sent plus single commands, from
the servers' own redis clients) per process, and latency: send -> the other person's page
shows it (one relay each way), p50/p99; and client frames parsed (pydantic) per input.

`--one-remote`: only the interrogator's page is moved off the owner (the usual case: a game is
played where one of its people is); the exchange's whole cost, the local witness's answer
included, is divided by its 2 relayed inputs."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import statistics
import sys
import time
import timeit
from pathlib import Path
from typing import Any

import redis
import redis.asyncio as aioredis

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from arena_fixtures import ADMIN_PASSWORD, Person, make_setup, serving_in_thread
from turinglab.arena import create_app
from turinglab.arena.core import frames as F
from turinglab.bench.arena_services import OwnRedis

# No frame rate limit: the benchmark types faster than a person may.
SETTINGS = {"ai_after_s": 600, "frames_per_s": 1000.0, "frame_burst": 1000}
TRIPS: dict[str, int] = {}  # "<loop id> pipeline" / "<loop id> <COMMAND>" -> count


def _count_round_trips() -> None:
    """Count what each server's Redis client sends: a pipeline is one round trip, and so is
    each command sent alone (pub/sub listening aside)."""
    pipe_exec = aioredis.client.Pipeline.execute
    single = aioredis.Redis.execute_command

    async def execute(self: Any, *a: Any, **k: Any) -> Any:
        loop = id(asyncio.get_running_loop())
        TRIPS[f"{loop} pipeline"] = TRIPS.get(f"{loop} pipeline", 0) + 1
        for args, _options in self.command_stack:  # which process sends what
            what = str(args[0]).upper()
            if what == "PUBLISH":
                what += " " + str(args[1]).rsplit(":", 2)[-2] + ":"  # proc: or to:
            TRIPS[f"{loop} in pipeline {what}"] = TRIPS.get(f"{loop} in pipeline {what}", 0) + 1
        return await pipe_exec(self, *a, **k)

    async def execute_command(self: Any, *args: Any, **k: Any) -> Any:
        if not isinstance(self, aioredis.client.Pipeline):
            key = f"{id(asyncio.get_running_loop())} {str(args[0]).upper()}"
            TRIPS[key] = TRIPS.get(key, 0) + 1
        return await single(self, *args, **k)

    parse = F.parse_client_frame

    def counted_parse(raw: str) -> Any:
        TRIPS["0 parse"] = TRIPS.get("0 parse", 0) + 1
        return parse(raw)

    F.parse_client_frame = counted_parse
    aioredis.client.Pipeline.execute = execute  # type: ignore[method-assign]
    aioredis.Redis.execute_command = execute_command  # type: ignore[method-assign]


def commandstats(url: str) -> dict[str, int]:
    client = redis.Redis.from_url(url)
    stats = client.info("commandstats")
    client.close()
    return {k.removeprefix("cmdstat_"): int(v["calls"]) for k, v in stats.items()}


def _delta(after: dict[str, int], before: dict[str, int]) -> dict[str, int]:
    return {k: after[k] - before.get(k, 0) for k in after if after[k] != before.get(k, 0)}


def _pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p * len(ordered)))]


async def _exchanges(judge: Person, witness: Person, n: int, lat: list[float]) -> None:
    for turn in range(n):
        t0 = time.perf_counter()
        for ch in ("A", "B"):
            await judge.send(type="message", channel=ch, text=f"question {turn} for {ch}")
        heard = await witness.until("message", sender="them")
        lat.append(time.perf_counter() - t0)
        t1 = time.perf_counter()
        await witness.send(type="message", channel="A", text=f"answer {turn}: {heard['text']}")
        got: dict[str, float] = {}
        while len(got) < 2:  # the person's answer, and the AI witness's
            frame = await judge.until("message", sender="them")
            got[frame["channel"]] = time.perf_counter() - t1
        lat.append(got[heard["text"][-1]])  # the person's, on the channel they were asked on


async def run(args: Any) -> dict[str, Any]:
    own = OwnRedis()
    own.start()
    url = own.url
    kw = dict(redis_url=url, secret="bench secret", namespace="relay-bench")
    apps = [create_app(make_setup(**SETTINGS), admin_password=ADMIN_PASSWORD, **kw)]
    apps.append(create_app(make_setup(**SETTINGS), admin_password=ADMIN_PASSWORD, **kw))
    try:
        with serving_in_thread(apps[0]) as b0, serving_in_thread(apps[1]) as b1:
            bases = [b0, b1]
            a, b = Person(b0), Person(b1)
            try:
                for p in (a, b):
                    await p.connect()
                await a.send(type="join", mode="three-party", consent=True)
                await a.until("status")
                await b.send(type="join", mode="three-party", consent=True)
                ga = await a.until("game")
                await b.until("game")
                owner = next(i for i, app in enumerate(apps) if ga["game"] in _games(app))
                relay_at = bases[1 - owner]
                # Both pages now on the process not playing the game (or, --one-remote,
                # the interrogator's only: the other stays on the owner).
                judge0 = a if ga["role"] == "interrogator" else b
                for p in (a, b):
                    if p.base != relay_at and not (args.one_remote and p is not judge0):
                        await p.drop()
                        p.base = relay_at
                        first = await p.connect()
                        if first["type"] != "game":
                            await p.until("game")
                judge, witness = (a, b) if ga["role"] == "interrogator" else (b, a)
                if args.one_remote and judge.base != relay_at:  # already on the owner: swap
                    for p in (judge, witness):
                        await p.drop()
                        p.base = relay_at if p is judge else bases[owner]
                        first = await p.connect()
                        if first["type"] != "game":
                            await p.until("game")
                await asyncio.sleep(1.0)
                # An idle window first: what the processes send with nobody typing.
                s0, t0 = commandstats(url), dict(TRIPS)
                started = time.perf_counter()
                lat: list[float] = []
                await _exchanges(judge, witness, args.exchanges, lat)
                took = time.perf_counter() - started
                s1, t1 = commandstats(url), dict(TRIPS)
                await asyncio.sleep(took)
                s2, t2 = commandstats(url), dict(TRIPS)
                await judge.send(type="end")
            finally:
                for p in (a, b):
                    await p.close()
    finally:
        own.close()
    # Relayed inputs: all three of an exchange, or (--one-remote) the interrogator's two.
    inputs = (2 if args.one_remote else 3) * args.exchanges
    busy, idle = _delta(s1, s0), _delta(s2, s1)
    per_cmd = {  # INFO and HELLO: the benchmark's own look at the stats
        k: round((busy.get(k, 0) - idle.get(k, 0)) / inputs, 3)
        for k in sorted(busy)
        if k not in ("info", "hello") and abs(busy.get(k, 0) - idle.get(k, 0)) >= 0.02 * inputs
    }
    # Each server's loop named by its part: the owner is the one publishing to people.
    moved = {
        k: (t1.get(k, 0) - t0.get(k, 0)) - (t2.get(k, 0) - t1.get(k, 0))
        for k in sorted(set(t1) | set(t2))
    }
    to_people = {k.split()[0]: n for k, n in moved.items() if k.endswith("PUBLISH to:")}
    owner_loop = max(to_people, key=lambda k: to_people[k], default="")
    trips: dict[str, int] = {}
    for k, n in moved.items():
        loop, what = k.split(" ", 1)
        single = what not in ("parse", "pipeline") and " in pipeline " not in what
        if single and abs(n) < 0.02 * inputs:  # heartbeats and ticks, not the relay
            continue
        if n and what != "parse":
            what = ("owner " if loop == owner_loop else "relaying ") + what
        if n:
            trips[what] = trips.get(what, 0) + n
    return {
        "benchmark": "arena relay: Redis cost per relayed input",
        "command": " ".join(["benchmarks/arena_relay.py", *sys.argv[1:]]),
        "pages_on_the_non_owner": "interrogator" if args.one_remote else "both",
        "relayed_inputs": inputs,
        "seconds": round(took, 2),
        "redis_commands_per_input": per_cmd,
        "redis_commands_per_input_total": round(sum(per_cmd.values()), 3),
        "client_round_trips_per_input": {
            k: round(v / inputs, 3)
            for k, v in trips.items()
            if " in pipeline " not in k and k != "parse"
        },
        "client_commands_in_pipelines_per_input": {
            k: round(v / inputs, 3) for k, v in trips.items() if " in pipeline " in k
        },
        "client_round_trips_per_input_total": round(
            sum(v for k, v in trips.items() if " in pipeline " not in k and k != "parse") / inputs,
            3,
        ),
        "client_frame_parses_per_input": round(trips.get("parse", 0) / inputs, 3),
        "second_parse": parse_cost_us(),
        "idle_commands_in_window": idle,
        "latency_ms": {
            "note": "send -> the other person's page shows it: "
            + ("one crossing" if args.one_remote else "relayed in, then out (two crossings)"),
            "n": len(lat),
            "p50": round(1000 * statistics.median(lat), 2),
            "p99": round(1000 * _pct(lat, 0.99), 2),
        },
    }


def parse_cost_us(n: int = 20_000) -> dict[str, float]:
    """What the second parse costs: the owner's envelope `json.loads` and frame validation of
    one typical relayed message (median of 5 runs of n)."""
    page = json.dumps({"type": "message", "channel": "A", "text": "where did you grow up?" * 3})
    envelope = json.dumps({"p": "p-0123456789ab", "raw": page, "from": "arena/01234567"})
    parse = F._CLIENT.validate_json  # the parse itself, not the counting wrapper

    def owner_side() -> object:
        return parse(json.loads(envelope)["raw"])

    runs = [timeit.timeit(owner_side, number=n) / n * 1e6 for _ in range(5)]
    return {"owner_parse_us": round(statistics.median(runs), 2)}


def _games(app: Any) -> Any:
    arena = app.state.arena
    return arena.games


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--exchanges", type=int, default=60)
    ap.add_argument("--one-remote", action="store_true", help="only the interrogator relayed")
    ap.add_argument("--out")
    args = ap.parse_args()
    _count_round_trips()
    result = asyncio.run(run(args))
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        main()
