"""Runs stopped, joined and listed, and the other one-line refusals of issue 17, each met by a
real process: SIGTERM is handled like Ctrl-C, a dead run is `interrupted`, a second worker says
it joins, and statistics, taggers and reports refuse what they cannot do in one line."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from test_cli_errors import SRC, files, one_error_line, turinglab
from turinglab.testing.fake_openai import FakeServerProcess, start_fake_server_process

LEASE_S = "2"  # workers renew the heartbeat every 0.7 s; a run silent for 2 s is dead


@pytest.fixture
def slow_server() -> Iterator[FakeServerProcess]:
    with start_fake_server_process(latency_s=0.2) as server:
        yield server


def slow_config(tmp_path: Path, base_url: str) -> Path:
    agent = {"kind": "openai", "base_url": base_url}
    config = {
        "name": "stoppable",
        "agents": {"a": {**agent, "model": "model-a"}, "b": {**agent, "model": "model-b"}},
        "experiment": {"game": "gtt", "universe": ["a", "b"], "trials_per_pair": 10},
        "runner": {"max_trials_in_flight": 2},
        "store": str(tmp_path / "s.db"),
    }
    path = tmp_path / "slow.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def env() -> dict[str, str]:
    found = {**os.environ, "PYTHONPATH": str(SRC), "TURINGLAB_LEASE_S": LEASE_S}
    found["PYTHONUNBUFFERED"] = "1"
    found.pop("TURINGLAB_STORE", None)
    return found


def start(config: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "turinglab", "run", str(config), "--no-progress"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env(),
    )


def finished(db: Path) -> int:
    try:
        with sqlite3.connect(db) as conn:
            return int(conn.execute("SELECT count(*) FROM outcomes").fetchone()[0])
    except sqlite3.OperationalError:  # not created yet
        return 0


def wait_until(what: str, check: object, timeout_s: float = 90) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if check():  # type: ignore[operator]
            return
        time.sleep(0.05)
    raise AssertionError(f"not reached within {timeout_s} s: {what}")


def runs_status(tmp_path: Path, db: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "turinglab", "runs", "--store", str(db)],
        capture_output=True,
        text=True,
        env=env(),
        cwd=tmp_path,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.server
def test_sigterm_stops_a_run_like_ctrl_c(tmp_path: Path, slow_server: FakeServerProcess) -> None:
    config = slow_config(tmp_path, slow_server.base_url)
    db = tmp_path / "s.db"
    proc = start(config)
    wait_until("3 trials finished", lambda: finished(db) >= 3)
    proc.send_signal(signal.SIGTERM)
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err  # 128 + SIGTERM, and not silent
    assert "Stopped (SIGTERM)" in err and f"Resume with: turinglab run {config}" in err
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT status FROM runs").fetchone()[0] == "interrupted"
    assert "interrupted" in runs_status(tmp_path, db)


@pytest.mark.server
def test_a_second_worker_joins_and_a_killed_run_is_listed_interrupted(
    tmp_path: Path, slow_server: FakeServerProcess
) -> None:
    config = slow_config(tmp_path, slow_server.base_url)
    db = tmp_path / "s.db"
    first = start(config)
    second = None
    try:
        wait_until("2 trials finished", lambda: finished(db) >= 2)
        assert "running" in runs_status(tmp_path, db)
        second = start(config)
        assert second.stdout is not None
        joined = second.stdout.readline()  # unbuffered: the line arrives as it is printed
        assert joined.startswith("Joining run ") and "in progress (heartbeat" in joined, joined
        assert "trials already finished." in joined
    finally:
        for proc in (first, second):
            if proc is not None:
                proc.kill()  # SIGKILL: no worker is left to say the run stopped
                proc.communicate(timeout=30)
    # Nobody renews the heartbeat now: within a lease the run is listed as interrupted.
    wait_until(
        "the run is listed as interrupted",
        lambda: "interrupted (last heartbeat" in runs_status(tmp_path, db),
    )
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT status FROM runs").fetchone()[0] == "running"  # as stored
    rerun = subprocess.run(
        [sys.executable, "-m", "turinglab", "run", str(config), "--no-progress"],
        capture_output=True, text=True, env=env(), timeout=120,
    )  # fmt: skip
    assert rerun.returncode == 0, rerun.stderr
    assert rerun.stdout.startswith("Resuming run "), rerun.stdout


def test_huge_binomial_counts_are_refused_fast(tmp_path: Path) -> None:
    started = time.monotonic()
    done = turinglab("stats", "binomial", "-k", "500000000000", "-n", "1000000000000", cwd=tmp_path)
    one_error_line(done, "--trials 1,000,000,000,000 is more than 100,000,000")
    assert time.monotonic() - started < 60  # it never returned before
    done = turinglab(
        "stats", "humanness", "--design", "three-party", "--machine-judged-human", "1",
        "--games", "1000000000", cwd=tmp_path,
    )  # fmt: skip
    one_error_line(done, "--games 1,000,000,000 is more than 100,000,000")


def test_tag_probes_on_an_empty_file(tmp_path: Path) -> None:
    (tmp_path / "empty.jsonl").write_text("")
    one_error_line(
        turinglab("tag", "probes", "empty.jsonl", cwd=tmp_path), "empty.jsonl: no result rows"
    )
    (tmp_path / "silent.jsonl").write_text(json.dumps({"histories": {}}) + "\n")
    done = turinglab("tag", "probes", "silent.jsonl", cwd=tmp_path)
    assert done.returncode == 2 and "nan" not in done.stdout + done.stderr, done


@pytest.mark.server
def test_tag_games_counts_unreadable_replies_as_unreadable(tmp_path: Path) -> None:
    """The fake server answers every yes/no question with a chatty sentence: nothing can be
    read, so no code is "absent" — every one is unreadable — and the HTTP session is closed."""
    study = tmp_path / "study.csv"
    transcript = json.dumps([{"sender": "interrogator", "text": "hi", "t": 0}])
    rows = [
        {"game": f"g{i}", "witness": "w", "witness_type": "ai", "judged_human": False,
         "transcript": transcript, "reason": "too fast"}
        for i in range(3)
    ]  # fmt: skip
    import pandas as pd

    pd.DataFrame(rows).to_csv(study, index=False)
    with start_fake_server_process() as server:
        config = tmp_path / "agents.yaml"
        config.write_text(
            yaml.safe_dump(
                {
                    "name": "tagger",
                    "agents": {
                        "chatty": {"kind": "openai", "model": "m", "base_url": server.base_url}
                    },
                    "experiment": {"game": "gtt", "universe": ["chatty"]},
                }
            )
        )
        done = turinglab(
            "tag", "games", str(study), "--agent", "chatty", "--config", str(config),
            "--codebook", "reasons", "--mode", "per-code", cwd=tmp_path,
        )  # fmt: skip
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "Unclosed client session" not in done.stderr
    assert "could be read for any code of 3 rows" in done.stderr.strip().splitlines()[-1]
    assert "3 of 3 rows had unreadable replies" in done.stdout
    table = [line for line in done.stdout.splitlines() if line.startswith("│")]
    assert table and all("│ 0 " in line for line in table[1:])  # no code counted absent
    assert "0.00 [" not in done.stdout and "nan" not in done.stdout


def test_report_refusals_are_one_line(tmp_path: Path) -> None:
    one_error_line(turinglab("report", "", cwd=tmp_path), "RUN|STUDY is empty")
    study = tmp_path / "study.csv"
    study.write_text("game,interrogator,witness,witness_type,judged_human\ng,i,w,ai,false\n")
    # /proc takes no new folders, whoever asks (root included); a locked folder, where the
    # tests do not run as root.
    one_error_line(
        turinglab("report", str(study), "--out", "/proc/turinglab-report", cwd=tmp_path),
        "--out /proc/turinglab-report: cannot write there",
    )
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        if os.geteuid() != 0:
            one_error_line(
                turinglab("report", str(study), "--out", str(locked / "rep"), cwd=tmp_path),
                "cannot write there (in",
                "Permission denied",
            )
    finally:
        locked.chmod(0o700)
    assert files(locked) == set()
