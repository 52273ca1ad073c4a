"""One rule for every command that opens a store (issue 32): only `run`, `serve` and `migrate`
create a store or change its schema; the others open it read-only, leave nothing beside it, and
name the `turinglab migrate` an older store needs. Each case is a real process, and the folder
and the database are compared before and after."""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from test_cli_errors import CONFIG, files, one_error_line, turinglab, write_config
from turinglab.store.location import known_revisions
from turinglab.store.schema import SCHEMA_VERSION

NOW, OLDER = SCHEMA_VERSION, SCHEMA_VERSION - 1  # this release's schema and the one before


@contextlib.contextmanager
def unwritable(path: Path) -> Iterator[None]:
    """`path` (a file or a folder) that no process may change. Root ignores file modes, so
    as root the file gets the immutable attribute instead."""
    if os.geteuid() == 0:
        made = subprocess.run(["chattr", "+i", str(path)], capture_output=True, text=True)
        if made.returncode != 0:
            pytest.skip(f"cannot make {path} immutable here: {made.stderr.strip()}")
        try:
            yield
        finally:
            subprocess.run(["chattr", "-i", str(path)], check=True)
    else:
        mode = path.stat().st_mode
        path.chmod(0o555 if path.is_dir() else 0o444)
        try:
            yield
        finally:
            path.chmod(mode)


def made_store(tmp_path: Path, db: Path) -> Path:
    cfg = write_config(tmp_path, CONFIG)
    done = turinglab("run", str(cfg), "--store", str(db), "--no-progress", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    return cfg


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def downgrade(db: Path, revision: str) -> None:
    """Take a store back to an older release's schema (that release's own migration path)."""
    from alembic import command
    from sqlalchemy import create_engine

    from turinglab.store.migrations import _config

    engine = create_engine(f"sqlite:///{db}")
    with engine.begin() as conn:
        command.downgrade(_config(conn), revision)
    engine.dispose()


def test_read_only_commands_never_upgrade_an_older_store(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    made_store(tmp_path, db)
    older = known_revisions()[-2]
    downgrade(db, older)
    before, kept = files(tmp_path), digest(db)
    for args in (["runs"], ["report", "errs"], ["export", "errs"]):
        one_error_line(
            turinglab(*args, "--store", str(db), cwd=tmp_path),
            f"store {db} is at schema {OLDER}, this release needs {NOW}",
            f"run `turinglab migrate {db}`",
        )
    assert digest(db) == kept and files(tmp_path) == before
    # The upgrade is asked for by name, and then every command reads the store.
    done = turinglab("migrate", str(db), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert f"upgraded from schema {OLDER} to {NOW}" in done.stdout
    with sqlite3.connect(db) as conn:
        assert (
            conn.execute("SELECT version_num FROM alembic_version").fetchone()[0]
            == (known_revisions()[-1])
        )
    listed = turinglab("runs", "--store", str(db), cwd=tmp_path)
    assert listed.returncode == 0 and "errs" in listed.stdout, listed.stderr
    again = turinglab("migrate", str(db), cwd=tmp_path)
    assert again.returncode == 0 and f"at schema {NOW} already" in again.stdout, again.stderr


def test_migrate_refuses_what_is_not_a_store_to_upgrade(tmp_path: Path) -> None:
    one_error_line(
        turinglab("migrate", str(tmp_path / "absent.db"), cwd=tmp_path), "does not exist"
    )
    other = tmp_path / "o.db"
    with sqlite3.connect(other) as conn:
        conn.execute("create table foo(x)")
    kept = digest(other)
    one_error_line(turinglab("migrate", str(other), cwd=tmp_path), "not a Turing Lab store")
    assert digest(other) == kept and files(tmp_path) == {"o.db"}


def test_a_newer_store_is_refused_with_nothing_left_beside_it(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    cfg = made_store(tmp_path, db)
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE alembic_version SET version_num = '0099_from_the_future'")
    before, kept = files(tmp_path), digest(db)
    for args in (["runs"], ["migrate", str(db)], ["run", str(cfg), "--no-progress"]):
        store = [] if args[0] == "migrate" else ["--store", str(db)]
        one_error_line(turinglab(*args, *store, cwd=tmp_path), "newer Turing Lab")
        assert files(tmp_path) == before, args  # no -wal or -shm either
    assert digest(db) == kept


def test_a_read_only_store_file_is_read_and_never_written(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    cfg = made_store(tmp_path, db)
    before, kept = files(tmp_path), digest(db)
    with unwritable(db):
        listed = turinglab("runs", "--store", str(db), cwd=tmp_path)
        assert listed.returncode == 0 and "errs" in listed.stdout, listed.stderr
        shown = turinglab("report", "errs", "--store", str(db), cwd=tmp_path)
        assert shown.returncode == 0, shown.stderr
        assert files(tmp_path) == before  # no -wal or -shm beside it
        again = {**CONFIG, "name": "errs2"}
        write_config(tmp_path, again, "exp2.yaml")
        done = turinglab("run", "exp2.yaml", "--store", str(db), "--no-progress", cwd=tmp_path)
        one_error_line(done, f"store {db}: cannot write the file")
    assert files(tmp_path) == before | {"exp2.yaml"} and digest(db) == kept
    assert cfg.exists()


def test_a_store_in_a_read_only_folder(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    db = folder / "s.db"
    cfg = made_store(tmp_path, db)
    before, kept = files(tmp_path), digest(db)
    with unwritable(folder):
        listed = turinglab("runs", "--store", str(db), cwd=tmp_path)
        assert listed.returncode == 0 and "errs" in listed.stdout, listed.stderr
        assert "damaged" not in listed.stderr
        for store in (db, folder / "new.db"):
            done = turinglab("run", str(cfg), "--store", str(store), "--no-progress", cwd=tmp_path)
            one_error_line(done, f"store {store}: cannot write in its folder {folder}")
    assert files(tmp_path) == before and digest(db) == kept


def test_a_run_into_a_place_nobody_can_write_is_one_line(tmp_path: Path) -> None:
    cfg = write_config(tmp_path, CONFIG)
    done = turinglab(
        "run", str(cfg), "--store", "/proc/turinglab.db", "--no-progress", cwd=tmp_path
    )
    one_error_line(done, "store /proc/turinglab.db: cannot write in its folder /proc")
    assert files(tmp_path) == {"exp.yaml"}


@pytest.mark.database
def test_an_older_postgres_store_is_read_only_until_migrated(
    tmp_path: Path, postgres_url: str
) -> None:
    from alembic import command
    from sqlalchemy import create_engine, text

    from turinglab.store.database import store_url
    from turinglab.store.migrations import _config

    made_store_at = write_config(tmp_path, CONFIG)
    done = turinglab(
        "run", str(made_store_at), "--store", postgres_url, "--no-progress", cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    engine = create_engine(store_url(postgres_url))
    with engine.begin() as conn:
        command.downgrade(_config(conn), known_revisions()[-2])

    def revision() -> str:
        with engine.connect() as conn:
            return str(conn.execute(text("SELECT version_num FROM alembic_version")).scalar())

    for args in (["runs"], ["report", "errs"]):
        one_error_line(
            turinglab(*args, "--store", postgres_url, cwd=tmp_path),
            f"is at schema {OLDER}, this release needs {NOW}",
            f"turinglab migrate {postgres_url}",
        )
    assert revision() == known_revisions()[-2]
    migrated = turinglab("migrate", postgres_url, cwd=tmp_path)
    assert migrated.returncode == 0, migrated.stderr
    assert f"from schema {OLDER} to {NOW}" in migrated.stdout, migrated.stdout
    assert revision() == known_revisions()[-1]
    listed = turinglab("runs", "--store", postgres_url, cwd=tmp_path)
    assert listed.returncode == 0 and "errs" in listed.stdout, listed.stderr
    engine.dispose()
