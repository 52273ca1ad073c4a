"""Alembic migrations of the store, run by `Store` when it opens a database.

A store made by this package is created at head (and stamped so); a store from the release
before migrations existed (`meta.schema_version = 2`, no `alembic_version`) is stamped at the
baseline revision and upgraded in place. The same path runs on SQLite and PostgreSQL.
"""

from __future__ import annotations

import functools
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, text

BASELINE_V2 = "0001_v2"  # the schema the first release wrote, before migrations


def _config(conn: Connection) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(Path(__file__).resolve().parent))
    cfg.attributes["connection"] = conn
    return cfg


@functools.cache
def _head() -> str | None:
    """The newest revision, read from the scripts once a process (each read loads them all)."""
    return ScriptDirectory(str(Path(__file__).resolve().parent)).get_current_head()


def upgrade(conn: Connection) -> None:
    """Bring the store to head; one already there is only read (opening a store is common:
    every command, every arena process; alembic's own no-op loads every script)."""
    current = conn.execute(text("SELECT version_num FROM alembic_version")).scalars().all()
    if current == [_head()]:
        return
    command.upgrade(_config(conn), "head")


def stamp(conn: Connection, revision: str) -> None:
    command.stamp(_config(conn), revision)
