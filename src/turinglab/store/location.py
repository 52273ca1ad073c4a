"""Check a store location before opening it, so a bad one costs the user one clear line.

Opening a store through SQLAlchemy on a wrong location fails deep inside a driver (hundreds of
lines of traceback), and on SQLite it silently creates a file. `check_store` looks first and
raises `StoreLocationError` with a message naming the store, what is wrong and what to do.
Read-only commands pass `create=False`: a store that does not exist yet is an error for them,
never something to create, and a store at an older schema is one they name (with the
`turinglab migrate` that upgrades it), never one they upgrade. A database that holds other
tables but not ours is never taken for a store (the schema would be added to someone else's
database), a store stamped by a newer release's migration is named as such, instead of failing
deep inside Alembic, and a command that writes is told before it starts when it cannot write.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any
from urllib.parse import SplitResult, urlsplit

# Same default as turinglab.store.database (kept here so that the CLI's help needs no SQLAlchemy).
DEFAULT_STORE = "turinglab.db"

_SQLITE_MAGIC = b"SQLite format 3\x00"
_POSTGRES_SCHEMES = ("postgresql", "postgres", "postgresql+psycopg")
_MIGRATIONS = Path(__file__).resolve().parent / "migrations" / "versions"
# A table every store has had since the first release: its presence makes a database a store.
_STORE_TABLE = "runs"


class StoreLocationError(ValueError):
    """A store location that cannot be used; the message is one line for the user."""


@dataclass(frozen=True)
class StoreLocation:
    text: str  # as the user gave it (or the default)
    kind: str  # "sqlite" | "postgresql"
    path: Path | None = None  # SQLite file
    # What check_store found: the store's `meta.schema_version`, and whether its migration
    # revision is this release's head (False also for a store not made yet).
    schema_version: str | None = None
    at_head: bool = False


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


def check_store(text: str | None, *, create: bool, writes: bool | None = None) -> StoreLocation:
    """Raise StoreLocationError unless the store can be opened (or, with `create`, created).

    `writes` (default: `create`) is for the commands that may change a store's schema (`run`,
    `serve`, `migrate`): the file and its folder must be writable. The others only read, and
    need a store already at this release's schema."""
    writes = create if writes is None else writes
    location = parse_location(text)
    if location.kind == "sqlite":
        assert location.path is not None
        tables = _check_sqlite(location.text, location.path, create=create)
        if writes:
            _check_sqlite_writable(location.text, location.path)
    else:
        tables = _check_postgres(location.text)
    if tables is not None:
        _check_is_store(_shown(location), tables, create=create)
        if not writes:
            _check_at_head(location, tables)
        at_head = tables.revision == known_revisions()[-1]
        location = replace(location, schema_version=tables.schema_version, at_head=at_head)
    return location


def _check_at_head(location: StoreLocation, tables: _Tables) -> None:
    """A read-only command never upgrades a store: one at an older schema is named, with the
    command that upgrades it."""
    head = known_revisions()[-1]
    if tables.revision == head:
        return
    at = tables.schema_version or "1"
    raise StoreLocationError(
        f"store {_shown(location)} is at schema {at}, this release needs {release_schema()}: "
        f"run `turinglab migrate {location.text}` (read-only commands never upgrade a store)"
    )


def release_schema() -> int:
    """The schema number this release's stores have (`meta.schema_version` at head)."""
    from turinglab.store.schema import SCHEMA_VERSION  # SQLAlchemy: only once it is asked

    return SCHEMA_VERSION


def sqlite_read_uri(path: Path) -> str:
    """A `file:` URI that opens `path` read-only and leaves nothing beside it.

    A plain read-only open of a WAL database creates its -wal and -shm files and, unable to
    checkpoint, leaves them behind. Without a -wal file the main file holds every committed
    transaction, so it is opened as immutable (no locks, no side files); with one (a writer is
    at work, or one crashed) the side files exist already and the ordinary read-only open sees
    the writer's commits."""
    from urllib.parse import quote

    uri = f"file:{quote(str(path.resolve()))}?mode=ro"
    wal = path.with_name(path.name + "-wal")
    return uri if wal.exists() else uri + "&immutable=1"


def _check_sqlite_writable(text: str, path: Path) -> None:
    """A command that writes must be able to: the file (opened for writing, changed in no way)
    and its folder (SQLite keeps -wal and -shm files beside the store)."""
    import tempfile

    if path.exists():
        try:
            with path.open("r+b"):
                pass
        except OSError as err:
            raise StoreLocationError(
                f"store {text}: cannot write the file ({err.strerror}); give a --store this "
                "process can write"
            ) from None
    try:  # a file without a name, gone when closed: nothing is left in the folder
        with tempfile.TemporaryFile(dir=path.parent):
            pass
    except OSError as err:
        raise StoreLocationError(
            f"store {text}: cannot write in its folder {path.parent} ({err.strerror}; SQLite "
            "keeps -wal and -shm files beside the store); give a --store this process can write"
        ) from None


@dataclass(frozen=True)
class _Tables:
    names: list[str]
    revision: str | None  # alembic_version.version_num, when there is one
    schema_version: str | None = None  # meta.schema_version, when there is one


def _shown(location: StoreLocation) -> str:
    if location.kind == "sqlite":
        return location.text
    return _redact(urlsplit(location.text))


def _check_is_store(shown: str, tables: _Tables, *, create: bool) -> None:
    """A database with no tables is a new store only for a command that creates one; one with
    tables but not ours is never a store; one at a revision this release lacks is newer."""
    if _STORE_TABLE not in tables.names:
        if not tables.names and create:
            return
        listed = f"tables: {', '.join(sorted(tables.names)[:8])}" if tables.names else "no tables"
        more = f" and {len(tables.names) - 8} more" if len(tables.names) > 8 else ""
        raise StoreLocationError(
            f"not a Turing Lab store: {shown} ({listed}{more}); "
            + (
                "give a new file or an empty database for a new store"
                if create
                else "check --store or $TURINGLAB_STORE"
            )
        )
    known = known_revisions()
    if tables.revision is not None and tables.revision not in known:
        raise StoreLocationError(
            f"store {shown} was written by a newer Turing Lab (store revision "
            f"{tables.revision}; this release knows revisions up to {known[-1]}); "
            "upgrade turinglab to open it"
        )


def known_revisions() -> list[str]:
    """The migration revisions this release ships, oldest first (read from the files, so that
    no Alembic import is needed to check a store)."""
    revisions = []
    for path in sorted(_MIGRATIONS.glob("*.py")):
        found = re.search(r'^revision\s*=\s*["\']([^"\']+)["\']', path.read_text(), re.M)
        if found:
            revisions.append(found.group(1))
    return revisions


def _check_sqlite(text: str, path: Path, *, create: bool) -> _Tables | None:
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
        return None
    problem = _sqlite_file_problem(path)
    if problem:
        raise StoreLocationError(
            f"store {text} {problem}; give another --store (or restore the file from a copy)"
        )
    return _sqlite_tables(path)


def _sqlite_tables(path: Path) -> _Tables:
    import sqlite3

    if path.stat().st_size == 0:
        return _Tables([], None)
    # Read-only: looking must never change the file (nor create a journal beside it).
    with sqlite3.connect(sqlite_read_uri(path), uri=True) as conn:
        names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        tables = _Tables(names, _revision(conn, names), _schema_version(conn, names))
    conn.close()
    return tables


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
        conn = sqlite3.connect(sqlite_read_uri(path), uri=True)
        try:
            conn.execute("SELECT name FROM sqlite_master").fetchall()
        finally:
            conn.close()
    except sqlite3.OperationalError as err:
        # e.g. "unable to open database file": a folder we may not read or write, not damage
        return f"cannot be opened ({err})"
    except sqlite3.DatabaseError as err:
        return f"is damaged ({err})"
    return None


def _postgres_parts(text: str) -> tuple[SplitResult, str]:
    """The URL's parts and "host:port", or one line saying what in the URL is wrong."""
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError as err:
        # e.g. "Port could not be cast to integer value as 'abc'", "Invalid IPv6 URL"
        shown = re.sub(r"(//[^/@:]*:)[^/@]*@", r"\1***@", text)  # no password in logs
        raise StoreLocationError(
            f"store {shown}: not a valid database URL ({err}); the form is "
            "postgresql://user@host:port/database"
        ) from None
    if port == 0:
        raise StoreLocationError(f"store {text}: port 0 is not a port; give 1 to 65535")
    return parts, f"{parts.hostname or 'localhost'}:{port or 5432}"


def _check_postgres(text: str) -> _Tables:
    import psycopg

    parts, where = _postgres_parts(text)
    dsn = parts._replace(scheme="postgresql").geturl()
    database = parts.path.lstrip("/") or "(default)"
    try:
        with psycopg.connect(dsn, connect_timeout=5) as conn:
            return _postgres_tables(conn)
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


def _postgres_tables(conn: object) -> _Tables:
    """The tables of the schema the store would use (the first on the search path). Only reads."""
    import psycopg

    assert isinstance(conn, psycopg.Connection)
    names = [
        r[0]
        for r in conn.execute(
            "SELECT table_name FROM information_schema.tables "
            "WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'"
        )
    ]
    tables = _Tables(names, _revision(conn, names), _schema_version(conn, names))
    conn.rollback()
    return tables


def _revision(conn: Any, tables: list[str]) -> str | None:
    """The Alembic revision a store is stamped with (None when it has none), through any DB-API
    connection."""
    if "alembic_version" not in tables:
        return None
    row = conn.execute("SELECT version_num FROM alembic_version").fetchone()
    return row[0] if row else None


def _schema_version(conn: Any, tables: list[str]) -> str | None:
    """The schema number a store's `meta` table records (None when it has none)."""
    if "meta" not in tables:
        return None
    row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    return str(row[0]) if row else None


def _redact(parts: SplitResult) -> str:
    """The URL without its password (it would end up in logs and bug reports)."""
    if parts.password is None:
        return parts.geturl()
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
    return parts._replace(netloc=netloc).geturl()
