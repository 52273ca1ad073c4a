"""The environment block stored with every attempt (GTT paper, appendix B.1)."""

from __future__ import annotations

import platform
import socket
import subprocess
import sys
from functools import cache
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any


def _git(args: list[str], cwd: Path) -> str | None:
    try:
        out = subprocess.run(
            ["git", *args], cwd=cwd, capture_output=True, text=True, timeout=5, check=True
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip()


def _container_id() -> str | None:
    # Docker and most runtimes leave the container hash in the cgroup path.
    try:
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            tail = line.rsplit("/", 1)[-1]
            if len(tail) >= 64 and all(c in "0123456789abcdef" for c in tail[:64]):
                return tail[:64]
    except OSError:
        pass
    return None


@cache
def environment_block() -> dict[str, Any]:
    source = Path(__file__).resolve().parent
    commit = _git(["rev-parse", "HEAD"], source)
    try:
        package_version = version("turinglab")
    except PackageNotFoundError:
        package_version = None
    return {
        "python": sys.version.split()[0],
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "hostname": socket.gethostname(),
        "turinglab": package_version,
        "git_commit": commit,
        "git_branch": _git(["rev-parse", "--abbrev-ref", "HEAD"], source) if commit else None,
        "git_dirty": bool(_git(["status", "--porcelain"], source)) if commit else None,
        "container": _container_id(),
    }
