"""Alembic migrations of the store, run by `Store` when it opens a database.

A store made by this package is created at head (and stamped so); a store from the release
before migrations existed (`meta.schema_version = 2`, no `alembic_version`) is stamped at the
baseline revision and upgraded in place. The same path runs on SQLite and PostgreSQL.
"""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy import Connection

BASELINE_V2 = "0001_v2"  # the schema the first release wrote, before migrations


def _config(conn: Connection) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(Path(__file__).resolve().parent))
    cfg.attributes["connection"] = conn
    return cfg


def upgrade(conn: Connection) -> None:
    command.upgrade(_config(conn), "head")


def stamp(conn: Connection, revision: str) -> None:
    command.stamp(_config(conn), revision)
