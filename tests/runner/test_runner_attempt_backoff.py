"""Attempts of one trial are spaced out: an outage of the real (fake) HTTP server that outlasts
one attempt's call retries does not use up every attempt at once, and a server's Retry-After
is waited out between attempts."""

from __future__ import annotations

import asyncio
import random

import pytest

from turinglab.agents.errors import FatalError, RateLimited, TransientError
from turinglab.agents.retry import RetryPolicy
from turinglab.config import parse_config
from turinglab.runner.execute import run_experiment
from turinglab.runner.scheduler import attempt_delay
from turinglab.store.database import Store

pytestmark = pytest.mark.server


def one_trial(base_url: str, **runner: float) -> object:
    agent = {"kind": "openai", "base_url": base_url, "model": "m", "timeout_s": 5}
    return parse_config(
        {
            "name": "backoff",
            "agents": {"a": agent},
            "experiment": {"game": "gtt", "universe": ["a"], "trials_per_pair": 1},
            "runner": {"call_retries": 0, "backoff_base_s": 0.01, **runner},
        }
    )


async def outage(server, seconds: float, **fault: object) -> None:
    server.configure(faults=[{"kind": "server_error", **fault}])
    await asyncio.sleep(seconds)
    server.configure(faults=[])


def quiet(_msg: str) -> None:
    pass


@pytest.mark.parametrize(("base_s", "finishes"), [(0.6, True), (0.0, False)])
async def test_an_outage_longer_than_one_attempt_is_ridden_out(
    fake_server, tmp_path, base_s: float, finishes: bool
) -> None:
    """1.2 s of HTTP 500s: with attempts 0.3–0.6 s then 0.6–1.2 s apart the third attempt
    comes after it; without spacing all three fail within milliseconds."""
    store = Store(str(tmp_path / "o.db"))
    down = asyncio.create_task(outage(fake_server, 1.2))
    await asyncio.sleep(0)
    config = one_trial(fake_server.base_url, attempt_backoff_base_s=base_s)
    summary = await run_experiment(config, store, say=quiet)
    await down
    failed = store.failed_attempts(summary.run_id)
    if finishes:
        assert summary.status == "finished" and summary.counters.finished == 1
        assert 1 <= len(failed) <= 2
        starts = sorted(g.started_at for g in store.games(summary.run_id))
        assert starts[1] - starts[0] >= 0.3
    else:
        assert summary.status == "finished-with-failures" and len(failed) == 3
        assert failed[-1]["finished_at"] - failed[0]["started_at"] < 1.2
    store.close()


async def test_retry_after_is_waited_out_between_attempts(fake_server, tmp_path) -> None:
    fake_server.configure(faults=[{"kind": "rate_limit", "retry_after": 0.7}])
    store = Store(str(tmp_path / "r.db"))
    config = one_trial(fake_server.base_url, attempt_backoff_base_s=0.01, max_attempts=2)
    summary = await run_experiment(config, store, say=quiet)
    starts = [g.started_at for g in store.games(summary.run_id)]
    assert summary.status == "finished-with-failures" and len(starts) == 2
    assert starts[1] - starts[0] >= 0.7
    store.close()


def test_delay_is_exponential_jittered_and_none_after_a_fatal_error() -> None:
    policy, rng = RetryPolicy(base_s=10.0, max_s=300.0), random.Random(0)
    first = [attempt_delay(policy, 1, TransientError("x"), rng) for _ in range(50)]
    second = [attempt_delay(policy, 2, TransientError("x"), rng) for _ in range(50)]
    assert min(first) >= 5.0 and max(first) <= 10.0 and len(set(first)) > 1
    assert min(second) >= 10.0 and max(second) <= 20.0
    assert attempt_delay(policy, 1, RateLimited("x", retry_after=42.0), rng) == 42.0
    assert attempt_delay(policy, 1, FatalError("bad request"), rng) == 0.0
    # A game that wraps the agent's error is still seen to have failed transiently.
    try:
        try:
            raise TransientError("reset")
        except TransientError as inner:
            raise RuntimeError("game failed") from inner
    except RuntimeError as wrapped:
        assert attempt_delay(policy, 1, wrapped, rng) >= 5.0
