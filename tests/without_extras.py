"""Run the CLI as if the optional extras were not installed.

The blocked modules are every top-level module of a distribution that only the extras pull in
(the extras' requirements and everything they need, minus whatever the core install needs),
read from pyproject.toml and the installed metadata, so a new heavy dependency is blocked
without editing this list. A meta-path finder refuses them exactly as a missing package does.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from functools import cache
from importlib.metadata import PackageNotFoundError, packages_distributions, requires
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
HEAVY_EXTRAS = ("local", "itt", "arena")

# Installs the blocker, then runs `python -m turinglab ARGS` (argv: -c, blocked, args...).
BOOT = """
import runpy, sys
from importlib.abc import MetaPathFinder

blocked = set(filter(None, sys.argv[1].split(",")))
early = sorted(blocked & {name.split(".")[0] for name in sys.modules})
if early:
    raise SystemExit(f"imported before the blocker was installed: {early}")

class NotInstalled(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in blocked:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, NotInstalled())
sys.argv = ["turinglab", *sys.argv[2:]]
runpy.run_module("turinglab", run_name="__main__", alter_sys=True)
"""


def _closure(requirements: list[str]) -> set[str]:
    """Distribution names these requirements install, transitively (installed metadata)."""
    seen: set[str] = set()
    todo = [Requirement(r) for r in requirements]
    while todo:
        req = todo.pop()
        if req.marker is not None and not req.marker.evaluate({"extra": ""}):
            continue
        name = canonicalize_name(req.name)
        if name in seen or name == "turinglab":
            continue
        seen.add(name)
        try:
            needs = [Requirement(r) for r in requires(req.name) or []]
        except PackageNotFoundError:
            continue  # not installed here (e.g. a platform marker): nothing to block
        for need in needs:
            # A dependency of one of the requested extras (psycopg[binary]) is a plain one.
            if need.marker is not None and any(
                need.marker.evaluate({"extra": extra}) for extra in req.extras
            ):
                need.marker = None
            todo.append(need)
    return seen


@cache
def extra_only_modules() -> tuple[str, ...]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    core = _closure(project["dependencies"])
    heavy: list[str] = []
    for extra in HEAVY_EXTRAS:
        heavy += project["optional-dependencies"][extra]
    only_extras = _closure(heavy) - core
    modules = {
        module
        for module, dists in packages_distributions().items()
        # private helpers (setuptools' _distutils_hack, loaded by a .pth file) are not imports
        if module.isidentifier()
        and not module.startswith("_")
        and {canonicalize_name(d) for d in dists} <= only_extras
    }
    return tuple(sorted(modules))


def turinglab_without(
    blocked: tuple[str, ...], *args: str, cwd: Path, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", BOOT, ",".join(blocked), *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=300,
    )
