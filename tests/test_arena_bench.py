"""The arena load benchmark as a command (a few games, not a timed test), its tallies, and the
two server settings it measured: spaced store commits and the settled garbage collector."""

from __future__ import annotations

import gc
import json
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
from sqlalchemy import func, select

from turinglab.bench.arena_people import Tally
from turinglab.games.table import TranscriptMessage
from turinglab.heap import settle_heap
from turinglab.store.database import GameStart, Store
from turinglab.store.schema import messages
from turinglab.store.writer import StoreWriter

SRC = Path(__file__).resolve().parents[1] / "src"


def test_benchmark_command_relays_every_message_once(tmp_path: Path) -> None:
    command = [
        *(sys.executable, "-m", "turinglab.bench.arena_bench", "--games", "4", "--rounds", "2"),
        *("--interval", "0.2", "--ramp", "0.3", "--clients", "2"),
        *("--store", str(tmp_path / "arena.db")),
    ]
    env = {"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"}
    done = subprocess.run(command, capture_output=True, text=True, timeout=180, env=env)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["games_completed"] == 4 and out["person_failures"] == {}
    # each round: the interrogator's message to the person, and the person's answer
    assert out["relayed_messages"] == 4 * 2 * 2
    assert out["lost"] == 0 and out["duplicated"] == 0 and out["error_frames"] == {}
    assert out["clients"] == 2 and 1 <= out["peak_concurrent_games"] <= 4
    assert out["server"]["ws"] == "websockets-sansio"
    assert out["relay_ms"]["p50"] is not None and out["join_ms"]["max"] is not None
    assert out["server_cpu_s"] > 0


def test_benchmark_refuses_a_bad_count() -> None:
    env = {"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"}
    command = [sys.executable, "-m", "turinglab", "bench", "arena", "--games", "0"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 2 and "--games must be at least 1, not 0" in done.stderr
    assert "turinglab bench arena" in done.stderr  # the usage line names the CLI command


def test_tally_counts_lost_duplicated_and_overlapping_games() -> None:
    a, b = Tally(), Tally()
    a.sent += ["pw1.0", "pw1.1"]
    a.expected_from_judge = 2
    now = time.time()
    for text in (f"pw1.0@{now}", f"pj0.0A@{now}", f"pj0.0A@{now}", "ai reply"):
        a.got(text)
    b.got(f"pj0.1B@{now}")
    a.games = [(0.0, 10.0), (5.0, 15.0)]
    b.games = [(9.0, 20.0), (16.0, 17.0)]
    merged = Tally.from_json(a.to_json())
    merged.merge(Tally.from_json(b.to_json()))
    assert merged.received == Counter({"pw1.0": 1, "pj0.0A": 2, "pj0.1B": 1})
    assert merged.lost() == 1  # pw1.1 never arrived; both of the judge's did
    assert len(merged.latency_ms) == 4  # the AI's reply is not a relay between people
    assert merged.peak_games() == 3  # 9..10: all of the first three at once


def _message(i: int) -> TranscriptMessage:
    return TranscriptMessage(i, "a", f"hello {i}", ("a", "b"), "main", time.time())


@pytest.mark.parametrize("interval", [0.0, 0.05])
def test_spaced_commits_write_every_row(tmp_path: Path, interval: float) -> None:
    store = Store(str(tmp_path / "s.db"))
    store.create_run("r", "r", "arena", {}, {}, [])
    writer = StoreWriter(store, min_commit_interval_s=interval)
    start = GameStart("r", None, 1, "x", 0.0, [], None, "w", {})
    gid = writer.start_game(start).result(10)
    before = writer.transactions

    def trickle() -> None:  # a row every 2 ms, as live games say things
        for i in range(100):
            writer.add_message(Store.message_row(gid, _message(i)))
            time.sleep(0.002)

    feeder = threading.Thread(target=trickle)
    began = time.monotonic()
    feeder.start()
    feeder.join()
    writer.close()
    took = time.monotonic() - began
    with store.engine.connect() as conn:
        count = conn.execute(select(func.count()).select_from(messages)).scalar_one()
    assert count == 100
    commits = writer.transactions - before
    if interval:
        assert commits <= took / interval + 2  # one per interval at most, not one per row
    else:
        assert commits >= 1


def test_settle_heap_freezes_start_up_and_spaces_full_passes() -> None:
    threshold = gc.get_threshold()
    try:
        settle_heap()
        assert gc.get_freeze_count() > 1000
        assert gc.get_threshold() == (threshold[0], threshold[1], 100)
    finally:
        gc.unfreeze()
        gc.set_threshold(*threshold)
