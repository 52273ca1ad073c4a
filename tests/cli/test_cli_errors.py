"""A new user's bad inputs (issue 10), each run as a real process: one line on stderr, exit
status 2, nothing created and nothing lost."""

from __future__ import annotations

import os
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest
import yaml

SRC = Path(__file__).resolve().parents[2] / "src"
CONFIG = {
    "name": "errs",
    "agents": {
        "judge": {"kind": "scripted", "replies": ["Hi?", "Sure. <answer>1</answer>"]},
        "mimic": {"kind": "scripted", "replies": ["Hello", "<answer>0</answer>"]},
    },
    "experiment": {"game": "gtt", "universe": ["judge", "mimic"], "trials_per_pair": 1},
}


def turinglab(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    # this checkout's sources, whatever the working directory of the command
    full_env = {**os.environ, "PYTHONPATH": str(SRC), **(env or {})}
    full_env.pop("TURINGLAB_STORE", None)
    return subprocess.run(
        [sys.executable, "-m", "turinglab", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env=full_env,
    )


def one_error_line(done: subprocess.CompletedProcess, *needles: str) -> str:
    """Exit status 2 and exactly one line on stderr, holding every needle."""
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert len(lines) == 1, done.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def files(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")}


def write_config(tmp_path: Path, data: dict, name: str = "exp.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data))
    return path


# ---- stores ------------------------------------------------------------------------------------


def test_store_locations_that_cannot_work(tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(os.urandom(4096))
    truncated = tmp_path / "truncated.db"
    with sqlite3.connect(truncated) as conn:
        conn.execute("CREATE TABLE t (x TEXT)")
        conn.executemany("INSERT INTO t VALUES (?)", [("x" * 500,)] * 200)
    truncated.write_bytes(truncated.read_bytes()[:20000])
    (tmp_path / "folder").mkdir()
    before = files(tmp_path)
    cases = {
        str(tmp_path / "folder"): "is a folder",
        str(garbage): "is not a SQLite database",
        str(truncated): "is truncated",
        "mysql://u@localhost/db": "unsupported scheme 'mysql://'",
        "http://example.org/store": "unsupported scheme 'http://'",
        str(tmp_path / "absent.db"): "does not exist",
    }
    for store, problem in cases.items():
        one_error_line(turinglab("runs", "--store", store, cwd=tmp_path), problem)
    # run creates a store, but not in a folder that is not there
    cfg = write_config(tmp_path, CONFIG)
    missing_parent = str(tmp_path / "no" / "such" / "x.db")
    done = turinglab("run", str(cfg), "--store", missing_parent, "--no-progress", cwd=tmp_path)
    one_error_line(done, "does not exist", "mkdir -p")
    assert files(tmp_path) == before | {"exp.yaml"}  # nothing created, nothing lost
    assert garbage.stat().st_size == 4096


def test_postgres_wrong_port(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # free once closed: nothing listens there
    done = turinglab(
        "runs", "--store", f"postgresql://postgres@127.0.0.1:{port}/test", cwd=tmp_path
    )
    one_error_line(done, f"127.0.0.1:{port}", "is the port right?")


@pytest.mark.database
def test_postgres_database_and_role_missing(tmp_path: Path) -> None:
    done = turinglab(
        "runs", "--store", "postgresql://postgres@127.0.0.1:5432/no_such_db_tl", cwd=tmp_path
    )
    one_error_line(done, "database 'no_such_db_tl' does not exist", "createdb")
    done = turinglab(
        "runs", "--store", "postgresql://no_such_role@127.0.0.1:5432/test", cwd=tmp_path
    )
    one_error_line(done, "role 'no_such_role' does not exist")


def test_read_only_commands_never_create_a_store(tmp_path: Path) -> None:
    for args in (["runs"], ["report", "typo"], ["export", "typo"]):
        one_error_line(turinglab(*args, cwd=tmp_path), "store turinglab.db does not exist")
    assert files(tmp_path) == set()


# ---- config files --------------------------------------------------------------------------


def test_config_that_is_not_utf8(tmp_path: Path) -> None:
    latin1 = tmp_path / "latin1.yaml"
    text = yaml.safe_dump({**CONFIG, "name": "NAME"}).replace("NAME", "café")
    latin1.write_bytes(text.encode("latin-1"))
    binary = tmp_path / "binary.yaml"
    binary.write_bytes(bytes(range(256)))
    for path in (latin1, binary):
        one_error_line(turinglab("run", str(path), cwd=tmp_path), str(path))
        one_error_line(turinglab("agents", "--config", str(path), cwd=tmp_path), str(path))
    assert "not UTF-8" in turinglab("run", str(latin1), cwd=tmp_path).stderr
    assert not (tmp_path / "turinglab.db").exists()


def test_yaml_surprises_are_named(tmp_path: Path) -> None:
    config = write_config(tmp_path, CONFIG)
    text = config.read_text().replace("- mimic", "- no")
    config.write_text(text)
    done = turinglab("run", str(config), cwd=tmp_path)
    assert done.returncode == 2
    assert "YAML read `no` (line" in done.stderr and "quote it ('no')" in done.stderr
    duplicate = tmp_path / "dup.yaml"
    duplicate.write_text(
        "name: a\nname: b\nexperiment: {game: gtt, universe: [eliza, eliza], trials_per_pair: 1}\n"
    )
    one_error_line(turinglab("run", str(duplicate), cwd=tmp_path), "'name' appears twice")
    key = tmp_path / "key.yaml"
    key.write_text("name: a\nagents:\n  yes: {kind: eliza}\nexperiment: {game: gtt}\n")
    one_error_line(turinglab("run", str(key), cwd=tmp_path), "as the boolean true", "quote it")


def test_prompt_placeholders_checked_at_load(tmp_path: Path) -> None:
    (tmp_path / "actor.txt").write_text("Pretend to be human.")  # no $first_message
    (tmp_path / "judge.txt").write_text("You have $max_turns turns and $tokens tokens.")
    for role, file, needle in (
        ("actor", "actor.txt", "missing placeholder(s) $first_message"),
        ("distinguisher", "judge.txt", "unknown placeholder(s) $tokens"),
    ):
        data = {**CONFIG, "experiment": {**CONFIG["experiment"], "prompts": {role: file}}}
        done = turinglab("run", str(write_config(tmp_path, data)), cwd=tmp_path)
        assert done.returncode == 2 and needle in done.stderr, done.stderr
    assert not (tmp_path / "turinglab.db").exists()


@pytest.mark.parametrize("value", ["0", "-1"])
def test_max_in_flight_must_be_positive(tmp_path: Path, value: str) -> None:
    cfg = write_config(tmp_path, CONFIG)
    done = turinglab("run", str(cfg), f"--max-in-flight={value}", cwd=tmp_path)
    one_error_line(done, f"--max-in-flight {value}")
    assert not (tmp_path / "turinglab.db").exists()


# ---- outputs and study files ----------------------------------------------------------------


def test_out_that_is_a_file(tmp_path: Path) -> None:
    (tmp_path / "taken").write_text("keep me")
    study = tmp_path / "study.csv"
    study.write_text("game,interrogator,witness,witness_type,judged_human\ng,i,w,ai,false\n")
    one_error_line(
        turinglab("report", str(study), "--out", "taken", cwd=tmp_path), "is an existing file"
    )
    one_error_line(turinglab("export", "x", "--out", "taken", cwd=tmp_path), "is an existing file")
    assert (tmp_path / "taken").read_text() == "keep me"


def test_study_files_are_never_taken_for_run_names(tmp_path: Path) -> None:
    for name in ("STUDY.CSV", "study.ndjson", "study.txt"):
        one_error_line(turinglab("report", name, cwd=tmp_path), f"study file {name}: no such file")
    assert files(tmp_path) == set()


def test_study_file_hints(tmp_path: Path) -> None:
    cases = {
        "header.csv": ("game,interrogator,witness,witness_type,judged_human\n", "no rows"),
        "empty.csv": ("", "no rows"),
        "empty.jsonl": ("", "no rows"),
        "semicolons.csv": (
            "game;interrogator;witness;witness_type;judged_human;confidence\n"
            "g1;i1;gpt;ai;true;77,5\n",
            "a decimal comma? write 77.5",
        ),
    }
    for name, (text, needle) in cases.items():
        (tmp_path / name).write_text(text)
        one_error_line(turinglab("report", name, "--out", "r", cwd=tmp_path), needle)
    assert not (tmp_path / "r").exists()


# ---- runs: preflight, failures, lookup --------------------------------------------------------


class _Reject(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(401)
        self.end_headers()
        self.wfile.write(b'{"error": {"message": "invalid key"}}')

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def rejecting_server() -> Iterator[str]:
    server = HTTPServer(("127.0.0.1", 0), _Reject)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def _hosted(base_url: str) -> dict:
    agents = {**CONFIG["agents"], "hosted": {"kind": "openai", "model": "m", "base_url": base_url}}
    return {
        **CONFIG,
        "agents": agents,
        "experiment": {**CONFIG["experiment"], "universe": ["judge", "hosted"]},
    }


def test_preflight_connection_refused_fails_fast(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    cfg = write_config(tmp_path, _hosted(f"http://127.0.0.1:{port}/v1"))
    started = time.monotonic()
    done = turinglab("run", str(cfg), "--no-progress", cwd=tmp_path)
    assert time.monotonic() - started < 30  # not 151 s of retries
    one_error_line(done, f"127.0.0.1:{port}", "cannot connect", "nothing was run")
    assert not (tmp_path / "turinglab.db").exists()


def test_preflight_rejected_key(tmp_path: Path, rejecting_server: str) -> None:
    cfg = write_config(tmp_path, _hosted(rejecting_server))
    done = turinglab("run", str(cfg), "--no-progress", cwd=tmp_path)
    one_error_line(done, "rejected the API key (HTTP 401)")


@pytest.fixture
def failing_endpoint() -> Iterator[str]:
    """The fake OpenAI server as its own process, answering every chat call with HTTP 400
    (a fatal error: no retries), while its models list works (so preflight passes)."""
    faults = '[{"kind": "bad_request"}]'
    proc = subprocess.Popen(
        [sys.executable, "-m", "turinglab.testing.fake_openai", "--faults", faults],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(SRC)},
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("READY "), line
        yield line.split()[1]
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.mark.server
def test_run_with_failed_trials_exits_non_zero(tmp_path: Path, failing_endpoint: str) -> None:
    cfg = {**_hosted(failing_endpoint), "runner": {"max_attempts": 1, "call_retries": 0}}
    path = str(write_config(tmp_path, cfg))
    done = turinglab("run", path, "--no-progress", cwd=tmp_path)
    assert done.returncode == 1, (done.stdout, done.stderr)
    last = done.stderr.strip().splitlines()[-1]
    assert "finished-with-failures" in last and "last error:" in last
    assert "last error: none recorded" not in last
    assert "raise runner.max_attempts" in last  # a plain re-run retries nothing
    # The re-run plays nothing (every attempt is used) yet still names the stored error.
    again = turinglab("run", path, "--no-progress", cwd=tmp_path)
    assert again.returncode == 1, (again.stdout, again.stderr)
    last = again.stderr.strip().splitlines()[-1]
    assert "last error: none recorded" not in last and "400" in last, last


def test_run_name_shared_by_two_runs_lists_candidates(tmp_path: Path) -> None:
    for trials in (1, 2):
        data = {**CONFIG, "experiment": {**CONFIG["experiment"], "trials_per_pair": trials}}
        done = turinglab("run", str(write_config(tmp_path, data)), "--no-progress", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
    line = one_error_line(turinglab("report", "errs", cwd=tmp_path), "2 runs in", "named 'errs'")
    assert line.count("finished, created") == 2
