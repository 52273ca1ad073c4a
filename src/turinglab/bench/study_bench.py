"""Time the full study report on simulated studies of arena size (issue 10's target: 200,000
verdict rows from 50,000 interrogators in under 60 s and 2 GB).

Each size is simulated with `human.simulate.simulate_study` (seeded), written as CSV, and
reported by `python -m turinglab report` in its own process, so that the figures include
start-up and reading the file, as a user sees them, and the peak memory is that process's own
(RUSAGE_CHILDREN of a fresh child per size)."""

from __future__ import annotations

import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

# Four AI witnesses spanning the win rates seen in published studies.
WITNESSES = {"gpt-4.5-persona": 0.73, "llama-persona": 0.56, "gpt-4o": 0.21, "eliza": 0.23}


def simulate_csv(rows: int, seed: int, path: Path) -> dict[str, int]:
    from turinglab.human.simulate import simulate_study

    study = simulate_study(
        WITNESSES,
        n_interrogators=max(1, rows // 4),  # two three-party games each: four rows
        games_per_interrogator=2,
        interrogator_sd=0.5,
        seed=seed,
        round_effect=0.1,
    )
    study.to_csv(path, index=False)
    return {
        "rows": len(study),
        "games": int(study["game"].nunique()),
        "interrogators": int(study["interrogator"].nunique()),
    }


def time_report(study: Path, out_dir: Path) -> dict[str, Any]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "turinglab", "report", str(study), "--out", str(out_dir)],
        capture_output=True,
        text=True,
        env={**os.environ, "MPLBACKEND": "Agg"},
    )
    wall = time.perf_counter() - started
    peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if done.returncode != 0:
        raise RuntimeError(f"report failed on {study}: {done.stderr.strip()[-500:]}")
    steps = [line.strip() for line in done.stderr.splitlines() if line.strip()]
    return {
        "wall_s": round(wall, 2),
        # ru_maxrss of children is the largest child so far: sizes run smallest first
        "peak_rss_mib": round(max(peak_kib, before) / 1024, 1),
        "steps": steps,
        "report_bytes": (out_dir / "report.html").stat().st_size,
    }


def run_study_benchmark(
    sizes: list[int], seed: int = 1, say: Callable[[str], None] | None = None
) -> dict[str, Any]:
    say = say or (lambda _m: None)
    results = []
    with tempfile.TemporaryDirectory(prefix="turinglab-study-bench-") as tmp:
        for rows in sorted(sizes):
            study = Path(tmp) / f"study-{rows}.csv"
            shape = simulate_csv(rows, seed, study)
            say(f"{rows} rows simulated; reporting…")
            timing = time_report(study, Path(tmp) / f"report-{rows}")
            say(f"{rows} rows: {timing['wall_s']} s, {timing['peak_rss_mib']} MiB")
            results.append({**shape, **timing})
    return {
        "benchmark": "study-report",
        "command": "turinglab bench study-report --rows " + ",".join(map(str, sorted(sizes))),
        "seed": seed,
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "load_avg_at_end": [round(x, 2) for x in os.getloadavg()],
        },
        "results": results,
    }
