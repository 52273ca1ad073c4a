"""Check a store location before opening it, so a bad one costs the user one clear line.

Opening a store through SQLAlchemy on a wrong location fails deep inside a driver (hundreds of
lines of traceback), and on SQLite it silently creates a file. `check_store` looks first and
raises `StoreLocationError` with a message naming the store, what is wrong and what to do.
Read-only commands pass `create=False`: a store that does not exist yet is an error for them,
never something to create.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

# Same default as turinglab.store.database (kept here so that the CLI's help needs no SQLAlchemy).
DEFAULT_STORE = "turinglab.db"

_SQLITE_MAGIC = b"SQLite format 3\x00"
_POSTGRES_SCHEMES = ("postgresql", "postgres", "postgresql+psycopg")


class StoreLocationError(ValueError):
    """A store location that cannot be used; the message is one line for the user."""


@dataclass(frozen=True)
class StoreLocation:
    text: str  # as the user gave it (or the default)
    kind: str  # "sqlite" | "postgresql"
    path: Path | None = None  # SQLite file


def parse_location(text: str | None) -> StoreLocation:
    """What kind of store `text` names; unsupported schemes are refused here."""
    text = text or DEFAULT_STORE
    if "://" not in text:
        return StoreLocation(text, "sqlite", Path(text).expanduser())
    scheme = text.split("://", 1)[0].lower()
    if scheme == "sqlite" or scheme.startswith("sqlite+"):
        path = text.split("://", 1)[1]
        # sqlite:///relative.db and sqlite:////absolute.db, as SQLAlchemy reads them
        return StoreLocation(text, "sqlite", Path(path[1:] if path.startswith("/") else path))
    if scheme in _POSTGRES_SCHEMES:
        return StoreLocation(text, "postgresql")
    raise StoreLocationError(
        f"store {text}: unsupported scheme {scheme + '://'!r}; give a file path (SQLite) "
        "or a postgresql://user@host:port/database URL"
    )


def check_store(text: str | None, *, create: bool) -> StoreLocation:
    """Raise StoreLocationError unless the store can be opened (or, with `create`, created)."""
    location = parse_location(text)
    if location.kind == "sqlite":
        assert location.path is not None
        _check_sqlite(location.text, location.path, create=create)
    else:
        _check_postgres(location.text)
    return location


def _check_sqlite(text: str, path: Path, *, create: bool) -> None:
    if path.is_dir():
        raise StoreLocationError(
            f"store {text} is a folder, not a SQLite file; give a file path such as "
            f"--store {path / DEFAULT_STORE}"
        )
    if not path.exists():
        parent = path.parent
        if not create:
            raise StoreLocationError(
                f"store {text} does not exist (nothing was run into it); check --store or "
                "$TURINGLAB_STORE, or run an experiment first: turinglab run CONFIG"
            )
        if not parent.is_dir():
            what = "is not a folder" if parent.exists() else "does not exist"
            raise StoreLocationError(
                f"store {text}: folder {parent} {what}; create it (mkdir -p {parent}) "
                "or choose another --store"
            )
        return
    problem = _sqlite_file_problem(path)
    if problem:
        raise StoreLocationError(
            f"store {text} {problem}; give another --store (or restore the file from a copy)"
        )


def _sqlite_file_problem(path: Path) -> str | None:
    """Why `path` is not a usable SQLite database, or None. Cheap: reads the header and the
    schema, never the whole file."""
    try:
        with path.open("rb") as fh:
            header = fh.read(100)
    except OSError as err:
        return f"cannot be read ({err.strerror})"
    if not header:
        return None  # an empty file is an empty SQLite database
    if not header.startswith(_SQLITE_MAGIC):
        return "is not a SQLite database (wrong header: some other kind of file)"
    if len(header) < 100:
        return "is truncated (shorter than a SQLite header)"
    page_size = struct.unpack(">H", header[16:18])[0]
    page_size = 65536 if page_size == 1 else page_size
    pages = struct.unpack(">I", header[28:32])[0]
    size = path.stat().st_size
    # The in-header page count is valid when the file-change counters agree (SQLite ≥ 3.7).
    counters_agree = header[24:28] == header[92:96]
    if counters_agree and pages and size < pages * page_size:
        return f"is truncated ({size} bytes; its header says {pages * page_size})"
    import sqlite3

    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
            conn.execute("SELECT name FROM sqlite_master").fetchall()
    except sqlite3.DatabaseError as err:
        return f"is damaged ({err})"
    return None


def _check_postgres(text: str) -> None:
    import psycopg

    parts = urlsplit(text)
    dsn = parts._replace(scheme="postgresql").geturl()
    where = f"{parts.hostname or 'localhost'}:{parts.port or 5432}"
    database = parts.path.lstrip("/") or "(default)"
    try:
        with psycopg.connect(dsn, connect_timeout=5):
            return
    except psycopg.Error as err:
        message = " ".join(str(err).split())
        sqlstate = getattr(err, "sqlstate", None)
        lowered = message.lower()
    if sqlstate == "3D000" or ("database" in lowered and "does not exist" in lowered):
        hint = f"database {database!r} does not exist on {where}; create it (createdb {database})"
    elif sqlstate == "28000" or ("role" in lowered and "does not exist" in lowered):
        hint = f"role {parts.username!r} does not exist on {where}; give an existing user"
    elif "refused" in lowered:
        hint = f"nothing accepts connections at {where}; is PostgreSQL running, is the port right?"
    elif "password" in lowered or sqlstate == "28P01":
        hint = f"authentication failed at {where}; check the user and password"
    elif "resolve" in lowered or "name or service" in lowered:
        hint = f"host {parts.hostname!r} cannot be resolved; check the host name"
    elif "timeout" in lowered:
        hint = f"no answer from {where} in 5 s; check the host and port"
    else:
        hint = f"cannot connect to {where}: {message}"
    raise StoreLocationError(f"store {_redact(parts)}: {hint}")


def _redact(parts: object) -> str:
    """The URL without its password (it would end up in logs and bug reports)."""
    from urllib.parse import SplitResult

    assert isinstance(parts, SplitResult)
    if parts.password is None:
        return parts.geturl()
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
    return parts._replace(netloc=netloc).geturl()
