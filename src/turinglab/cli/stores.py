"""The store a command names, opened (or refused in one line) and a run found in it; the
commands that list runs, export them and upgrade a store (`migrate`).

One rule for every command: only `run`, `serve` and `migrate` may create a store or change its
schema; every other command opens it read-only and, for a store at an older schema, says which
`turinglab migrate` it needs."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.table import Table

from turinglab.cli.errors import fail
from turinglab.cli.options import StoreOption, check_out_folder
from turinglab.cli.printing import console
from turinglab.store.location import DEFAULT_STORE, StoreLocationError, check_store

# Commands import what they use: `--help` must not pay for scipy, pandas, SQLAlchemy or the
# runner (DESIGN.md, "Cheap start-up").
if TYPE_CHECKING:
    from turinglab.store.database import RunInfo, Store


def open_store(
    store: str | None, config_store: str | None = None, *, create: bool = False
) -> Store:
    """The store the user named, checked first so that a bad location is one line (exit 2).
    Read-only commands leave `create` False: they never create a store nor upgrade one, and
    open it so that they cannot write to it."""
    from turinglab.store.database import Store, StoreError
    from turinglab.store.errors import DatabaseError

    location = store or os.environ.get("TURINGLAB_STORE") or config_store
    try:
        check_store(location, create=create)
        return Store(location, read_only=not create)
    except StoreLocationError as err:
        raise fail(str(err)) from None
    except StoreError as err:
        raise fail(str(err)) from None
    except DatabaseError as err:
        first = (str(getattr(err, "orig", None) or err).splitlines() or ["unknown error"])[0]
        raise fail(f"store {location or DEFAULT_STORE} cannot be opened: {first}") from None


def find_run(db: Store, ref: str) -> RunInfo:
    from turinglab.store.lookup import RunLookupError, pick_run

    try:
        return pick_run(db.list_runs(), ref, db.url)
    except RunLookupError as err:
        raise fail(str(err.args[0])) from None


def runs(store: StoreOption = None) -> None:
    """List stored runs with their status."""
    from turinglab.store.lookup import shown_status

    db = open_store(store)
    table = Table(title=escape(f"Runs in {db.url}"))
    for col in ("id", "name", "game", "status", "finished", "planned", "failed attempts"):
        table.add_column(col)
    for r in db.list_runs():
        table.add_row(
            r.id,
            escape(r.name),
            r.game,
            shown_status(r),
            str(r.finished),
            str(r.n_planned),
            str(r.failed_attempts),
        )
    console.print(table)


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
        console.print(made.summary(), markup=False)
        return
    if fmt == "study":
        from turinglab.study_export import NotAStudyRun, export_study

        try:
            done = export_study(db, info, out)
        except NotAStudyRun as err:
            raise fail(str(err)) from None
        console.print(
            f"wrote {done.path}: {done.rows} rows from {done.games} finished games"
            + (f" ({done.skipped} without a usable verdict, excluded)" if done.skipped else ""),
            markup=False,
        )
        return
    format_: ExportFormat = fmt  # type: ignore[assignment]
    try:
        written = export_run(db, info.id, out, format_)
    except OSError as err:
        raise fail(f"cannot write to {out}: {err.strerror}") from None
    for path in written:
        console.print(f"wrote {path}", markup=False)


def migrate(
    store: Annotated[
        str, typer.Argument(metavar="STORE", help="SQLite file or database URL (postgresql://…)")
    ],
) -> None:
    """Upgrade a store to this release's schema, in place (back it up first).

    `run` and `serve` upgrade the store they write to; every other command only reads, and
    asks for this instead."""
    from turinglab.store.database import Store, StoreError
    from turinglab.store.errors import DatabaseError
    from turinglab.store.location import release_schema

    try:
        found = check_store(store, create=False, writes=True)
    except StoreLocationError as err:
        raise fail(str(err)) from None
    try:
        Store(store).close()
    except StoreError as err:
        raise fail(str(err)) from None
    except DatabaseError as err:
        first = (str(getattr(err, "orig", None) or err).splitlines() or ["unknown error"])[0]
        raise fail(f"store {store}: the upgrade failed and was rolled back: {first}") from None
    head = release_schema()
    if found.at_head:
        console.print(f"store {store} is at schema {head} already", markup=False)
    else:
        console.print(
            f"store {store}: upgraded from schema {found.schema_version or '1'} to {head}",
            markup=False,
        )
