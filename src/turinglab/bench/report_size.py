"""Size and peak memory of the GTT report for a large run.

Makes a GTT run of tiny scripted conversations (9 agents, every ordered pair, `--trials-per-pair`
each: 200 gives the 16,200 trials of the issue), then builds its report in a fresh child process
per setup and reports the page's size, the child's peak resident memory and its time. `--src`
points the child at another source tree (e.g. an older commit's `src/`) to measure "before".

    python -m turinglab.bench.report_size [--trials-per-pair N] [--store FILE] [--src DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import subprocess
import sys
from pathlib import Path
from typing import Any

from turinglab.config import parse_config
from turinglab.runner.execute import run_experiment
from turinglab.store.database import Store

AGENTS = 9
NAME = "report-size-bench"
# Runs in the child: build the report, print size, peak RSS (ru_maxrss is KiB on Linux), time.
CHILD = """
import json, resource, sys, time
from pathlib import Path
from turinglab.report.gtt_report import build_gtt_report
from turinglab.store.database import Store
store_path, out_dir, options = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
store = Store(store_path)
start = time.perf_counter()
page = build_gtt_report(store, "report-size-bench", out_dir, **options)
print(json.dumps({"html_bytes": Path(page).stat().st_size,
                  "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
                  "build_s": round(time.perf_counter() - start, 1)}))
"""


def make_store(path: Path, trials_per_pair: int) -> int:
    """A run of trials_per_pair x 81 scripted GTT trials; returns the number of trials."""
    agents = {
        f"a{k}": {
            "kind": "scripted",
            "replies": [f"Hello, I am number {k}. Who are you?", "<answer>1</answer>"],
            "cycle": True,
        }
        for k in range(AGENTS)
    }
    config = parse_config(
        {
            "name": NAME,
            "agents": agents,
            "experiment": {
                "game": "gtt",
                "universe": list(agents),
                "trials_per_pair": trials_per_pair,
            },
            "runner": {"max_trials_in_flight": 256},
        }
    )
    store = Store(str(path))
    try:
        asyncio.run(run_experiment(config, store, say=lambda _m: None))
        return len(store.results(store.resolve_run(NAME).id))
    finally:
        store.close()


def _trials(path: Path) -> int:
    store = Store(str(path))
    try:
        return len(store.results(store.resolve_run(NAME).id))
    finally:
        store.close()


def measure(store: Path, out_dir: Path, options: dict[str, Any], src: Path | None) -> Any:
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = str(src)
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(store), str(out_dir), json.dumps(options)],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials-per-pair", type=int, default=200)
    parser.add_argument("--store", type=Path, default=Path("report-size-bench.db"))
    parser.add_argument("--out-dir", type=Path, default=Path("report-size-bench"))
    parser.add_argument("--src", type=Path, help="source tree for the child (default: this one)")
    parser.add_argument(
        "--setups",
        default="compressed,plain",
        help="comma-separated: compressed (the default page), plain (compress_transcripts=False)"
        ", legacy (no options: for a --src tree that predates compression)",
    )
    parser.add_argument("--out", type=Path, help="also write the JSON here")
    args = parser.parse_args(argv)
    trials = (
        _trials(args.store) if args.store.exists() else make_store(args.store, args.trials_per_pair)
    )
    options = {
        "compressed": {"n_boot": 50},
        "plain": {"n_boot": 50, "compress_transcripts": False},
        "legacy": {"n_boot": 50},
    }
    results = {
        name: measure(args.store, args.out_dir / name, options[name], args.src)
        for name in args.setups.split(",")
    }
    figures = {
        "benchmark": "report_size",
        "trials": trials,
        "store_bytes": args.store.stat().st_size,
        "src": str(args.src) if args.src else "this tree",
        "machine": {"platform": platform.platform(), "python": platform.python_version()},
        "results": results,
    }
    text = json.dumps(figures, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
