"""`turinglab sim arena`: seeded simulations of a multi-process arena (sim/), each schedule
checked against the arena's promises; a violation's seed replays it exactly."""

from __future__ import annotations

import functools
import json
import multiprocessing
import os
import sys
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from typing import Annotated, Any

import typer

from turinglab.cli.errors import fail

sim_app = typer.Typer(help="Deterministic simulations of the arena.", no_args_is_help=True)

FAULT_KINDS = ("crash", "redis-restart", "pause", "postgres", "redis-pause", "redis-cut")


def _seeds(seeds: str | None, seed: int | None) -> range:
    if seed is not None:
        return range(seed, seed + 1)
    if seeds is None:
        raise fail("give --seeds A:B (a range, B excluded) or --seed S")
    low, sep, high = seeds.partition(":")
    try:
        first, last = int(low), int(high) if sep else int(low) + 1
    except ValueError:
        raise fail(f"--seeds must be A:B (integers), not {seeds!r}") from None
    if last <= first:
        raise fail(f"--seeds {seeds}: B must be greater than A")
    return range(first, last)


def _same_hashes() -> None:
    """Set iteration over strings varies with hash randomisation: run with it fixed, so a seed
    replays the same in every interpreter."""
    if os.environ.get("PYTHONHASHSEED") != "0":
        os.environ["PYTHONHASHSEED"] = "0"
        os.execv(sys.executable, [sys.executable, "-m", "turinglab", *sys.argv[1:]])


def _played(
    chosen: range, processes: int, kinds: frozenset[str], workers: int, people: dict[str, float]
) -> Iterator[dict[str, Any]]:
    """Each schedule's result in seed order, played here or by `workers` forked processes (a
    schedule depends only on its seed, so where it runs changes nothing)."""
    from turinglab.sim.run import schedule

    if workers == 1 or len(chosen) == 1:
        yield from (schedule(s, processes, kinds, people) for s in chosen)
        return
    play = functools.partial(schedule, processes=processes, faults=kinds, people=people)
    fork = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(workers, mp_context=fork) as pool:
        yield from pool.map(play, chosen, chunksize=max(1, min(20, len(chosen) // (4 * workers))))


@sim_app.command("arena")
def sim_arena(
    seeds: Annotated[str | None, typer.Option(help="schedules A:B (B excluded)")] = None,
    seed: Annotated[int | None, typer.Option(help="one schedule (with --trace: replay it)")] = None,
    processes: Annotated[int, typer.Option(help="arena processes")] = 2,
    faults: Annotated[
        str,
        typer.Option(
            help="comma-separated: crash, redis-restart, pause, postgres, redis-pause, redis-cut"
        ),
    ] = ("crash,redis-restart"),
    trace: Annotated[bool, typer.Option(help="print each schedule's whole trace")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="one JSON object")] = False,
    workers: Annotated[int, typer.Option(help="processes playing schedules side by side")] = 1,
    end_early_p: Annotated[
        float, typer.Option(help="per game: the interrogator ends the talk early")
    ] = 0.0,
    give_up_p: Annotated[
        float,
        typer.Option(
            help="per break of a page mid-game (server lost, message stuck 5 s): it closes"
        ),
    ] = 0.0,
) -> None:
    """Run seeded schedules of real arena processes on a virtual clock; print violations."""
    kinds = frozenset(f.strip() for f in faults.split(",") if f.strip())
    if unknown := kinds - set(FAULT_KINDS):
        raise fail(
            f"--faults: unknown {', '.join(sorted(unknown))} (known: {', '.join(FAULT_KINDS)})"
        )
    if not 1 <= processes <= 8:
        raise fail("--processes must be 1 to 8")
    if not 1 <= workers <= 64:
        raise fail("--workers must be 1 to 64")
    for name, p in (("--end-early-p", end_early_p), ("--give-up-p", give_up_p)):
        if not 0.0 <= p <= 1.0:
            raise fail(f"{name} must be a probability (0 to 1), not {p}")
    people = {k: v for k, v in (("end_early_p", end_early_p), ("give_up_p", give_up_p)) if v}
    chosen = _seeds(seeds, seed)
    _same_hashes()

    found: list[dict[str, Any]] = []
    games = 0
    for result in _played(chosen, processes, kinds, workers, people):
        s = result["seed"]
        games += result["games"]
        for v in result["violations"]:
            found.append({"seed": s, **v, "trace": result["trace"][-12:]})
        if trace:
            print(f"# seed {s}: {result['games']} games, digest {result['digest']}")
            print("\n".join(result["trace"]))
        elif not as_json:
            mark = "ok" if not result["violations"] else "VIOLATED"
            print(
                f"seed {s}: {mark}, {result['games']} games, "
                f"{result['virtual_s']:.0f} s simulated, digest {result['digest']}"
            )
    if as_json:
        print(json.dumps({"schedules": len(chosen), "games": games, "violations": found}, indent=2))
    else:
        for v in found:
            print(f"seed {v['seed']}: {v['invariant']}: {v['detail']}")
        print(f"{len(chosen)} schedules, {games} games, {len(found)} violations")
    if found:
        raise typer.Exit(1)
