"""`turinglab bench arena --blind … --arrivals …` (bench/arena_blind.py) as a command: a tiny
two-party blind study against a real server process and against two (Redis + PostgreSQL),
bursty arrivals, some pages closing while they wait and joining again. Not a timed test: it
checks what the report counts, not how fast."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"

pytestmark = pytest.mark.slow


def _bench(*args: str, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    env = {"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"}
    command = [sys.executable, "-m", "turinglab", "bench", "arena", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=env)


TINY = (
    *("--blind", "2:4", "--arrivals", "bursts", "--burst-gap", "4", "--people", "8"),
    *("--rounds", "2", "--witness-wait", "10", "--rejoin-p", "0.3", "--seed", "3"),
    *("--deadline", "180"),  # who is left then is reported (what they wait for), not killed
)


def _checked(done: subprocess.CompletedProcess[str], processes: int) -> dict:
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout)
    assert out["benchmark"] == "arena-blind" and out["processes"] == processes
    assert out["stuck"] == [], out["stuck"]
    assert out["errors"] == {} and out["timed_out_for_want_of_a_partner"] == 0, out
    assert sum(out["ends"].values()) == 8  # everyone to the end: rounds played or excused
    assert set(out["ends"]) <= {"rounds-played", "rounds-done"}, out["ends"]
    waits = out["wait_s_person_witness"], out["wait_s_ai_witness"]
    assert sum(w["n"] for w in waits) == out["interrogations"] > 0
    assert all(w["n"] == 0 or w["p10"] >= 2 for w in waits)  # never before the window ends
    return out


def test_one_process() -> None:
    _checked(_bench(*TINY), 1)


@pytest.mark.database
def test_two_processes(postgres_url: str) -> None:
    out = _checked(_bench(*TINY, "--processes", "2", "--store", postgres_url), 2)
    assert out["store"] == "postgresql"


def test_two_processes_need_a_shared_store() -> None:
    done = _bench("--blind", "2:4", "--arrivals", "bursts", "--processes", "2", timeout=60)
    assert done.returncode == 2 and "needs a shared postgresql://" in done.stderr
