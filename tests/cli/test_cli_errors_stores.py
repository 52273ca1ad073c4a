"""Stores that are not ours, or not ours to change (issue 17), each met by a real process: a
command that only reads never writes, and every refusal is one line naming what is wrong."""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from test_cli_errors import CONFIG, files, one_error_line, turinglab, write_config
from turinglab.store.location import known_revisions

PG = "postgresql://postgres@127.0.0.1:5432"


def tables(db: Path) -> list[str]:
    with sqlite3.connect(db) as conn:
        return sorted(r[0] for r in conn.execute("SELECT name FROM sqlite_master"))


def test_a_database_that_is_not_a_store_is_never_changed(tmp_path: Path) -> None:
    other = tmp_path / "o.db"
    with sqlite3.connect(other) as conn:
        conn.execute("create table foo(x)")
    before = other.read_bytes()
    for args in (["runs"], ["report", "x"], ["export", "x"]):
        one_error_line(
            turinglab(*args, "--store", str(other), cwd=tmp_path),
            f"not a Turing Lab store: {other} (tables: foo)",
        )
    # Nor does a run add its tables to someone else's database.
    cfg = write_config(tmp_path, CONFIG)
    done = turinglab("run", str(cfg), "--store", str(other), "--no-progress", cwd=tmp_path)
    one_error_line(done, "not a Turing Lab store", "(tables: foo)")
    assert other.read_bytes() == before
    assert files(tmp_path) == {"o.db", "exp.yaml"}  # no journal left beside it either


def test_an_empty_file_is_a_new_store_for_run_only(tmp_path: Path) -> None:
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    one_error_line(
        turinglab("runs", "--store", str(empty), cwd=tmp_path),
        f"not a Turing Lab store: {empty} (no tables)",
    )
    assert empty.read_bytes() == b""
    cfg = write_config(tmp_path, CONFIG)
    done = turinglab("run", str(cfg), "--store", str(empty), "--no-progress", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "runs" in tables(empty)


def test_a_store_from_a_newer_release_is_named_in_one_line(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    cfg = write_config(tmp_path, CONFIG)
    done = turinglab("run", str(cfg), "--store", str(db), "--no-progress", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE alembic_version SET version_num = '0099_from_the_future'")
    before = db.read_bytes()
    ours = known_revisions()[-1]
    for args in (["runs"], ["run", str(cfg), "--no-progress"]):
        one_error_line(
            turinglab(*args, "--store", str(db), cwd=tmp_path),
            "newer Turing Lab",
            "0099_from_the_future",
            f"up to {ours}",
        )
    assert db.read_bytes() == before


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("postgresql://postgres@127.0.0.1:abc/test", "'abc'"),
        ("postgresql://postgres@127.0.0.1:99999/test", "out of range"),
        ("postgresql://postgres@[::1/test", "Invalid IPv6 URL"),
        ("postgresql://postgres:hunter2@127.0.0.1:0x1/test", "not a valid database URL"),
    ],
)
def test_store_url_errors_are_one_line(tmp_path: Path, url: str, problem: str) -> None:
    line = one_error_line(turinglab("runs", "--store", url, cwd=tmp_path), problem)
    assert "hunter2" not in line  # a password never reaches the terminal


@pytest.fixture
def empty_database() -> Iterator[str]:
    """A PostgreSQL database of this test's own, with nothing in it."""
    name = f"tl_truth_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(f"{PG}/test", autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield name
    finally:
        with psycopg.connect(f"{PG}/test", autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def pg_tables(database: str) -> list[str]:
    with psycopg.connect(f"{PG}/{database}") as conn:
        found = conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'"
        )
        return sorted(r[0] for r in found)


@pytest.mark.database
def test_read_only_commands_never_create_a_postgres_schema(
    tmp_path: Path, empty_database: str
) -> None:
    url = f"{PG}/{empty_database}"
    for args in (["runs"], ["report", "x"], ["export", "x"]):
        one_error_line(
            turinglab(*args, "--store", url, cwd=tmp_path),
            f"not a Turing Lab store: {url} (no tables)",
        )
    assert pg_tables(empty_database) == []
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE TABLE invoices (id int)")
    cfg = write_config(tmp_path, CONFIG)
    done = turinglab("run", str(cfg), "--store", url, "--no-progress", cwd=tmp_path)
    one_error_line(done, "not a Turing Lab store", "(tables: invoices)")
    assert pg_tables(empty_database) == ["invoices"]
    # An empty database is where a new store goes: `run` creates it there.
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DROP TABLE invoices")
    done = turinglab("run", str(cfg), "--store", url, "--no-progress", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "runs" in pg_tables(empty_database)
    listed = turinglab("runs", "--store", url, cwd=tmp_path)
    assert listed.returncode == 0 and "errs" in listed.stdout, listed.stderr
