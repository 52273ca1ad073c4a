"""`turinglab serve CONFIG` writes where `--help` says: --store, then $TURINGLAB_STORE, then
the config's `store:`, then ./turinglab.db (issue 31: the config's store was ignored)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from turinglab.bench.arena_services import free_port

pytest.importorskip("fastapi")

CONFIG = """\
name: pilot
store: {store}
experiment:
  game: two-party
  interrogators: [eliza]
  ai_witnesses: [{{agent: eliza, persona: none, label: ELIZA-1966}}]
  time_limit_s: 120
"""


def started_store(cwd: Path, *args: str, env_store: str | None = None) -> str:
    """The store line `serve` printed once it was listening (then it is stopped)."""
    env = {k: v for k, v in os.environ.items() if k != "TURINGLAB_STORE"}
    env |= {"TURINGLAB_ADMIN_PASSWORD": "pw-for-tests-1234"}
    if env_store:
        env["TURINGLAB_STORE"] = env_store
    port = str(free_port())
    cmd = [sys.executable, "-m", "turinglab", "serve", *args, "--port", port]
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        assert proc.stderr is not None
        while time.monotonic() < deadline:
            line = proc.stderr.readline()
            assert line, f"serve exited ({proc.poll()}) before it named its store"
            if line.startswith("store: "):
                return line
        raise AssertionError("serve never named its store")
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_serve_honours_the_config_store_and_the_environment(tmp_path: Path) -> None:
    (tmp_path / "study.yaml").write_text(CONFIG.format(store="from-config.db"))
    line = started_store(tmp_path, "study.yaml")
    assert "from-config.db" in line
    assert (tmp_path / "from-config.db").is_file() and not (tmp_path / "turinglab.db").exists()

    line = started_store(tmp_path, "study.yaml", env_store=str(tmp_path / "from-env.db"))
    assert "from-env.db" in line and (tmp_path / "from-env.db").is_file()

    given = str(tmp_path / "given.db")
    line = started_store(tmp_path, "study.yaml", "--store", given, env_store="from-env.db")
    assert "given.db" in line
    assert not (tmp_path / "turinglab.db").exists()
