"""Growing a GTT league by one model on the fake endpoint: a 9-model universe is played, then
the same study with a 10th model (same store), against a fresh run of the 10-model design.

    PYTHONPATH=src python benchmarks/gtt_grow.py --out benchmarks/gtt_grow.json

Counts trials played (this invocation), trials reused, chat calls the server answered, and
wall time, for each of the three runs.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from turinglab.config import parse_config
from turinglab.runner.event_loop import run_on_fast_loop
from turinglab.runner.execute import run_experiment
from turinglab.store.database import Store
from turinglab.testing.fake_openai import FakeServerProcess, start_fake_server_process

MODELS = [f"model-{i}" for i in range(10)]


def study(base_url: str, n_models: int, trials_per_pair: int) -> Any:
    universe = MODELS[:n_models]
    agents = {
        name: {"kind": "openai", "base_url": base_url, "model": name, "params": {"max_tokens": 64}}
        for name in universe
    }
    return parse_config(
        {
            "name": "league",
            "agents": agents,
            "experiment": {"game": "gtt", "universe": universe, "trials_per_pair": trials_per_pair},
            "runner": {"max_trials_in_flight": 32},
        }
    )


def play(server: FakeServerProcess, config: Any, db: Path) -> dict[str, Any]:
    server.reset()
    store = Store(str(db))
    t0 = time.perf_counter()
    summary = run_on_fast_loop(run_experiment(config, store, say=lambda _m: None))
    wall = time.perf_counter() - t0
    store.close()
    c = summary.counters
    return {
        "universe": len(config.experiment.universe),
        "status": summary.status,
        "trials_planned": c.planned,
        "trials_played": c.finished,
        "trials_reused": c.already_finished,
        "calls": server.stats()["completions"],
        "wall_s": round(wall, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trials-per-pair", type=int, default=2)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    load = os.getloadavg()[0]
    with (
        start_fake_server_process(latency_s=args.latency) as server,
        tempfile.TemporaryDirectory() as tmp,
    ):
        grown_db, fresh_db = Path(tmp) / "grown.db", Path(tmp) / "fresh.db"
        nine = play(server, study(server.base_url, 9, args.trials_per_pair), grown_db)
        grown = play(server, study(server.base_url, 10, args.trials_per_pair), grown_db)
        fresh = play(server, study(server.base_url, 10, args.trials_per_pair), fresh_db)
    report = {
        "benchmark": "gtt-grow-9-to-10",
        "command": "PYTHONPATH=src python benchmarks/gtt_grow.py --out benchmarks/gtt_grow.json",
        "trials_per_pair": args.trials_per_pair,
        "latency_s": args.latency,
        "load_avg_1m_at_start": round(load, 2),
        "runs": {"nine_models": nine, "grown_to_ten": grown, "fresh_ten": fresh},
        "saved": {
            "trials": fresh["trials_played"] - grown["trials_played"],
            "calls": fresh["calls"] - grown["calls"],
            "wall_s": round(fresh["wall_s"] - grown["wall_s"], 2),
        },
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    text = json.dumps(report, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
