"""The store's database: where it is, how its sessions are opened, its schema brought to head,
and how a write transaction begins. Every part of `Store` (runs, leases, game writes,
reading) builds on `StoreBase`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event, insert, inspect, select, text

from turinglab.store.schema import SCHEMA_VERSION, meta, metadata

DEFAULT_STORE = "turinglab.db"
IDLE_IN_TRANSACTION_MS = 15_000  # PostgreSQL ends a transaction left idle this long
_MIGRATION_LOCK = 7_420_113  # PostgreSQL advisory lock id: one process migrates at a time


class StoreError(RuntimeError):
    """The store cannot be used as it is (e.g. written by an incompatible version)."""


def store_url(location: str | None) -> str:
    """A database URL from a URL or a plain file path (a path means SQLite)."""
    location = location or DEFAULT_STORE
    if "://" not in location:
        return f"sqlite:///{Path(location).expanduser()}"
    # Plain postgresql:// would pick psycopg2, which we do not ship; psycopg 3 is installed.
    for prefix in ("postgresql://", "postgres://"):
        if location.startswith(prefix):
            return "postgresql+psycopg://" + location[len(prefix) :]
    return location


class StoreBase:
    def __init__(self, location: str | None = None, *, read_only: bool = False) -> None:
        """`read_only`: the commands that only read open a store so that they cannot change
        it: no schema upgrade (the caller has checked that it is at head), SQLite opened
        read-only leaving no -wal/-shm beside it, PostgreSQL transactions read-only."""
        self.url = store_url(location)
        self.read_only = read_only
        options = _engine_options(self.url, read_only=read_only)
        if read_only and self.url.startswith("sqlite"):
            self.engine: Engine = _read_only_sqlite(location)
        else:
            self.engine = create_engine(self.url, future=True, **options)
        if self.engine.dialect.name == "sqlite":
            pragmas = _sqlite_read_pragmas if read_only else _sqlite_pragmas
            event.listen(self.engine, "connect", pragmas)
            event.listen(self.engine, "begin", _sqlite_begin)
        self.session_name: str | None = None  # PostgreSQL application_name of our sessions
        if self.engine.dialect.name == "postgresql":
            event.listen(self.engine, "do_connect", self._name_new_session)
        if not read_only:
            self._prepare_schema()

    def name_sessions(self, name: str) -> None:
        """Name this process's PostgreSQL sessions (application_name), so that a process that
        claims its games after it went silent can end them (`end_sessions`): a paused process
        may hold a row lock in the middle of a transaction for as long as it is paused."""
        if self.dialect != "postgresql" or name == self.session_name:
            return
        self.session_name = name[:63]
        self.engine.dispose()  # sessions opened before carry no name: open new ones

    def _name_new_session(self, _dialect: Any, _rec: Any, _args: Any, params: Any) -> None:
        if self.session_name is not None:
            params["application_name"] = self.session_name

    def end_sessions(self, conn: Connection, name: str) -> int:
        """End every session of the process named `name` (one presumed dead): its open
        transactions roll back and its locks go. Returns how many were ended."""
        if self.dialect != "postgresql":
            return 0
        ended = conn.execute(
            text(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                "WHERE application_name = :name AND datname = current_database() "
                "AND pid <> pg_backend_pid()"
            ),
            {"name": name[:63]},
        ).scalar()
        return int(ended or 0)

    @property
    def dialect(self) -> str:
        return self.engine.dialect.name

    def _prepare_schema(self) -> None:
        """Create a new store at head, or bring an older one there (never refuse a v2 store)."""
        from turinglab.store import migrations

        upgraded_v2 = False
        with self.writing() as conn:
            if self.dialect == "postgresql":
                conn.execute(text(f"SELECT pg_advisory_xact_lock({_MIGRATION_LOCK})"))
            existing = set(inspect(conn).get_table_names())
            if "alembic_version" in existing:
                migrations.upgrade(conn)
            elif "runs" not in existing:
                metadata.create_all(conn)
                conn.execute(insert(meta).values(key="schema_version", value=str(SCHEMA_VERSION)))
                migrations.stamp(conn, "head")
            else:
                row = (
                    conn.execute(select(meta.c.value).where(meta.c.key == "schema_version")).first()
                    if "meta" in existing
                    else None
                )
                found = row.value if row is not None else "1"  # v1 had no version row
                if found != "2":
                    raise StoreError(
                        f"{self.url} was written with store schema {found}, which has no "
                        "migration (only schema 2 and later are upgraded). Export it with the "
                        "version that wrote it."
                    )
                migrations.stamp(conn, migrations.BASELINE_V2)
                migrations.upgrade(conn)
                upgraded_v2 = True
        if upgraded_v2 and self.dialect == "sqlite":
            # Give back the pages the dropped duplicate transcripts used.
            raw = self.engine.raw_connection()
            try:
                raw.cursor().execute("VACUUM")
            finally:
                raw.close()

    def ping(self) -> None:
        """One round trip to the database (a health check); raises when it cannot answer."""
        with self.engine.connect() as conn:
            conn.exec_driver_sql("SELECT 1")

    @contextlib.contextmanager
    def writing(self) -> Iterator[Connection]:
        """A write transaction. On SQLite it begins IMMEDIATE (takes the write lock first), so
        a transaction that reads before it writes cannot fail with a stale snapshot when
        another process wrote in between."""
        with self.engine.connect() as conn:
            conn.execution_options(turinglab_immediate=True)
            with conn.begin():
                yield conn

    def close(self) -> None:
        self.engine.dispose()


def _engine_options(url: str, *, read_only: bool = False) -> dict[str, Any]:
    """PostgreSQL: give up connecting after a while instead of hanging on a dead network, and
    let the server end a session left idle inside a transaction (a paused process would hold
    its row locks, and a takeover waiting on them, until it woke up). Read-only: the server
    refuses any write, whatever the code above tries."""
    if not url.startswith("postgresql"):
        return {}
    options = f"-c idle_in_transaction_session_timeout={IDLE_IN_TRANSACTION_MS}"
    if read_only:
        options += " -c default_transaction_read_only=on"
    return {"connect_args": {"connect_timeout": 10, "options": options}}


def _read_only_sqlite(location: str | None) -> Engine:
    """An engine on a SQLite file opened through a read-only `file:` URI (store/location.py
    says why it leaves no side files)."""
    import sqlite3

    from sqlalchemy.pool import NullPool

    from turinglab.store.location import parse_location, sqlite_read_uri

    path = parse_location(location).path
    assert path is not None

    def connect() -> sqlite3.Connection:  # looked at anew: a writer may have started since
        return sqlite3.connect(sqlite_read_uri(path), uri=True, check_same_thread=False)

    # NullPool: a short-lived command; each connection is a cheap open of the file.
    return create_engine("sqlite://", creator=connect, poolclass=NullPool, future=True)


def _sqlite_begin(conn: Connection) -> None:
    # pysqlite's own transaction handling is off (see _sqlite_pragmas): we say BEGIN ourselves,
    # so SAVEPOINTs work and writers can ask for the write lock up front.
    immediate = conn.get_execution_options().get("turinglab_immediate")
    conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")


def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
    dbapi_conn.isolation_level = None  # autocommit at the driver; _sqlite_begin opens transactions
    # WAL: readers never block the writer; NORMAL sync is crash-safe for a process kill.
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA synchronous=NORMAL")
    cur.execute("PRAGMA busy_timeout=30000")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.close()


def _sqlite_read_pragmas(dbapi_conn: Any, _record: Any) -> None:
    # A read-only file: its journal mode is the writer's to choose, not ours.
    dbapi_conn.isolation_level = None
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA busy_timeout=30000")
    cur.execute("PRAGMA query_only=ON")
    cur.close()
