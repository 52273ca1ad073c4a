"""The simulator's nightly-size run: `turinglab sim arena` over seed ranges for each fault set,
summarised (schedules, games, violations by invariant and seed, wall seconds, schedules per
second on this machine).

    .venv/bin/python benchmarks/sim_arena.py --seeds 1:101 --out benchmarks/sim_arena.json
    .venv/bin/python benchmarks/sim_arena.py --seeds 1:401 --fault-sets postgres \
        crash,redis-restart,postgres --workers 2 --out benchmarks/sim_arena_postgres.json
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

FAULT_SETS = ("crash", "redis-restart", "pause", "crash,redis-restart,pause")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", default="1:101")
    ap.add_argument("--processes", type=int, default=2)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--fault-sets", nargs="+", default=list(FAULT_SETS))
    ap.add_argument("--workers", type=int, default=1)
    args = ap.parse_args()
    runs = []
    for faults in args.fault_sets:
        began = time.monotonic()
        done = subprocess.run(
            [sys.executable, "-m", "turinglab", "sim", "arena", "--seeds", args.seeds,
             "--processes", str(args.processes), "--faults", faults, "--json",
             "--workers", str(args.workers)],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        wall = time.monotonic() - began
        report = json.loads(done.stdout)
        by_invariant = Counter(v["invariant"] for v in report["violations"])
        seeds: dict[str, list[int]] = {}
        for v in report["violations"]:
            seeds.setdefault(v["invariant"], []).append(v["seed"])
        runs.append(
            {
                "faults": faults,
                "schedules": report["schedules"],
                "games": report["games"],
                "schedules_violating": len({v["seed"] for v in report["violations"]}),
                "violations_by_invariant": dict(by_invariant),
                "seeds_by_invariant": seeds,
                "wall_s": round(wall, 1),
                "schedules_per_s": round(report["schedules"] / wall, 2),
            }
        )
        print(json.dumps(runs[-1]), flush=True)
    result = {
        "benchmark": "arena simulator: seeded schedules per fault set",
        "command": " ".join(["benchmarks/sim_arena.py", *sys.argv[1:]]),
        "runs": runs,
    }
    text = json.dumps(result, indent=2)
    if args.out is not None:
        args.out.write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
