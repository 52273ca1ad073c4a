"""A store written by the schema-v2 release (tests/fixtures/store_v2.db, made by
make_store_v2.py at that commit) is upgraded in place on first use and reports exactly the
numbers that release reported; a new store is created at the head revision."""

from __future__ import annotations

import importlib.util
import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import MetaData, create_engine, insert, inspect, select

from turinglab.store.database import Store, store_url

FIXTURES = Path(__file__).parents[1] / "fixtures"
EXPECTED = json.loads((FIXTURES / "store_v2_numbers.json").read_text())
FAILED_KEYS = ("key", "trial_id", "attempt_no", "status", "error_kind", "error_message", "calls")


def _maker() -> Any:
    spec = importlib.util.spec_from_file_location("make_store_v2", FIXTURES / "make_store_v2.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _plain(data: Any) -> Any:
    return json.loads(json.dumps(data, sort_keys=True, default=str))


def check_same_numbers(store: Store) -> None:
    run_id = EXPECTED["run_id"]
    snap = _plain(_maker().snapshot(store, run_id))
    old, new = EXPECTED["numbers"], snap["numbers"]
    assert len(new["results"]) == len(old["results"]) == 43
    for before, after in zip(old["results"], new["results"], strict=True):
        assert after == before, before["key"]  # same keys, same values, histories included
    assert new == old  # pair tables, Turing scores, FD scores, outcome counts
    failed = [{k: f[k] for k in FAILED_KEYS} for f in snap["failed_attempts"]]
    assert failed == [{k: f[k] for k in FAILED_KEYS} for f in EXPECTED["failed_attempts"]]
    assert len(failed) == 5


def test_v2_sqlite_store_is_upgraded_in_place_with_the_same_numbers(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    shutil.copy(FIXTURES / "store_v2.db", path)
    store = Store(str(path))
    check_same_numbers(store)
    store.close()
    with sqlite3.connect(path) as conn:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        version = conn.execute("SELECT version_num FROM alembic_version").fetchone()[0]
        schema = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0]
        outcome_cols = {r[1] for r in conn.execute("PRAGMA table_info(outcomes)")}
        statuses = dict(conn.execute("SELECT status, count(*) FROM games GROUP BY status"))
    assert {
        "games",
        "seats",
        "judgements",
        "media",
        "control_events",
        "arena_processes",
        "alembic_version",
    } <= tables
    assert not any(t.endswith("_v2") for t in tables) and "attempts" not in tables
    assert version == "0010_arena_processes" and schema == "10"
    assert "histories" not in outcome_cols  # the transcript is kept once, in messages
    assert statuses == {"finished": 43, "failed": 5}
    # Opening it again is a no-op, and the migrated file is smaller than the original.
    Store(str(path)).close()
    assert path.stat().st_size <= (FIXTURES / "store_v2.db").stat().st_size


def test_migrated_schema_equals_a_new_store(tmp_path: Path) -> None:
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext

    from turinglab.store.schema import metadata

    path = tmp_path / "old.db"
    shutil.copy(FIXTURES / "store_v2.db", path)
    Store(str(path)).close()
    engine = create_engine(store_url(str(path)))
    with engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), metadata)
    engine.dispose()
    assert diff == []
    fresh = Store(str(tmp_path / "new.db"))
    with fresh.engine.connect() as conn:
        assert MigrationContext.configure(conn).get_current_revision() == "0010_arena_processes"
    fresh.close()


def copy_sqlite_to(url: str, source: Path) -> None:
    """Recreate the v2 fixture's tables and rows in another database, as that release would
    have written them there."""
    src = create_engine(store_url(str(source)))
    dst = create_engine(store_url(url))
    md = MetaData()
    md.reflect(src)
    md.create_all(dst)
    with src.connect() as s, dst.begin() as d:
        for table in md.sorted_tables:
            rows = [dict(r._mapping) for r in s.execute(select(table))]
            if rows:
                d.execute(insert(table), rows)
    src.dispose()
    dst.dispose()


@pytest.mark.database
def test_v2_postgresql_store_is_upgraded_in_place(postgres_url: str) -> None:
    copy_sqlite_to(postgres_url, FIXTURES / "store_v2.db")
    store = Store(postgres_url)
    check_same_numbers(store)
    assert "histories" not in {c["name"] for c in inspect(store.engine).get_columns("outcomes")}
    store.close()
    Store(postgres_url).close()  # at head: nothing to do


def test_a_v1_store_is_still_refused_with_one_clear_line(tmp_path: Path) -> None:
    from turinglab.store.database import StoreError

    path = tmp_path / "v1.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE runs (id TEXT PRIMARY KEY)")
    with pytest.raises(StoreError, match="schema 1, which has no migration"):
        Store(str(path))
