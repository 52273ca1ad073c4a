"""Inputs that used to end in a traceback, a run that never ends or a write before the error
(issue 32), each met by a real process: one line, a non-zero exit, nothing written."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from test_cli_errors import CONFIG, SRC, files, one_error_line, turinglab, write_config


def test_a_config_nested_twenty_thousand_levels_deep(tmp_path: Path) -> None:
    cfg = tmp_path / "deep.yaml"
    cfg.write_text("name: deep\nagents: " + "[" * 20_000 + "]" * 20_000 + "\n")
    for args in (["run", str(cfg), "--no-progress"], ["agents", "-c", str(cfg)]):
        one_error_line(turinglab(*args, cwd=tmp_path), "nested too deeply")
    assert files(tmp_path) == {"deep.yaml"}


@pytest.mark.parametrize(
    ("field", "value"),
    [("trials_per_pair", 1_000_000_000_000), ("max_distinguisher_turns", 10**20)],
)
def test_unbounded_design_numbers_are_refused_before_a_store_exists(
    tmp_path: Path, field: str, value: int
) -> None:
    config = {**CONFIG, "experiment": {**CONFIG["experiment"], field: value}}
    cfg = write_config(tmp_path, config)
    done = turinglab("run", str(cfg), "--no-progress", cwd=tmp_path)
    one_error_line(done, f"experiment.{field}")
    assert files(tmp_path) == {"exp.yaml"}


def test_a_design_over_the_plan_limit_creates_no_store(tmp_path: Path) -> None:
    config = {**CONFIG, "experiment": {**CONFIG["experiment"], "trials_per_pair": 50}}
    cfg = write_config(tmp_path, config)
    limit = {"TURINGLAB_MAX_PLANNED_TRIALS": "10"}
    done = turinglab("run", str(cfg), "--no-progress", cwd=tmp_path, env=limit)
    one_error_line(done, "experiment.trials_per_pair", "more than the limit of 10")
    assert files(tmp_path) == {"exp.yaml"}


@pytest.fixture
def gtt_store(tmp_path: Path) -> Path:
    db = tmp_path / "s.db"
    cfg = write_config(tmp_path, CONFIG)
    done = turinglab("run", str(cfg), "--store", str(db), "--no-progress", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    return db


def test_report_options_are_checked_before_anything_is_written(
    tmp_path: Path, gtt_store: Path
) -> None:
    board = tmp_path / "board.csv"
    board.write_text("agent,score\njudge,1\nmimic,2\n")
    out = tmp_path / "out"
    before = files(tmp_path)
    report = ["report", "errs", "--store", str(gtt_store)]
    cases = [
        (["--out", str(out), "--max-transcripts", "-1"], "--max-transcripts must be 0 or more"),
        (["--out", str(out), "--leaderboard", "X=missing.csv"], "missing.csv"),
        (["--out", str(out), "--leaderboard", "nameless"], "NAME=CSV"),
        (["--leaderboard", f"X={board}"], "give --out DIR"),
    ]
    for extra, problem in cases:
        one_error_line(turinglab(*report, *extra, cwd=tmp_path), problem)
        assert files(tmp_path) == before, extra  # not one figure
    written = turinglab(*report, "--out", str(out), "--leaderboard", f"X={board}", cwd=tmp_path)
    assert written.returncode == 0, written.stderr
    assert (out / "report.html").is_file()


def test_a_study_file_with_a_duplicated_column(tmp_path: Path) -> None:
    study = tmp_path / "study.csv"
    study.write_text(
        "game,interrogator,witness,witness_type,judged_human,judged_human\n"
        "g1,p1,w1,human,true,false\n"
    )
    done = turinglab("report", str(study), "--out", str(tmp_path / "rep"), cwd=tmp_path)
    one_error_line(done, "study.csv: line 1", "'judged_human' more than once")
    assert files(tmp_path) == {"study.csv"}


def test_chat_with_nothing_listening_fails_fast_in_one_line(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed again: connections to it are refused
    agents = {"doc2": {"kind": "openai", "model": "m", "base_url": f"http://127.0.0.1:{port}/v1"}}
    cfg = write_config(tmp_path, {**CONFIG, "agents": {**CONFIG["agents"], **agents}})
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "turinglab", "chat", "doc2", "-c", str(cfg)],
        input="hello\n",
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(SRC)},
    )
    took = time.monotonic() - started
    line = one_error_line(done, "doc2:")
    assert "doc2: doc2:" not in line
    # Two short retries (the default policy of a run waits about a minute): generous for a
    # loaded machine, far below what it was.
    assert took < 30, took
    assert files(tmp_path) == {"exp.yaml"}
