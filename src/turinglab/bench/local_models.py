"""Local llama.cpp models before and after the reproducibility and threads changes.

Plays a demo-like GTT tournament (ELIZA, SmolLM2, Gemma 3 base; configs/demo.yaml with fewer
trials) once per setup, back to back in one process, each into a fresh store:

- `before`: llama-cpp-python's own prefix reuse (not reproducible) and one generation thread
  (its default on a 2-core machine);
- `reset-per-call`: no prefix reuse at all (also reproducible), one thread;
- `fix-only`: batch-prefix reuse (agents/local_gguf.py), still one thread: the fix's cost;
- `no-saved-prefixes`: batch-prefix reuse, every usable core, but no prefixes saved beside the
  live cache (as before `PrefixSnapshots`);
- `after`: batch-prefix reuse with saved prefixes and every usable core (today's default).

The machine may be shared and noisy, so compare the ratios within one run, not across runs.

    python -m turinglab.bench.local_models [--trials-per-pair N] [--setups A,B] [--out FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import tempfile
import time
from pathlib import Path
from typing import Any

from turinglab.agents import local_gguf
from turinglab.config import load_config, parse_config
from turinglab.runner.execute import run_experiment
from turinglab.store.database import Store

DEMO = Path(__file__).resolve().parents[3] / "configs" / "demo.yaml"
SETUPS: dict[str, dict[str, Any]] = {
    "before": {"reuse": "llama-cpp-python", "threads": 1},
    "reset-per-call": {"reuse": "reset", "threads": 1},  # the other reproducible option
    "fix-only": {"reuse": "batch-prefix", "threads": 1},
    "no-saved-prefixes": {"reuse": "batch-prefix-unsaved", "threads": None},
    "after": {"reuse": "batch-prefix", "threads": None},  # None: every usable core
}


def _config(trials_per_pair: int, threads: int | None) -> Any:
    raw = load_config(DEMO).model_dump(mode="json", exclude_none=True)
    raw["experiment"]["trials_per_pair"] = trials_per_pair
    raw.pop("store", None)
    for agent in raw["agents"].values():
        if agent.get("kind") == "local":
            agent["threads"] = threads
    return parse_config(raw, "bench")


def _use_reuse(kind: str) -> None:
    from llama_cpp import Llama

    class ResetLlama(Llama):
        """No reuse at all: every prompt evaluated from its first token."""

        def generate(self, tokens: Any, *args: Any, **kwargs: Any) -> Any:
            self.n_tokens = 0
            return super().generate(tokens, *args, **kwargs)

    local_gguf._llama_class = None
    batch_prefix = local_gguf.batch_prefix_llama()

    class UnsavedLlama(batch_prefix):  # type: ignore[misc,valid-type]
        """Batch-prefix reuse of the live cache only: nothing saved beside it."""

        def _save_live(self) -> None:
            return None

    local_gguf._models.clear()  # a fresh load per setup: no cache carried over
    local_gguf._llama_class = {
        "llama-cpp-python": Llama,
        "reset": ResetLlama,
        "batch-prefix-unsaved": UnsavedLlama,
        "batch-prefix": batch_prefix,
    }[kind]


async def _play(trials_per_pair: int, setup: dict[str, Any], folder: Path) -> dict[str, Any]:
    _use_reuse(setup["reuse"])
    config = _config(trials_per_pair, setup["threads"])
    folder.mkdir(parents=True, exist_ok=True)
    store = Store(str(folder / f"{setup['reuse']}-{setup['threads']}.db"))
    try:
        start, cpu = time.perf_counter(), time.process_time()
        summary = await run_experiment(config, store, say=lambda _m: None)
        wall, cpu_s = time.perf_counter() - start, time.process_time() - cpu
        rows = store.results(summary.run_id)
        calls = sum(r.calls for r in rows)
    finally:
        store.close()
    return {
        **setup,
        "threads_used": setup["threads"] or local_gguf.usable_cores(),
        "trials": len(rows),
        "calls": calls,
        "wall_s": round(wall, 2),
        "cpu_s": round(cpu_s, 2),
        "cpu_per_wall": round(cpu_s / wall, 2),
    }


async def bench(trials_per_pair: int, setups: list[str]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        # Assemble Gemma's file and read both into the page cache, so `before` pays no more
        # for loading than the others do.
        for name in local_gguf.EMBEDDED_MODELS:
            local_gguf.resolve_model_path(name).read_bytes()
        results = {name: await _play(trials_per_pair, SETUPS[name], Path(tmp)) for name in setups}
    before = results["before"]["wall_s"] if "before" in results else None
    return {
        "benchmark": "local_models",
        "command": "python -m turinglab.bench.local_models --trials-per-pair "
        f"{trials_per_pair} --setups {','.join(setups)}",
        "workload": f"configs/demo.yaml with trials_per_pair={trials_per_pair}",
        "machine": {
            "platform": platform.platform(),
            "python": platform.python_version(),
            "usable_cores": local_gguf.usable_cores(),
            # Other processes' load: cpu_per_wall well under threads_used means we were starved.
            "load_average_1min_at_end": round(os.getloadavg()[0], 2),
        },
        "results": results,
        # Each setup's wall time over `before`'s (below 1: faster than before).
        "wall_vs_before": {
            name: round(r["wall_s"] / before, 2) for name, r in results.items() if before
        },
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials-per-pair", type=int, default=1)
    parser.add_argument("--setups", default=",".join(SETUPS), help="comma-separated subset")
    parser.add_argument("--out", type=Path, help="also write the JSON here")
    args = parser.parse_args(argv)
    figures = asyncio.run(bench(args.trials_per_pair, args.setups.split(",")))
    text = json.dumps(figures, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
