"""Every statement the database sees is written in `turinglab.store`: no module outside it
imports SQLAlchemy (type-only imports under TYPE_CHECKING aside), reaches for the store's
tables, engine or transactions, or executes on a connection. A second path beside `Store` is
how arena games once bypassed it; this test keeps a new one from growing."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import turinglab

SRC = Path(turinglab.__file__).resolve().parent
STORE = SRC / "store"
# Attributes that open a database path: the engine, a raw DBAPI link; and `Store.writing()`,
# a write transaction (a call without arguments: the commit gate's `writing(seq)` is not one).
DATABASE_ATTRIBUTES = {"engine", "raw_connection", "exec_driver_sql"}
CONNECTION_NAMES = {"conn", "connection", "session", "engine"}  # receivers of .execute()


# The benchmarks and the simulator check the arena from outside: they read PostgreSQL's own
# pg_stat_activity, audit what was stored in plain SQL, and (the simulator) make a crashed
# process's database refuse it, deliberately not through the code they check.
OUTSIDE_CHECKERS = (SRC / "bench", SRC / "sim")


def _outside_store() -> list[Path]:
    return sorted(
        p
        for p in SRC.rglob("*.py")
        if STORE not in p.parents and not any(c in p.parents for c in OUTSIDE_CHECKERS)
    )


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    """ids of the nodes inside `if TYPE_CHECKING:` blocks (never run)."""
    hidden: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and ast.unparse(node.test).endswith("TYPE_CHECKING"):
            for inner in node.body:
                hidden.update(id(n) for n in ast.walk(inner))
    return hidden


def _imported(node: ast.AST) -> Iterator[str]:
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names)
    elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
        yield node.module
        yield from (f"{node.module}.{alias.name}" for alias in node.names)


def _offences(source: str, where: str) -> list[str]:
    tree = ast.parse(source, filename=where)
    hidden = _type_checking_nodes(tree)
    found = []
    for node in ast.walk(tree):
        line = f"{where}:{getattr(node, 'lineno', '?')}"
        for name in _imported(node):
            if id(node) in hidden:
                continue
            if name == "sqlalchemy" or name.startswith("sqlalchemy."):
                found.append(f"{line}: imports {name}")
            if name == "turinglab.store.schema" or name.startswith("turinglab.store.schema."):
                found.append(f"{line}: imports the store's tables ({name})")
        if isinstance(node, ast.Attribute) and node.attr in DATABASE_ATTRIBUTES:
            found.append(f"{line}: uses .{node.attr}")
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "writing"
            and not node.args
            and not node.keywords
        ):
            found.append(f"{line}: opens a write transaction")
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("execute", "scalar", "scalars")
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id in CONNECTION_NAMES
        ):
            found.append(f"{line}: executes on {node.func.value.id}")
    return found


def test_no_sql_outside_the_store() -> None:
    offences = [
        o
        for path in _outside_store()
        for o in _offences(path.read_text(encoding="utf-8"), str(path.relative_to(SRC.parent)))
    ]
    assert offences == [], "SQL outside turinglab/store/:\n" + "\n".join(offences)


def test_the_scan_sees_what_it_forbids() -> None:
    """The checker itself: each kind of offence is caught, a type-only import is not."""
    probe = (
        "from typing import TYPE_CHECKING\n"
        "from sqlalchemy import select\n"
        "from turinglab.store.schema import games\n"
        "if TYPE_CHECKING:\n"
        "    from sqlalchemy import Connection\n"
        "def f(store, conn):\n"
        "    with store.engine.connect() as c:\n"
        "        conn.execute(select(games))\n"
        "    with store.writing() as w:\n"
        "        gate.writing(3)\n"
    )
    found = sorted(o.split(": ", 1)[1] for o in _offences(probe, "probe.py"))
    assert found == [
        "executes on conn",
        "imports sqlalchemy",
        "imports sqlalchemy.select",
        "imports the store's tables (turinglab.store.schema)",
        "imports the store's tables (turinglab.store.schema.games)",
        "opens a write transaction",
        "uses .engine",
    ]


def test_the_itt_export_reads_arena_runs_without_the_arena() -> None:
    """itt/from_run.py reads live-ITT sessions through the store and the games layer."""
    tree = ast.parse((SRC / "itt" / "from_run.py").read_text(encoding="utf-8"))
    imported = [name for node in ast.walk(tree) for name in _imported(node)]
    assert not [n for n in imported if n.startswith("turinglab.arena")]
