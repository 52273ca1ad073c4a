"""Kill the runner mid-run (SIGKILL, and Ctrl-C), run the same command again: every planned
trial ends up finished exactly once."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from turinglab.testing.fake_openai import start_fake_server_process

pytestmark = [pytest.mark.slow, pytest.mark.server]

N_PER_PAIR = 10  # 4 ordered pairs → 40 trials


def write_config(tmp_path: Path, base_url: str) -> Path:
    agent = {"kind": "openai", "base_url": base_url}
    config = {
        "name": "crash-test",
        "agents": {"a": {**agent, "model": "model-a"}, "b": {**agent, "model": "model-b"}},
        "experiment": {"game": "gtt", "universe": ["a", "b"], "trials_per_pair": N_PER_PAIR},
        "runner": {"max_trials_in_flight": 6},
        "store": str(tmp_path / "crash.db"),
    }
    path = tmp_path / "crash.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def restore_sigint() -> None:
    """In the child before exec: SIGINT back to its default. A suite started as a background
    job (`nohup make test &`) inherits SIGINT as ignored, and Python then never raises
    KeyboardInterrupt; a user's foreground `turinglab run` always has the default."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start_run(config: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "turinglab", "run", str(config), "--no-progress"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=restore_sigint,
    )


def finished_count(db: Path) -> int:
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(db) as conn:
            return int(conn.execute("SELECT count(*) FROM outcomes").fetchone()[0])
    except sqlite3.OperationalError:  # tables not created yet
        return 0


def wait_for_finished(db: Path, at_least: int, timeout_s: float = 60) -> int:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        n = finished_count(db)
        if n >= at_least:
            return n
        time.sleep(0.05)
    raise AssertionError(f"fewer than {at_least} trials finished within {timeout_s} s")


def check_exactly_once(db: Path) -> None:
    with sqlite3.connect(db) as conn:
        planned = conn.execute("SELECT count(*) FROM trials").fetchone()[0]
        finished = conn.execute("SELECT count(DISTINCT trial_id) FROM outcomes").fetchone()[0]
        rows = conn.execute("SELECT count(*) FROM outcomes").fetchone()[0]
        ok_attempts = conn.execute("SELECT count(*) FROM games WHERE status='finished'").fetchone()[
            0
        ]
        orphan = conn.execute(
            "SELECT count(*) FROM trials t LEFT JOIN outcomes o ON o.trial_id = t.id "
            "WHERE o.trial_id IS NULL"
        ).fetchone()[0]
    assert planned == 4 * N_PER_PAIR
    assert finished == rows == ok_attempts == planned
    assert orphan == 0


def test_sigkill_then_rerun_finishes_every_trial_once(tmp_path: Path) -> None:
    with start_fake_server_process(latency_s=0.1) as server:
        config = write_config(tmp_path, server.base_url)
        db = tmp_path / "crash.db"
        proc = start_run(config)
        killed_at = wait_for_finished(db, at_least=8)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        assert proc.returncode == -signal.SIGKILL
        survivors = finished_count(db)
        assert killed_at <= survivors < 4 * N_PER_PAIR  # killed mid-run, nothing finished lost

        rerun = subprocess.run(
            [sys.executable, "-m", "turinglab", "run", str(config), "--no-progress"],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert rerun.returncode == 0, rerun.stderr
        assert f"{survivors}/{4 * N_PER_PAIR} trials already finished" in rerun.stdout
        assert f"{4 * N_PER_PAIR - survivors} trials finished now" in rerun.stdout
        check_exactly_once(db)


def test_ctrl_c_stops_cleanly_and_says_how_to_resume(tmp_path: Path) -> None:
    with start_fake_server_process(latency_s=0.1) as server:
        config = write_config(tmp_path, server.base_url)
        db = tmp_path / "crash.db"
        proc = start_run(config)
        wait_for_finished(db, at_least=5)
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=30)
        assert proc.returncode == 130
        assert f"Resume with: turinglab run {config}" in err
        with sqlite3.connect(db) as conn:
            status = conn.execute("SELECT status FROM runs").fetchone()[0]
            failed = conn.execute("SELECT count(*) FROM games WHERE status='failed'").fetchone()
        assert status == "interrupted"
        assert failed[0] == 0  # interrupted trials are dropped, not recorded as failures

        rerun = start_run(config)
        _out, err = rerun.communicate(timeout=120)
        assert rerun.returncode == 0, err
        check_exactly_once(db)
