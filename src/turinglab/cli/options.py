"""Options several commands share, and the check of a folder a command will write into."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from turinglab.cli.errors import fail
from turinglab.store.location import DEFAULT_STORE

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
