"""The command line. Thin: it parses, calls the library, and prints."""

from __future__ import annotations

import os
import sys
from collections.abc import Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
from rich.console import Console
from rich.table import Table

from turinglab.cli_bench import bench_app
from turinglab.cli_itt import itt_app
from turinglab.cli_stats import stats_app
from turinglab.cli_tagging import tag_app
from turinglab.store.location import DEFAULT_STORE, StoreLocationError, check_store

# Commands import what they use: `--help` must not pay for scipy, pandas, SQLAlchemy or the
# runner (DESIGN.md, "Cheap start-up").
if TYPE_CHECKING:
    from turinglab.config import AgentConfig, ExperimentConfig
    from turinglab.store.database import RunInfo, Store

STUDY_SUFFIXES = (".csv", ".jsonl", ".ndjson", ".txt")
T = TypeVar("T")

app = typer.Typer(
    help="Turing Lab: run Turing tests between people and machines, store them, analyse them.",
    no_args_is_help=True,
    add_completion=False,
)
app.add_typer(bench_app, name="bench")
app.add_typer(stats_app, name="stats")
app.add_typer(tag_app, name="tag")
app.add_typer(itt_app, name="itt")

# Piped output (CI logs, README examples) gets a fixed width wide enough for the GTT tables.
console = Console(width=None if sys.stdout.isatty() else 120)
# Errors are never wrapped: a command to copy must stay on one line.
err_console = Console(stderr=True, soft_wrap=True)

StoreOption = Annotated[
    str | None,
    typer.Option(
        "--store",
        help=f"SQLite file or database URL (postgresql://…). Default: $TURINGLAB_STORE, the "
        f"config's `store`, or ./{DEFAULT_STORE}",
    ),
]
ConfigOption = Annotated[
    Path | None, typer.Option("--config", "-c", help="experiment config whose agents to use")
]


def fail(message: str) -> typer.Exit:
    err_console.print(f"[red]error:[/] {message}", highlight=False)
    return typer.Exit(code=2)


def open_store(
    store: str | None, config_store: str | None = None, *, create: bool = False
) -> Store:
    """The store the user named, checked first so that a bad location is one line (exit 2).
    Read-only commands leave `create` False: they never create a store."""
    from sqlalchemy.exc import SQLAlchemyError

    from turinglab.store.database import Store, StoreError

    location = store or os.environ.get("TURINGLAB_STORE") or config_store
    try:
        check_store(location, create=create)
        return Store(location)
    except StoreLocationError as err:
        raise fail(str(err)) from None
    except StoreError as err:
        raise fail(str(err)) from None
    except SQLAlchemyError as err:
        first = (str(getattr(err, "orig", None) or err).splitlines() or ["unknown error"])[0]
        raise fail(f"store {location or DEFAULT_STORE} cannot be opened: {first}") from None


def find_run(db: Store, ref: str) -> RunInfo:
    from turinglab.store.lookup import RunLookupError, pick_run

    try:
        return pick_run(db.list_runs(), ref, db.url)
    except RunLookupError as err:
        raise fail(str(err.args[0])) from None


def check_out_folder(out: Path, flag: str = "--out") -> None:
    """An output folder must not be an existing file, nor a place we may not write (either
    would be a traceback later, after the work)."""
    if out.exists() and not out.is_dir():
        raise fail(f"{flag} {out} is an existing file; give a folder (it is created if missing)")
    import tempfile

    existing = out
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent  # the folder `out` would be created in
    try:  # a file made and removed at once: permissions, read-only mounts, /proc, even as root
        with tempfile.TemporaryFile(dir=existing):
            pass
    except OSError as err:
        where = "" if existing == out else f" (in {existing}, where it would be created)"
        raise fail(
            f"{flag} {out}: cannot write there{where}: {err.strerror}; give another {flag}"
        ) from None


def agent_configs(config_path: Path | None) -> dict[str, AgentConfig]:
    from turinglab.config import EMBEDDED_AGENTS, ConfigError, load_config

    if config_path is None:
        return dict(EMBEDDED_AGENTS)
    try:
        return load_config(config_path).all_agents()
    except ConfigError as err:
        raise fail(str(err)) from None


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
        err_console.print(f"[red]error:[/] {problem}", highlight=False)
    if problems:
        raise fail(problems[-1] + "; nothing was run")


def _preflight(config: ExperimentConfig) -> None:
    import asyncio

    from turinglab.runner.preflight import preflight

    agents = config.used_agents()
    # A key that is not set is the first thing to say (the endpoint would answer 401 anyway).
    for name, cfg in agents.items():
        env = getattr(cfg, "api_key_env", None)
        if env and not os.environ.get(env):
            raise fail(f"agent {name!r}: environment variable {env} (api_key_env) is not set")
    failures = asyncio.run(preflight(agents))
    if failures:
        for failure in failures[:-1]:
            err_console.print(f"[red]error:[/] {failure.line()}", highlight=False)
        raise fail(failures[-1].line() + "; nothing was run")


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


@app.command()
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
) -> None:
    """Run (or resume) the experiment a config file describes, then print its results."""
    import asyncio

    from turinglab.agents.registry import AgentSetupError, require_extras
    from turinglab.config import ConfigError, GTTExperiment, load_config
    from turinglab.games.kinds import kind_named
    from turinglab.report.console import print_gtt_report
    from turinglab.runner.execute import run_experiment
    from turinglab.runner.plan import PlanTooLarge
    from turinglab.runner.progress import RichProgress

    try:
        config = load_config(config_path)
    except ConfigError as err:
        raise fail(str(err)) from None
    if kind_named(config.experiment.game).needs_people:
        game = config.experiment.game
        raise fail(f"{game} needs people: use `turinglab serve {config_path}`")
    config = _with_max_in_flight(config, max_in_flight)
    require_extras(config.used_agents())  # a missing extra leaves no store behind
    location = store or os.environ.get("TURINGLAB_STORE") or config.store
    try:
        check_store(location, create=True)
    except StoreLocationError as err:
        raise fail(str(err)) from None
    # Before the store is created: a run that cannot start leaves nothing behind.
    _local_preflight(config)
    if preflight:
        _preflight(config)
    db = open_store(store, config.store, create=True)
    view = RichProgress(console, label=config.name) if progress else None
    # Unwrapped: a line such as "Joining run …: 8/40 trials already finished." stays whole.
    say = lambda m: console.print(m, highlight=False, soft_wrap=True)  # noqa: E731
    try:
        summary = asyncio.run(until_terminated(run_experiment(config, db, say=say, progress=view)))
    except (KeyboardInterrupt, Terminated) as stop:
        err_console.print(
            "\n[yellow]Stopped"
            + (" (SIGTERM)" if isinstance(stop, Terminated) else "")
            + ".[/] Finished trials are stored; trials in flight were dropped. "
            f"Resume with: turinglab run {config_path}" + (f" --store {store}" if store else "")
        )
        # 128 + the signal's number, as a shell reports a process ended by it
        raise typer.Exit(code=143 if isinstance(stop, Terminated) else 130) from None
    except (AgentSetupError, PlanTooLarge) as err:
        raise fail(str(err)) from None
    c = summary.counters
    console.print(
        f"Run {summary.run_id} {summary.status}: {c.finished} trials finished now "
        f"({c.done}/{c.planned} in all), {c.failed_attempts} failed attempts, "
        f"{summary.stats.calls} API calls, {summary.elapsed_s:.1f} s. Stored in {db.url}"
    )
    if isinstance(config.experiment, GTTExperiment):
        print_gtt_report(
            console,
            db.results(summary.run_id),
            title=f"{config.name} ({summary.run_id})",
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
        retry = (
            "raise runner.max_attempts and re-run to retry them"
            if c.exhausted
            else "re-run the same command to resume"
        )
        err_console.print(
            f"[red]error:[/] run {summary.run_id} {summary.status}: {c.done} of {c.planned} "
            f"trials finished, {c.exhausted} failed every attempt; last error: "
            f"{last_error}. To go on, {retry}.",
            highlight=False,
        )
        raise typer.Exit(code=1)


@app.command()
def report(
    run_ref: Annotated[
        str,
        typer.Argument(
            metavar="RUN|STUDY",
            help="a run id, id prefix or name — or a study file (.csv/.jsonl) of human verdicts",
        ),
    ],
    store: StoreOption = None,
    out: Annotated[
        Path | None, typer.Option(help="write the HTML report and figures (PNG, SVG) here")
    ] = None,
    missing: Annotated[
        str,
        typer.Option(help="how trials without a verdict enter p̂: wrong | exclude | as-0 | as-1"),
    ] = "wrong",
    epsilon: Annotated[float, typer.Option(help="threshold ε of the comparator A ≥ε B")] = 0.005,
    leaderboard: Annotated[
        list[str] | None,
        typer.Option(help="NAME=CSV external leaderboard for rank agreement (repeatable)"),
    ] = None,
    stt: Annotated[
        Path | None, typer.Option(help="Strong Turing Test preferences to add to a study report")
    ] = None,
    tags: Annotated[
        list[str] | None,
        typer.Option(
            help="CODEBOOK=CSV codes from `turinglab tag games --out` for a study report "
            "(strategies or reasons; repeatable)"
        ),
    ] = None,
    max_transcripts: Annotated[
        int | None, typer.Option(help="embed at most this many transcripts (page size)")
    ] = None,
    plain_transcripts: Annotated[
        bool, typer.Option(help="embed transcripts as plain JSON (a bigger page)")
    ] = False,
    anova: Annotated[
        list[str] | None,
        typer.Option(
            help="ITT study: a judge demographic column for the two-way ANOVA (give two; "
            "default: the first two of gender, age_group, education, english with 2+ levels)"
        ),
    ] = None,
) -> None:
    """Print the GTT tables of a run, or write the full HTML report with --out.

    Given a study file of human verdicts instead of a run, writes the study report (--out)."""
    from turinglab.report.console import print_gtt_report

    if not run_ref.strip():
        raise fail(
            "RUN|STUDY is empty; give a run id, id prefix or name (see `turinglab runs`), "
            "a study file or an ITT study folder"
        )
    if out is not None:
        check_out_folder(out)
    if Path(run_ref).is_dir():
        # An ITT study folder (responses.csv, judgements.csv, study.json).
        from turinglab.report.itt_report import itt_report

        if anova and len(anova) != 2:
            raise fail(f"--anova takes two demographic columns (give it twice), not {len(anova)}")
        try:
            written = itt_report(Path(run_ref), out or Path("report"), anova=anova)
        except (OSError, ValueError) as err:
            raise fail(str(err)) from None
        console.print(f"wrote {written}")
        return
    if Path(run_ref).suffix.lower() in STUDY_SUFFIXES:
        # A file name is never taken for a run name (a typo must not open, or create, a store).
        study = Path(run_ref)
        if not study.is_file():
            raise fail(f"study file {study}: no such file")
        study_report(study, out or Path("report"), stt, tags or [])
        return
    if missing not in ("wrong", "exclude", "as-0", "as-1"):
        raise fail(f"--missing must be wrong, exclude, as-0 or as-1, not {missing!r}")
    if not 0 <= epsilon < 1:
        raise fail(f"--epsilon must be in [0, 1), not {epsilon:g}")
    db = open_store(store)
    info = find_run(db, run_ref)
    if info.game != "gtt":
        if out is None:
            # Nothing is written without --out: the outcomes, and the command for the report.
            print_game_outcomes(db, info.id, info.game, title=f"{info.name} ({info.id})")
            return
        # A human-style run is reported through its study file, as an arena study would be.
        study_run_report(db, info, out, tags or [])
        return
    if out is not None:
        from turinglab.report.gtt_report import build_gtt_report

        boards = {}
        for item in leaderboard or []:
            name, sep, csv_path = item.partition("=")
            if not sep or not csv_path:
                raise fail(f"--leaderboard takes NAME=CSV, not {item!r}")
            boards[name] = Path(csv_path)
        try:
            written = build_gtt_report(
                db,
                info.id,
                out,
                missing=missing,
                epsilon=epsilon,
                leaderboards=boards,
                max_transcripts=max_transcripts,
                compress_transcripts=not plain_transcripts,
            )
        except (OSError, ValueError) as err:
            raise fail(str(err)) from None
        console.print(f"wrote {written} (figures as PNG and SVG beside it)")
        return
    from turinglab.store.lookup import shown_status

    universe = info.config.get("experiment", {}).get("universe")
    print_gtt_report(
        console,
        db.results(info.id),
        title=f"{info.name} ({info.id}, {shown_status(info)})",
        planned=info.n_planned,
        universe=universe,
        missing=missing,  # type: ignore[arg-type]  # checked above
    )


def print_game_outcomes(db: Store, run_id: str, game: str, title: str = "") -> None:
    """A non-GTT run's outcomes by status (its analysis is the study report)."""
    from collections import Counter

    rows = db.results(run_id, include_flagged=True)
    counts = Counter(r["status"] for r in rows)
    shown = ", ".join(f"{status}: {n}" for status, n in sorted(counts.items())) or "none"
    lead = f"{title}: " if title else ""
    console.print(f"{lead}{game}: {len(rows)} finished games ({shown})", highlight=False)
    if game in ("three-party", "two-party", "strong"):
        console.print(
            f"Study report: turinglab report {run_id} --out DIR "
            f"(or turinglab export {run_id} --format study)",
            highlight=False,
        )


def study_run_report(db: Store, info: RunInfo, out: Path, tags: list[str]) -> None:
    """Export a human-style run as its study file into `out`, then report that file."""
    from turinglab.study_export import NotAStudyRun, export_study

    try:
        done = export_study(db, info, out)
    except NotAStudyRun as err:
        raise fail(f"{err}; `turinglab itt` reports conversation runs") from None
    console.print(f"wrote {done.path}: {done.rows} rows from {done.games} finished games")
    if done.rows == 0:
        raise fail(f"run {info.id} has no game with a usable verdict to report")
    if done.kind == "stt":
        # The study report needs verdict rows; an STT-only run gets its preference tables.
        from turinglab.human.strong import load_stt, stt_scores

        for score in stt_scores(load_stt(done.path)):
            console.print(str(score), highlight=False)
        return
    study_report(done.path, out, None, tags)


def study_report(path: Path, out: Path, stt_path: Path | None, tags: list[str]) -> None:
    import time

    from turinglab.human.schema import load_study
    from turinglab.human.strong import load_stt
    from turinglab.report.human_report import build_study_report, stderr_progress

    started = time.perf_counter()
    try:
        study = load_study(path)
        stderr_progress(f"read {path}: {len(study)} rows in {time.perf_counter() - started:.1f} s")
        preferences = load_stt(stt_path) if stt_path is not None else None
        tagger = {book: load_game_codes(Path(csv)) for book, csv in map(_split_tags, tags)}
        written = build_study_report(
            study,
            out,
            stt=preferences,
            tagger=tagger or None,
            validated=True,
            progress=stderr_progress,
        )
    except UnicodeDecodeError as err:
        raise fail(f"{path}: not UTF-8 text (byte offset {err.start}); save it as UTF-8") from None
    except (OSError, ValueError) as err:
        raise fail(str(err)) from None
    console.print(
        f"wrote {written} (figures as PNG and SVG beside it) in "
        f"{time.perf_counter() - started:.1f} s"
    )


def _split_tags(item: str) -> tuple[str, str]:
    book, sep, csv = item.partition("=")
    if not sep or book not in ("strategies", "reasons") or not csv:
        raise ValueError(f"--tags takes strategies=CSV or reasons=CSV, not {item!r}")
    return book, csv


def load_game_codes(path: Path) -> dict[str, set[str]]:
    """Codes per game from `turinglab tag games --out` (one row per judgement; a three-party
    game's two conversations are pooled, as a game is what the shares count)."""
    import pandas as pd

    table = pd.read_csv(path, dtype=str, keep_default_na=False)
    if not {"game", "codes"} <= set(table.columns):
        raise ValueError(f"{path}: expected columns game and codes (from `turinglab tag games`)")
    codes: dict[str, set[str]] = {}
    for game, joined in zip(table["game"], table["codes"], strict=True):
        codes.setdefault(game, set()).update(c for c in joined.split(";") if c)
    return codes


@app.command()
def runs(store: StoreOption = None) -> None:
    """List stored runs with their status."""
    from turinglab.store.lookup import shown_status

    db = open_store(store)
    table = Table(title=f"Runs in {db.url}")
    for col in ("id", "name", "game", "status", "finished", "planned", "failed attempts"):
        table.add_column(col)
    for r in db.list_runs():
        table.add_row(
            r.id,
            r.name,
            r.game,
            shown_status(r),
            str(r.finished),
            str(r.n_planned),
            str(r.failed_attempts),
        )
    console.print(table)


@app.command()
def export(
    run_ref: Annotated[str, typer.Argument(metavar="RUN", help="run id, id prefix or name")],
    fmt: Annotated[
        str, typer.Option("--format", "-f", help="csv | jsonl | parquet | study | itt")
    ] = "csv",
    out: Annotated[Path, typer.Option(help="output folder")] = Path("exports"),
    store: StoreOption = None,
) -> None:
    """Write results (one row per trial) and transcripts (one JSON object per trial).

    `--format study` writes a three-/two-party run as the study file `turinglab report` reads
    (a Strong Turing Test run as its preference file, for `report --stt`); `--format itt` writes
    a conversation or itt-response run as the responses file of an ITT dataset, and an arena
    run's live integrative-test sessions as a judgements file for `turinglab itt score`."""
    from turinglab.store.export import ExportFormat, export_run

    if fmt not in ("csv", "jsonl", "parquet", "study", "itt"):
        raise fail(f"--format must be csv, jsonl, parquet, study or itt, not {fmt!r}")
    check_out_folder(out)
    db = open_store(store)
    info = find_run(db, run_ref)
    if fmt == "itt":
        from turinglab.itt.from_run import export_itt

        try:
            made = export_itt(db, info, out)
        except ValueError as err:
            raise fail(str(err)) from None
        console.print(made.summary())
        return
    if fmt == "study":
        from turinglab.study_export import NotAStudyRun, export_study

        try:
            done = export_study(db, info, out)
        except NotAStudyRun as err:
            raise fail(str(err)) from None
        console.print(
            f"wrote {done.path}: {done.rows} rows from {done.games} finished games"
            + (f" ({done.skipped} without a usable verdict left out)" if done.skipped else "")
        )
        return
    format_: ExportFormat = fmt  # type: ignore[assignment]
    try:
        written = export_run(db, info.id, out, format_)
    except OSError as err:
        raise fail(f"cannot write to {out}: {err.strerror}") from None
    for path in written:
        console.print(f"wrote {path}")


@app.command()
def serve(
    config_path: Annotated[
        Path | None,
        typer.Argument(
            metavar="[CONFIG]",
            help="a three-/two-party, strong, gtt or live-itt config; "
            "none: play the embedded agents",
        ),
    ] = None,
    host: Annotated[str, typer.Option(help="address to listen on")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="port to listen on")] = 8000,
    store: StoreOption = None,
    redis: Annotated[
        str | None, typer.Option(help="redis://… shared by several server processes")
    ] = None,
    itt_study: Annotated[
        Path | None, typer.Option(help="an ITT study folder for people to judge, at /judge")
    ] = None,
    itt_batch_size: Annotated[int, typer.Option(help="trials per ITT judge")] = 20,
    proxy_headers: Annotated[
        bool, typer.Option(help="behind a reverse proxy: trust its X-Forwarded-For/-Proto")
    ] = False,
    forwarded_allow_ips: Annotated[
        str, typer.Option(help="the proxies trusted with --proxy-headers (comma-separated)")
    ] = "127.0.0.1",
    itt_collect: Annotated[
        Path | None,
        typer.Option(
            help="an ITT stimuli file (or folder with stimuli.csv) for people to "
            "answer, at /respond"
        ),
    ] = None,
) -> None:
    """Start the browser arena: people play Turing tests with each other and with AI witnesses.

    The lobby is at /, the admin pages at /admin (password from TURINGLAB_ADMIN_PASSWORD, or
    generated and printed)."""
    from turinglab.extras import require_extra

    require_extra("arena")
    from turinglab.arena.serve import serve as serve_arena

    if not 0 < port < 65536:
        raise fail(f"--port must be between 1 and 65535, not {port}")
    if config_path is not None and not config_path.is_file():
        raise fail(f"config {config_path}: no such file")
    if itt_batch_size < 1:
        raise fail(f"--itt-batch-size must be at least 1, not {itt_batch_size}")
    serve_arena(
        config_path,
        host=host,
        port=port,
        store=store,
        redis=redis,
        itt_study=itt_study,
        itt_batch_size=itt_batch_size,
        itt_collect=itt_collect,
        proxy_headers=proxy_headers,
        forwarded_allow_ips=forwarded_allow_ips,
    )


@app.command()
def agents(config_path: ConfigOption = None) -> None:
    """List the agents available: the embedded ones and those a config declares."""
    from turinglab.agents.registry import describe
    from turinglab.config import EMBEDDED_AGENTS

    table = Table(title="Agents")
    for col in ("name", "kind", "what", "source"):
        table.add_column(col)
    for name, cfg in agent_configs(config_path).items():
        source = "embedded" if EMBEDDED_AGENTS.get(name) == cfg else str(config_path)
        table.add_row(name, cfg.kind, describe(cfg), source)
    console.print(table)


@app.command()
def chat(
    agent_name: Annotated[str, typer.Argument(metavar="AGENT")],
    config_path: ConfigOption = None,
    seed: Annotated[int, typer.Option(help="seed for the agent's sampling")] = 0,
) -> None:
    """Talk to an agent in the terminal (stdin line by line when it is not a TTY).

    Without a TTY each input line gets exactly one output line: the reply, newlines flattened.
    """
    import asyncio

    from turinglab.agents.base import CallContext, ChatMessage
    from turinglab.agents.errors import AgentError
    from turinglab.agents.registry import AgentSetupError, build_agent
    from turinglab.agents.retry import Caller, RetryPolicy

    configs = agent_configs(config_path)
    if agent_name not in configs:
        raise fail(f"unknown agent {agent_name!r}; known: {', '.join(sorted(configs))}")
    try:
        agent = build_agent(agent_name, configs[agent_name])
    except AgentSetupError as err:
        raise fail(str(err)) from None
    interactive = sys.stdin.isatty()
    caller = Caller(RetryPolicy(), default_limit=4, seed=seed)

    async def converse() -> None:
        history: list[ChatMessage] = []
        if interactive:
            console.print(f"Chatting with [bold]{agent_name}[/]. Ctrl-D to leave.")
        try:
            while True:
                line = console.input("[bold cyan]you>[/] ") if interactive else sys.stdin.readline()
                if not line:
                    break
                history.append(ChatMessage("user", line.rstrip("\n")))
                ctx = CallContext(seed=seed + len(history), participant="chat")
                reply = await caller(agent, history, ctx)
                history.append(ChatMessage("assistant", reply.text))
                if interactive:
                    console.print(f"[bold green]{agent_name}>[/] {reply.text}", highlight=False)
                else:
                    print(" ".join(reply.text.split()), flush=True)
        finally:
            await agent.aclose()

    try:
        asyncio.run(converse())
    except (EOFError, KeyboardInterrupt):
        pass
    except AgentError as err:
        raise fail(f"{agent_name}: {err}") from None


def main() -> None:
    """The console entry point: a feature whose optional extra is missing is one line, exit 2."""
    from rich.markup import escape

    from turinglab.extras import MissingExtra

    try:
        app()
    except MissingExtra as err:  # `[arena]` is not markup
        err_console.print(f"[red]error:[/] {escape(str(err))}", highlight=False)
        raise SystemExit(2) from None
