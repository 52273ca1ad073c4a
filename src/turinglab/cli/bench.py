"""`turinglab bench …`: benchmarks that print their figures as JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from turinglab.cli.errors import err_console, fail

bench_app = typer.Typer(help="Benchmarks that print figures as JSON.", no_args_is_help=True)


def _emit(report: Any, out: Path | None) -> None:
    text = json.dumps(report, indent=2)
    print(text)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text + "\n")


@bench_app.command("runner")
def bench_runner(
    in_flight: Annotated[
        str, typer.Option(help="conversations in flight, comma-separated levels")
    ] = "100,500,1000,2000",
    latency: Annotated[float, typer.Option(help="fake endpoint latency per call, seconds")] = 1.0,
    per_slot: Annotated[
        int, typer.Option(help="conversations per in-flight slot (N = level × this)")
    ] = 4,
    out: Annotated[Path | None, typer.Option(help="also write the JSON here")] = None,
) -> None:
    """Play GTT conversations against the fake endpoint (own process); print JSON figures."""
    from turinglab.bench.runner_bench import run_benchmark

    try:
        levels = [int(x) for x in in_flight.split(",") if x.strip()]
    except ValueError:
        raise fail(f"--in-flight must be comma-separated integers, not {in_flight!r}") from None
    if not levels or min(levels) < 1 or latency <= 0 or per_slot < 1:
        raise fail("--in-flight levels, --latency and --per-slot must be positive")
    _emit(run_benchmark(levels, latency, per_slot), out)


@bench_app.command("study-report")
def bench_study_report(
    rows: Annotated[
        str, typer.Option(help="verdict rows per simulated study, comma-separated")
    ] = "20000,50000,200000",
    seed: Annotated[int, typer.Option(help="seed of the simulated studies")] = 1,
    out: Annotated[Path | None, typer.Option(help="also write the JSON here")] = None,
) -> None:
    """Simulate three-party studies (4 rows per interrogator), write each to CSV and time
    `turinglab report STUDY.csv` on it in a fresh process; print wall time and peak memory."""
    from turinglab.bench.study_bench import run_study_benchmark

    try:
        sizes = [int(x) for x in rows.split(",") if x.strip()]
    except ValueError:
        raise fail(f"--rows must be comma-separated integers, not {rows!r}") from None
    if not sizes or min(sizes) < 4:
        raise fail("--rows must be at least 4 (one interrogator: two three-party games)")
    _emit(run_study_benchmark(sizes, seed, say=err_console.print), out)


@bench_app.command(
    "arena",
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
    add_help_option=False,
)
def bench_arena(ctx: typer.Context) -> None:
    """Realistic simulated people in three-party games against arena server processes, with
    faults injected on request; prints JSON.

    5-minute games, 8 rounds a person, real chat lengths, typing frames, reconnects and
    abandons, an open-loop arrival schedule; relay and join latency, true concurrency, lost and
    duplicated messages (audited in the store), CPU of the servers, PostgreSQL and Redis.
    Options are the benchmark's own (`turinglab bench arena --help`: --games, --processes,
    --store, --fault, ...).
    """
    from turinglab.bench.arena_bench import main as arena_main

    arena_main(list(ctx.args))
