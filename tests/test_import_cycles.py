"""No import cycle anywhere in turinglab, counting every import statement.

import-linter's layer contracts catch an upward import between the layers they name, not a
cycle inside one layer (the arena is one layer), and a cycle closed by a `TYPE_CHECKING` import
or an import inside a function runs fine and so goes unnoticed. This test reads every module's
source and counts every `import` wherever it stands: at module level, under `if TYPE_CHECKING:`,
in a function. An import names the module it imports (`from pkg import name` names `pkg.name`
when that is a module, else `pkg`), not the packages above it, as import-linter does.

A cycle is broken by moving what both sides need into a small module both import (e.g.
games/transcript.py, arena/core/waiting.py, arena/cluster/cluster_view.py) or by passing a
collaborator in.
"""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import networkx as nx

import turinglab


def module_names(root: Path, package: str) -> dict[str, Path]:
    """Every module of the package under `root`: dotted name -> file."""
    names = {}
    for path in root.rglob("*.py"):
        parts = [package, *path.relative_to(root).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join(parts)] = path
    return names


def imported(node: ast.Import | ast.ImportFrom, module: str, names: dict[str, Path]) -> list[str]:
    """The modules of the package one import statement names."""
    if isinstance(node, ast.Import):
        asked = [alias.name for alias in node.names]
    else:
        if node.level:  # relative: from the module's own package, up `level - 1` packages
            own = module if names[module].name == "__init__.py" else module.rpartition(".")[0]
            parts = own.split(".")
            parts = parts[: len(parts) - (node.level - 1)]
            start = ".".join([*parts, node.module] if node.module else parts)
        else:
            start = node.module or ""
        # `from pkg import name`: the module pkg.name if there is one, else pkg itself
        asked = [f"{start}.{a.name}" if f"{start}.{a.name}" in names else start for a in node.names]
    found = []
    for name in asked:
        while name and name not in names:  # a name outside the package, or not a module
            name = name.rpartition(".")[0]
        if name and name != module:
            found.append(name)
    return found


def import_graph(root: Path, package: str) -> nx.DiGraph:
    """module -> every module of the package it imports; each edge keeps a file:line."""
    names = module_names(root, package)
    graph = nx.DiGraph()
    graph.add_nodes_from(names)
    for module, path in names.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import | ast.ImportFrom):
                for name in imported(node, module, names):
                    where = f"{path.relative_to(root.parent)}:{node.lineno}"
                    graph.add_edge(module, name, where=where)
    return graph


def cycles(graph: nx.DiGraph) -> list[str]:
    """One cycle per strongly connected group of modules, written out with its import lines."""
    found = []
    for group in nx.strongly_connected_components(graph):
        if len(group) < 2:
            continue
        loop = nx.find_cycle(graph.subgraph(group))
        steps = [f"{a} -> {b} ({graph.edges[a, b]['where']})" for a, b in loop]
        members = ", ".join(sorted(group))
        found.append(f"{members} import each other, e.g.\n  " + "\n  ".join(steps))
    return sorted(found)


def test_turinglab_has_no_import_cycle() -> None:
    root = Path(turinglab.__file__).parent
    graph = import_graph(root, "turinglab")
    assert graph.number_of_edges() > 500  # the whole package was read, not an empty folder
    found = cycles(graph)
    assert not found, "import cycles in turinglab:\n" + "\n".join(found)


def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "pkg"
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root


def test_a_cycle_closed_by_type_checking_or_a_function_import_is_found(tmp_path: Path) -> None:
    root = _package(
        tmp_path,
        {
            "__init__.py": "",
            "sub/__init__.py": "",
            "sub/table.py": "from pkg.sub.events import Said\n",
            "sub/events.py": """\
                from typing import TYPE_CHECKING
                if TYPE_CHECKING:
                    from .table import Message
                class Said: ...
            """,
            "hub.py": "from pkg import helper\n",
            "helper.py": """\
                def use():
                    from . import hub
            """,
            "alone.py": "import pkg.sub.table\nfrom pkg.sub import events\n",
        },
    )
    found = cycles(import_graph(root, "pkg"))
    assert len(found) == 2, found
    assert "pkg.sub.events -> pkg.sub.table (pkg/sub/events.py:3)" in "\n".join(found)
    assert "pkg.helper -> pkg.hub (pkg/helper.py:2)" in "\n".join(found)


def test_imports_in_one_direction_are_no_cycle(tmp_path: Path) -> None:
    root = _package(
        tmp_path,
        {
            "__init__.py": "",
            "low.py": "import json\n",
            "mid.py": "from pkg.low import x\nfrom . import low\n",
            "top.py": "from .mid import y\nimport pkg.low\n",
        },
    )
    graph = import_graph(root, "pkg")
    edges = {("pkg.mid", "pkg.low"), ("pkg.top", "pkg.mid"), ("pkg.top", "pkg.low")}
    assert set(graph.edges) == edges
    assert cycles(graph) == []
