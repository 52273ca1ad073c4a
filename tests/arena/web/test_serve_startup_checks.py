"""`turinglab serve` refuses to start, in one line and before it writes anything, when it
cannot listen, when its Redis does not answer, or when its store is someone else's database
(issue 32: each used to be a traceback, or came after an arena run was written, or printed
"arena: http://…" as if it had started)."""

from __future__ import annotations

import os
import socket
import sqlite3
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from test_cli_errors import SRC, files
from turinglab.bench.arena_services import free_port

pytest.importorskip("fastapi")

PG = "postgresql://postgres@127.0.0.1:5432"


def serve(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    """`serve` that must refuse: it is given no time to start (a server that does start is
    stopped by the timeout, and fails the test)."""
    env = {k: v for k, v in os.environ.items() if k != "TURINGLAB_STORE"}
    env |= {
        "PYTHONPATH": str(SRC),
        "TURINGLAB_ADMIN_PASSWORD": "pw-for-tests-1234",
        "TURINGLAB_ARENA_SECRET": "s" * 32,
    }
    has_port = "--port" in args
    port = [] if has_port else ["--port", str(free_port())]
    cmd = [sys.executable, "-m", "turinglab", "serve", *args, *port]
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def refused(done: subprocess.CompletedProcess, *needles: str) -> str:
    lines = done.stderr.strip().splitlines()
    assert done.returncode != 0, done.stderr
    assert len(lines) == 1, done.stderr
    assert "arena: http" not in done.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def test_a_busy_port_or_an_address_not_of_this_machine(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = str(busy.getsockname()[1])
        refused(serve(tmp_path, "--port", port), f"--port {port}", "Address already in use")
    # TEST-NET-3 (RFC 5737): an address no machine here has
    refused(serve(tmp_path, "--host", "203.0.113.7"), "--host 203.0.113.7", "cannot listen")
    refused(serve(tmp_path, "--host", "999.1.1.1"), "--host 999.1.1.1", "cannot listen")
    assert files(tmp_path) == set()  # no store was created


def test_a_redis_that_does_not_answer_or_is_no_url(tmp_path: Path) -> None:
    refused(serve(tmp_path, "--redis", "redis://127.0.0.1:1/9"), "127.0.0.1:1", "no answer")
    refused(serve(tmp_path, "--redis", "notaurl"), "--redis notaurl: not a Redis URL")
    refused(
        serve(tmp_path, "--redis", "redis://:hunter2@127.0.0.1:1/9"), "redis://:***@127.0.0.1:1"
    )
    assert files(tmp_path) == set()  # no store, no arena run in one


def test_a_config_that_is_a_folder(tmp_path: Path) -> None:
    (tmp_path / "study.yaml").mkdir()
    refused(serve(tmp_path, "study.yaml"), "study.yaml is a folder")


def test_a_sqlite_file_that_is_not_a_store_is_left_alone(tmp_path: Path) -> None:
    other = tmp_path / "o.db"
    with sqlite3.connect(other) as conn:
        conn.execute("create table invoices(x)")
    kept = other.read_bytes()
    refused(serve(tmp_path, "--store", str(other)), "not a Turing Lab store", "(tables: invoices)")
    assert other.read_bytes() == kept and files(tmp_path) == {"o.db"}


@pytest.fixture
def foreign_database() -> Iterator[str]:
    """A PostgreSQL database of this test's own, holding someone else's table."""
    name = f"tl_foreign_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(f"{PG}/test", autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    with psycopg.connect(f"{PG}/{name}", autocommit=True) as conn:
        conn.execute("CREATE TABLE invoices (id int)")
    try:
        yield name
    finally:
        with psycopg.connect(f"{PG}/test", autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.mark.database
def test_a_postgres_database_holding_other_tables_is_left_alone(
    tmp_path: Path, foreign_database: str
) -> None:
    url = f"{PG}/{foreign_database}"
    refused(serve(tmp_path, "--store", url), "not a Turing Lab store", "(tables: invoices)")
    with psycopg.connect(url) as conn:
        found = conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'"
        )
        assert [r[0] for r in found] == ["invoices"]
    assert files(tmp_path) == set()
