"""Several `turinglab run` processes on one run: trials are claimed with row leases, a killed
worker's trials are taken over, nobody crashes because another finished a trial first, and the
numbers equal a single-process run of the same config."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from turinglab.analysis.gtt import pair_table
from turinglab.store.database import ResultRecord, Store, analysis_rows
from turinglab.testing.fake_openai import start_fake_server_process

pytestmark = [pytest.mark.slow, pytest.mark.server]

N_PER_PAIR = 15  # 4 ordered pairs → 60 trials


def write_config(tmp_path: Path, base_url: str) -> Path:
    agent = {"kind": "openai", "base_url": base_url}
    config = {
        "name": "workers",
        "agents": {"a": {**agent, "model": "model-a"}, "b": {**agent, "model": "model-b"}},
        "experiment": {"game": "gtt", "universe": ["a", "b"], "trials_per_pair": N_PER_PAIR},
        "runner": {"max_trials_in_flight": 3},
    }
    path = tmp_path / "workers.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def start_worker(config: Path, store: str) -> subprocess.Popen[str]:
    env = {**os.environ, "TURINGLAB_LEASE_S": "3"}
    return subprocess.Popen(
        [sys.executable, "-m", "turinglab", "run", str(config), "--store", store, "--no-progress"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def outcome_count(store: str) -> int:
    s = Store(store)
    try:
        return sum(r.finished for r in s.list_runs())
    finally:
        s.close()


def workers_playing(store: str) -> set[str]:
    """The worker ids of every game begun so far (they name the worker's process id)."""
    s = Store(store)
    try:
        return {g.worker for run in s.list_runs() for g in s.games(run.id) if g.worker}
    finally:
        s.close()


def comparable(rows: list[ResultRecord]) -> dict[str, Any]:
    return {
        r.key: (r.status, r.verdict, r.correct, r.extra["distinguisher_turns"],
                r.extra["unknown_turns"], r.histories)
        for r in rows
    }  # fmt: skip


def check_workers(tmp_path: Path, store: str, reference_db: Path) -> None:
    with start_fake_server_process(latency_s=0.08) as server:
        config = write_config(tmp_path, server.base_url)
        workers = [start_worker(config, store) for _ in range(3)]
        deadline = time.monotonic() + 60
        # Killed once it holds a game and trials are finishing: a worker slow to start (a
        # busy machine) must not make the takeover vacuous.
        victim = f":{workers[0].pid}:"
        while outcome_count(store) < 8 or not any(victim in w for w in workers_playing(store)):
            assert time.monotonic() < deadline, "the workers did not get going"
            time.sleep(0.1)
        os.kill(workers[0].pid, signal.SIGKILL)
        workers[0].wait(timeout=10)
        for w in workers[1:]:
            out, err = w.communicate(timeout=120)
            assert w.returncode == 0, err
            assert "IntegrityError" not in err and "Traceback" not in err
            assert " finished: " in out
        s = Store(store)
        (run,) = s.list_runs()
        assert run.finished == run.n_planned == 4 * N_PER_PAIR  # the survivors took over
        assert run.status == "finished"
        rerun = start_worker(config, store)
        out, err = rerun.communicate(timeout=120)
        assert rerun.returncode == 0, err
        assert "0 trials finished now" in out
        rows = s.results(run.id)
        games = s.games(run.id)
        s.close()
        assert len(rows) == len({r.trial_id for r in rows}) == 4 * N_PER_PAIR
        assert sum(g.status == "finished" for g in games) == 4 * N_PER_PAIR
        assert {g.status for g in games} <= {"finished", "interrupted", "superseded"}
        played = {g.worker for g in games}
        # The killed one and a survivor took part (the third may start after the work is
        # gone on a busy machine: not the point here).
        assert any(victim in w for w in played) and len(played) >= 2, played

        single = start_worker(config, str(reference_db))
        _out, err = single.communicate(timeout=120)
        assert single.returncode == 0, err
    ref = Store(str(reference_db))
    (ref_run,) = ref.list_runs()
    ref_rows = ref.results(ref_run.id)
    ref.close()
    assert ref_run.id == run.id
    assert comparable(rows) == comparable(ref_rows)
    assert pair_table(analysis_rows(rows)) == pair_table(analysis_rows(ref_rows))


@pytest.mark.database
def test_three_workers_on_postgresql_one_killed(tmp_path: Path, postgres_url: str) -> None:
    check_workers(tmp_path, postgres_url, tmp_path / "single.db")


def test_three_workers_on_one_sqlite_file_one_killed(tmp_path: Path) -> None:
    check_workers(tmp_path, str(tmp_path / "shared.db"), tmp_path / "single.db")
