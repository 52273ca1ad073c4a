"""`turinglab bench runner`: how close the runner gets to the ideal call rate.

GTT conversations run against the fake OpenAI server in its own process with a fixed per-call
latency. With K conversations in flight and latency L, each conversation has one call
outstanding at a time, so the ideal is K / L calls per second. We report the achieved rate in
the steady state (the middle of the run, without ramp-up and drain), the ratio, and the
runner's own CPU seconds per 1,000 calls (this process only: the server has its own).
"""

from __future__ import annotations

import asyncio
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from turinglab.agents.retry import CallStats
from turinglab.config import parse_config
from turinglab.runner.event_loop import loop_name, run_on_fast_loop
from turinglab.runner.execute import run_experiment
from turinglab.runner.scheduler import RunCounters
from turinglab.store.database import Store
from turinglab.testing.fake_openai import start_fake_server_process

CALLS_PER_CONVERSATION = 5  # the fake distinguisher answers in its 3rd message: D, X, D, X, D


class _Sampler:
    """A progress view that samples the call counter instead of drawing anything."""

    def __init__(self, period_s: float = 0.25) -> None:
        self.period_s = period_s
        self.samples: list[tuple[float, int, float]] = []  # (wall, calls, cpu)
        self._task: asyncio.Task[None] | None = None
        self._stats: CallStats | None = None

    def start(self, counters: RunCounters, stats: CallStats) -> None:
        self._stats = stats
        self._task = asyncio.get_running_loop().create_task(self._sample())

    async def _sample(self) -> None:
        while True:
            assert self._stats is not None
            self.samples.append((time.perf_counter(), self._stats.calls, time.process_time()))
            await asyncio.sleep(self.period_s)

    def update(self) -> None:
        pass

    def stop(self) -> None:
        if self._task:
            self._task.cancel()
        if self._stats is not None:
            self.samples.append((time.perf_counter(), self._stats.calls, time.process_time()))

    def steady_state(self) -> tuple[float, float]:
        """Calls/s and CPU s per call over the middle 60% of the run (ramp-up and drain cut).

        Calls complete in waves of about one latency, so the rate is the least-squares slope
        of calls against time rather than a difference of two samples."""
        lo, hi = int(len(self.samples) * 0.2), int(len(self.samples) * 0.8) + 1
        window = self.samples[lo:hi] if hi - lo >= 3 else self.samples
        times = [t for t, _, _ in window]
        rate = statistics.linear_regression(times, [c for _, c, _ in window]).slope
        cpu_rate = statistics.linear_regression(times, [p for _, _, p in window]).slope
        return rate, cpu_rate / rate if rate > 0 else float("nan")


async def _one_level(base_url: str, in_flight: int, conversations: int, db: Path) -> dict[str, Any]:
    # Priced, so that per-call accounting (tokens and cost per call) is measured with the rest.
    agent = {
        "kind": "openai",
        "base_url": base_url,
        "timeout_s": 120,
        "price_in_usd_per_mtok": 0.15,
        "price_out_usd_per_mtok": 0.60,
    }
    config = parse_config(
        {
            "name": f"bench-{in_flight}",
            "agents": {"a": {**agent, "model": "bench-a"}, "b": {**agent, "model": "bench-b"}},
            "experiment": {
                "game": "gtt",
                "universe": ["a", "b"],
                "trials_per_pair": max(1, conversations // 4),
                "seed": in_flight,
            },
            "runner": {
                "max_trials_in_flight": in_flight,
                "max_calls_per_endpoint": in_flight * 2,
            },
        }
    )
    load_1m = os.getloadavg()[0]
    store = Store(str(db))
    sampler = _Sampler()
    wall0, cpu0 = time.perf_counter(), time.process_time()
    summary = await run_experiment(config, store, say=lambda _m: None, progress=sampler)
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    store.close()
    steady_rate, steady_cpu = sampler.steady_state()
    return {
        "in_flight": in_flight,
        "load_avg_1m_at_start": round(load_1m, 2),
        "conversations": summary.counters.finished,
        "calls": summary.stats.calls,
        "failed_attempts": summary.counters.failed_attempts,
        "tokens": summary.stats.tokens_in + summary.stats.tokens_out,
        "cost_usd": round(summary.stats.cost_usd, 6),
        "wall_s": round(wall, 2),
        "calls_per_s": round(steady_rate, 1),
        "calls_per_s_overall": round(summary.stats.calls / wall, 1),
        "cpu_s_per_1000_calls": round(steady_cpu * 1000, 3),
        "cpu_s_per_1000_calls_overall": round(cpu / max(summary.stats.calls, 1) * 1000, 3),
    }


def run_benchmark(
    in_flight_levels: list[int], latency_s: float, conversations_per_slot: int
) -> dict[str, Any]:
    results = []
    with (
        start_fake_server_process(latency_s=latency_s) as server,
        tempfile.TemporaryDirectory() as tmp,
    ):
        for level in in_flight_levels:
            server.reset()
            n = level * conversations_per_slot
            row = run_on_fast_loop(
                _one_level(server.base_url, level, n, Path(tmp) / f"b{level}.db")
            )
            ideal = level / latency_s
            row["ideal_calls_per_s"] = round(ideal, 1)
            row["ratio"] = round(row["calls_per_s"] / ideal, 3)
            # Start-up (planning, first connections) and the tail included: the rate a user
            # sees from pressing enter to the prompt coming back.
            row["ratio_overall"] = round(row["calls_per_s_overall"] / ideal, 3)
            row["server_max_in_flight"] = server.stats().get("max_in_flight")
            results.append(row)
    return {
        "benchmark": "runner",
        "latency_s": latency_s,
        "calls_per_conversation": CALLS_PER_CONVERSATION,
        "conversations_per_slot": conversations_per_slot,
        "machine": {"platform": platform.platform(), "python": platform.python_version()},
        "event_loop": loop_name(),
        "results": results,
        "ratio_at": {str(r["in_flight"]): r["ratio"] for r in results},
        "ratio_overall_at": {str(r["in_flight"]): r["ratio_overall"] for r in results},
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }


def summarize(report: dict[str, Any]) -> str:
    ratios = [r["ratio"] for r in report["results"]]
    whole = [r["ratio_overall"] for r in report["results"]]
    return (
        f"median ratio {statistics.median(ratios):.3f} steady, "
        f"{statistics.median(whole):.3f} whole-process, over {len(ratios)} levels"
    )
