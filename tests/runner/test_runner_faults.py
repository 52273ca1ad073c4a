"""The runner against a real HTTP server that injects latency, 429s, 500s, timeouts and
malformed bodies: every trial that can finish does, failed attempts are stored, and no fault
becomes a verdict."""

from __future__ import annotations

import pytest

from turinglab.config import parse_config
from turinglab.runner.execute import run_experiment
from turinglab.store.database import Store

pytestmark = pytest.mark.server


def config(base_url: str, *, n: int = 6, timeout_s: float = 5, **runner) -> object:
    agent = {"kind": "openai", "base_url": base_url, "timeout_s": timeout_s}
    return parse_config(
        {
            "name": "faults",
            "agents": {"a": {**agent, "model": "model-a"}, "b": {**agent, "model": "model-b"}},
            "experiment": {"game": "gtt", "universe": ["a", "b"], "trials_per_pair": n},
            "runner": {
                "backoff_base_s": 0.02,
                "backoff_max_s": 0.1,
                "attempt_backoff_base_s": 0.01,
                **runner,
            },
        }
    )


def quiet(_msg: str) -> None:
    pass


async def test_mixed_transient_faults_all_trials_finish(fake_server, tmp_path) -> None:
    fake_server.configure(
        latency_s=0.01,
        faults=[
            {"kind": "rate_limit", "probability": 0.1, "retry_after": 0.05},
            {"kind": "server_error", "probability": 0.1},
            {"kind": "malformed", "probability": 0.05},
            {"kind": "truncated", "probability": 0.05},
        ],
    )
    store = Store(str(tmp_path / "f.db"))
    summary = await run_experiment(config(fake_server.base_url), store, say=quiet)
    assert summary.status == "finished"
    assert summary.counters.finished == 24
    # Faults fall on whichever concurrent request comes next, so now and then one call draws
    # more faults in a row than its retries (0.3^7 per call, ~250 calls): that trial's attempt
    # fails, is stored as a transient failure, and a fresh attempt finishes it.
    failed = store.failed_attempts(summary.run_id)
    assert len(failed) == summary.counters.failed_attempts <= 3
    assert {f["error_kind"] for f in failed} <= {"transient"}
    stats = fake_server.stats()
    assert stats["by_status"].get("429", 0) > 0 and stats["by_status"].get("500", 0) > 0
    assert summary.stats.retried > 0 and summary.stats.rate_limited > 0
    rows = store.results(summary.run_id)
    assert len(rows) == 24
    # The fake distinguisher answers at its third message: no fault leaked into a verdict.
    assert {r.status for r in rows} == {"answered"}
    assert all(r.extra["distinguisher_turns"] == 3 for r in rows)
    for r in rows:
        texts = [m["content"] for m in r.histories["distinguisher"]]
        assert not any("error" in t.lower() for t in texts)
    store.close()


async def test_timeouts_are_retried(fake_server, tmp_path) -> None:
    fake_server.configure(faults=[{"kind": "timeout", "every": 7}])
    store = Store(str(tmp_path / "t.db"))
    summary = await run_experiment(
        config(fake_server.base_url, n=2, timeout_s=0.3), store, say=quiet
    )
    assert summary.status == "finished" and summary.counters.finished == 8
    assert summary.stats.retried >= 1
    store.close()


async def test_persistent_faults_become_failed_attempts_not_verdicts(fake_server, tmp_path) -> None:
    fake_server.configure(faults=[{"kind": "server_error"}])  # every request fails
    store = Store(str(tmp_path / "p.db"))
    summary = await run_experiment(
        config(fake_server.base_url, n=1, call_retries=1), store, say=quiet
    )
    assert summary.status == "finished-with-failures"
    assert summary.counters.finished == 0 and summary.counters.exhausted == 4
    failed = store.failed_attempts(summary.run_id)
    assert len(failed) == 12  # 4 trials × 3 attempts
    assert {f["error_kind"] for f in failed} == {"transient"}
    assert store.results(summary.run_id) == []

    # The endpoint recovers; a re-run with more attempts allowed finishes everything.
    fake_server.configure(faults=[])
    again = await run_experiment(
        config(fake_server.base_url, n=1, call_retries=1, max_attempts=4), store, say=quiet
    )
    assert again.run_id == summary.run_id
    assert again.status == "finished" and again.counters.finished == 4
    store.close()


async def test_fatal_status_fails_fast(fake_server, tmp_path) -> None:
    fake_server.configure(faults=[{"kind": "bad_request", "status": 401}])
    store = Store(str(tmp_path / "x.db"))
    summary = await run_experiment(config(fake_server.base_url, n=1), store, say=quiet)
    assert summary.stats.retried == 0  # fatal errors are not retried call by call
    failed = store.failed_attempts(summary.run_id)
    assert {f["error_kind"] for f in failed} == {"fatal"}
    assert all("401" in f["error_message"] for f in failed)
    store.close()


async def test_429_shrinks_the_endpoint_window(fake_server, tmp_path) -> None:
    fake_server.configure(
        latency_s=0.02, faults=[{"kind": "rate_limit", "first": 30, "retry_after": 0.05}]
    )
    store = Store(str(tmp_path / "r.db"))
    cfg = config(fake_server.base_url, n=10, max_trials_in_flight=40, max_calls_per_endpoint=32)
    summary = await run_experiment(cfg, store, say=quiet)
    assert summary.status == "finished"
    assert summary.stats.rate_limited == 30
    store.close()
