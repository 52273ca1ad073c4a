"""`turinglab run`: check a config and its agents, play its trials into the store (resuming
what is there), print the results; stopped by Ctrl-C or SIGTERM, it says how to resume."""

from __future__ import annotations

import os
from collections.abc import Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
from rich.markup import escape

from turinglab.cli.errors import err_console, fail
from turinglab.cli.options import StoreOption
from turinglab.cli.printing import console, print_game_outcomes
from turinglab.cli.stores import open_store
from turinglab.store.location import StoreLocationError, check_store

if TYPE_CHECKING:
    from turinglab.agents.pricing import Price
    from turinglab.config import ExperimentConfig
    from turinglab.store.database import Store

T = TypeVar("T")


def _with_max_in_flight(config: ExperimentConfig, value: int | None) -> ExperimentConfig:
    """Apply --max-in-flight through the same validation the config's field gets."""
    from pydantic import ValidationError

    if value is None:
        return config
    try:
        runner = type(config.runner).model_validate(
            {**config.runner.model_dump(), "max_trials_in_flight": value}
        )
    except ValidationError as err:
        msg = err.errors()[0]["msg"].removeprefix("Value error, ")
        raise fail(f"--max-in-flight {value}: {msg}") from None
    return config.model_copy(update={"runner": runner})


def _local_preflight(config: ExperimentConfig) -> None:
    """Files and packages the agents need, checked before the store is touched (no network)."""
    from turinglab.runner.preflight import local_problems

    problems = local_problems(config.used_agents())
    for problem in problems[:-1]:
        err_console.print(f"[red]error:[/] {escape(problem)}", highlight=False)
    if problems:
        raise fail(problems[-1] + "; nothing was run")


def _check_plan_size(config: ExperimentConfig) -> None:
    """A design too large to plan is refused before the store exists."""
    from turinglab.runner.plan import PlanTooLarge, check_plan_size, game_of

    try:
        check_plan_size(game_of(config))
    except PlanTooLarge as err:
        raise fail(str(err) + "; nothing was run") from None


def _preflight(config: ExperimentConfig, check_auth: bool = False) -> dict[str, Price]:
    """Endpoints reachable, keys accepted, model slugs listed; the prices /models gave."""
    import asyncio

    from turinglab.runner.preflight import preflight_report

    agents = config.used_agents()
    # A key that is not set is the first thing to say (the endpoint would answer 401 anyway).
    for name, cfg in agents.items():
        env = getattr(cfg, "api_key_env", None)
        if env and not os.environ.get(env):
            raise fail(f"agent {name!r}: environment variable {env} (api_key_env) is not set")
    report = asyncio.run(preflight_report(agents, check_auth=check_auth))
    for warning in report.warnings:
        err_console.print(f"[yellow]warning:[/] {warning}", highlight=False)
    failures = report.failures
    if failures:
        for failure in failures[:-1]:
            err_console.print(f"[red]error:[/] {escape(failure.line())}", highlight=False)
        raise fail(failures[-1].line() + "; nothing was run")
    return report.prices


def _dry_run(config: ExperimentConfig, store: str | None, prices: dict[str, Price]) -> None:
    """Print what the run would play and cost; the store is read if it exists, never made."""
    from turinglab.agents.pricing import configured_prices
    from turinglab.runner.execute import dry_run

    location = store or os.environ.get("TURINGLAB_STORE") or config.store
    try:
        check_store(location, create=False)
        db = open_store(store, config.store)
    except (StoreLocationError, typer.Exit):
        db = None
    try:
        estimate = dry_run(config, db)
    finally:
        if db is not None:
            db.close()
    prices = {**prices, **configured_prices(config.used_agents())}
    for line in estimate.lines(prices):
        console.print(line, highlight=False, soft_wrap=True)
    budget = config.runner.budget_usd
    cost = estimate.cost(prices)
    if budget is not None and cost is not None and cost > budget:
        console.print(
            f"  runner.budget_usd {budget:g} USD would stop the run before it ends", highlight=False
        )
    console.print("Dry run: nothing was played or stored.", highlight=False)


def print_spend(db: Store, run_id: str, prices: dict[str, Price]) -> None:
    """Tokens and cost of everything the run played (all invocations), failed attempts and
    interrupted games apart from the games that count."""
    from turinglab.agents.pricing import TokenUse, total_cost, usd

    use = [TokenUse(**row) for row in db.token_use(run_id)]
    if not use:
        return
    kept = [u for u in use if u.status not in ("failed", "interrupted")]
    lost = [u for u in use if u.status in ("failed", "interrupted")]

    def tokens(us: list[TokenUse]) -> str:
        return f"{sum(u.tokens_in for u in us):,} in + {sum(u.tokens_out for u in us):,} out"

    def priced(us: list[TokenUse]) -> str:
        cost = total_cost(us, prices)
        return "" if cost is None else f" ({usd(cost)})"

    line = f"Tokens: {tokens(kept)}{priced(kept)}"
    if lost:
        line += f"; failed or interrupted attempts: {tokens(lost)}{priced(lost)}"
    console.print(line + ".", highlight=False, soft_wrap=True)


class Terminated(Exception):
    """The run was stopped by SIGTERM (a service manager, `kill`, a container stopping)."""


async def until_terminated(work: Coroutine[Any, Any, T]) -> T:
    """Await `work`; SIGTERM cancels it as Ctrl-C does (its finished trials stay stored and
    the run is marked interrupted) and raises Terminated instead of ending silently."""
    import asyncio
    import signal

    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    assert task is not None
    received: list[int] = []

    def on_term() -> None:
        received.append(signal.SIGTERM)
        task.cancel()

    loop.add_signal_handler(signal.SIGTERM, on_term)
    try:
        return await work
    except asyncio.CancelledError:
        if received:
            raise Terminated() from None
        raise
    finally:
        loop.remove_signal_handler(signal.SIGTERM)


def run(
    config_path: Annotated[Path, typer.Argument(metavar="CONFIG", help="experiment YAML file")],
    store: StoreOption = None,
    max_in_flight: Annotated[
        int | None, typer.Option(help="override runner.max_trials_in_flight")
    ] = None,
    progress: Annotated[bool, typer.Option(help="show a progress bar")] = True,
    preflight: Annotated[
        bool, typer.Option(help="check each hosted endpoint with one cheap call first")
    ] = True,
    check_auth: Annotated[
        bool, typer.Option(help="also make one 1-token chat call per endpoint (tests the key)")
    ] = False,
    dry_run: Annotated[
        bool, typer.Option(help="print trials, calls, tokens and estimated cost; play nothing")
    ] = False,
) -> None:
    """Run (or resume) the experiment a config file describes, then print its results."""

    from turinglab.agents.registry import AgentSetupError, require_extras
    from turinglab.config import ConfigError, GTTExperiment, load_config
    from turinglab.games.kinds import kind_named

    try:
        config = load_config(config_path)
    except ConfigError as err:
        raise fail(str(err)) from None
    if kind_named(config.experiment.game).needs_people:
        game = config.experiment.game
        raise fail(f"{game} needs people: use `turinglab serve {config_path}`")
    config = _with_max_in_flight(config, max_in_flight)
    if dry_run:  # before extras and the network: costing a design needs neither
        listed = _preflight(config, check_auth) if preflight and check_auth else {}
        _dry_run(config, store, listed)
        return
    require_extras(config.used_agents())  # a missing extra leaves no store behind
    location = store or os.environ.get("TURINGLAB_STORE") or config.store
    try:
        check_store(location, create=True)
    except StoreLocationError as err:
        raise fail(str(err)) from None
    # Before the store is created: a run that cannot start leaves nothing behind.
    _check_plan_size(config)
    _local_preflight(config)
    listed_prices = _preflight(config, check_auth) if preflight else {}
    # Imported once the config and the agents pass: a refused run costs no scipy/SQL imports.
    from turinglab.report.console import print_gtt_report
    from turinglab.runner.event_loop import run_on_fast_loop
    from turinglab.runner.execute import run_experiment
    from turinglab.runner.plan import PlanTooLarge
    from turinglab.runner.progress import RichProgress
    from turinglab.store.records import analysis_rows

    db = open_store(store, config.store, create=True)
    view = RichProgress(console, label=escape(config.name)) if progress else None
    # Unwrapped: a line such as "Joining run …: 8/40 trials already finished." stays whole.
    say = lambda m: console.print(m, highlight=False, soft_wrap=True, markup=False)  # noqa: E731
    try:
        summary = run_on_fast_loop(
            until_terminated(
                run_experiment(config, db, say=say, progress=view, listed_prices=listed_prices)
            )
        )
    except (KeyboardInterrupt, Terminated) as stop:
        err_console.print(
            "\n[yellow]Stopped"
            + (" (SIGTERM)" if isinstance(stop, Terminated) else "")
            + ".[/] Finished trials are stored; trials in flight were dropped. "
            + escape(
                f"Resume with: turinglab run {config_path}" + (f" --store {store}" if store else "")
            )
        )
        # 128 + the signal's number, as a shell reports a process ended by it
        raise typer.Exit(code=143 if isinstance(stop, Terminated) else 130) from None
    except (AgentSetupError, PlanTooLarge) as err:
        raise fail(str(err)) from None
    c = summary.counters
    console.print(
        f"Run {summary.run_id} {summary.status}: {c.finished} trials finished now "
        f"({c.done}/{c.planned} in all), {c.failed_attempts} failed attempts, "
        f"{summary.stats.calls} API calls, {summary.elapsed_s:.1f} s. Stored in {db.url}",
        markup=False,
    )
    print_spend(db, summary.run_id, summary.prices)
    if isinstance(config.experiment, GTTExperiment):
        print_gtt_report(
            console,
            analysis_rows(db.results(summary.run_id)),
            title=escape(f"{config.name} ({summary.run_id})"),
            planned=c.planned,
            universe=config.experiment.universe,
        )
    else:
        print_game_outcomes(db, summary.run_id, config.experiment.game)
    if c.exhausted or summary.status != "finished":
        # A run with failed trials is not a success: say so last, on stderr, and exit 1. A
        # re-run plays no exhausted trial, so its last error is read back from the store.
        failed = db.failed_attempts(summary.run_id) if c.last_error is None else []
        last_error = c.last_error or (
            f"{failed[-1]['key']}: {failed[-1]['error_message']}" if failed else "none recorded"
        )
        if summary.status == "stopped-at-budget":
            retry = "raise runner.budget_usd and re-run"
        elif c.exhausted:
            retry = "raise runner.max_attempts and re-run to retry them"
        else:
            retry = "re-run the same command to resume"
        errors = (
            f"; last error: {escape(last_error)}"
            if last_error != "none recorded" or c.exhausted
            else ""
        )
        err_console.print(
            f"[red]error:[/] run {summary.run_id} {summary.status}: {c.done} of {c.planned} "
            f"trials finished, {c.exhausted} failed every attempt{errors}. To go on, {retry}.",
            highlight=False,
        )
        raise typer.Exit(code=1)
