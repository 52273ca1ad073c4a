"""The adaptive per-endpoint limiter and the one retry loop, in isolation."""

from __future__ import annotations

import asyncio
import time

import pytest

from turinglab.agents.base import AgentReply, CallContext, ChatMessage, Route
from turinglab.agents.errors import FatalError, RateLimited, TransientError
from turinglab.agents.limiter import AdaptiveLimiter
from turinglab.agents.retry import Caller, RetryPolicy


async def test_limiter_caps_concurrency_and_serves_fifo() -> None:
    limiter = AdaptiveLimiter(2)
    order: list[int] = []
    peak = 0

    async def job(i: int) -> None:
        nonlocal peak
        async with limiter:
            peak = max(peak, limiter.in_use)
            order.append(i)
            await asyncio.sleep(0.01)

    await asyncio.gather(*(job(i) for i in range(8)))
    assert peak == 2 and order == list(range(8)) and limiter.in_use == 0


def test_limiter_halves_on_429_once_per_cooldown_and_grows_back() -> None:
    limiter = AdaptiveLimiter(64, cooldown_s=60)
    limiter.on_rate_limited()
    limiter.on_rate_limited()  # same burst: ignored
    assert limiter.limit == 32 and limiter.rate_limited == 2
    for _ in range(32):
        limiter.on_success()
    assert 32.9 < limiter.limit < 33.1  # +1 per window of successes (AIMD)
    for _ in range(10_000):
        limiter.on_success()
    assert limiter.limit == 64  # never above the configured maximum


def test_limiter_never_drops_below_min() -> None:
    limiter = AdaptiveLimiter(4, cooldown_s=0)
    for _ in range(10):
        limiter.on_rate_limited()
    assert limiter.limit == 1


async def test_cancelled_waiter_does_not_leak_a_slot() -> None:
    limiter = AdaptiveLimiter(1)
    await limiter.acquire()
    waiter = asyncio.create_task(limiter.acquire())
    await asyncio.sleep(0)
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    limiter.release()
    assert limiter.in_use == 0
    await asyncio.wait_for(limiter.acquire(), 1)


class Failing:
    def __init__(self, errors: list[Exception]) -> None:
        self.name = "f"
        self.errors = errors
        self.calls = 0

    @property
    def endpoint(self) -> str:
        return "test:f"

    async def reply(self, history: list[ChatMessage], ctx: CallContext) -> AgentReply:
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return AgentReply("ok", Route("test", "f"), tokens_in=3, tokens_out=2)

    async def aclose(self) -> None:
        pass


async def test_retry_after_is_honoured() -> None:
    caller = Caller(RetryPolicy(retries=2, base_s=0.001, max_s=0.001), default_limit=4)
    agent = Failing([RateLimited("429", retry_after=0.3)])
    start = time.perf_counter()
    reply = await caller(agent, [], CallContext(seed=0))
    assert reply.text == "ok" and agent.calls == 2
    assert time.perf_counter() - start >= 0.3
    assert 2 <= caller.limiters["test:f"].limit < 4  # the 429 halved the window (4 → 2)
    assert (caller.stats.calls, caller.stats.tokens_in, caller.stats.tokens_out) == (1, 3, 2)


async def test_transient_errors_exhaust_retries_then_raise() -> None:
    caller = Caller(RetryPolicy(retries=2, base_s=0.001, max_s=0.002), default_limit=4)
    agent = Failing([TransientError("500")] * 5)
    with pytest.raises(TransientError):
        await caller(agent, [], CallContext(seed=0))
    assert agent.calls == 3  # the first try and two retries
    assert caller.stats.retried == 2 and caller.stats.calls == 0


async def test_fatal_errors_are_not_retried() -> None:
    caller = Caller(RetryPolicy(retries=5, base_s=0.001), default_limit=4)
    agent = Failing([FatalError("401")])
    with pytest.raises(FatalError):
        await caller(agent, [], CallContext(seed=0))
    assert agent.calls == 1


def test_backoff_is_exponential_with_jitter_and_capped() -> None:
    import random

    policy = RetryPolicy(base_s=1, max_s=8)
    rng = random.Random(0)
    for retry, step in [(0, 1), (1, 2), (2, 4), (3, 8), (6, 8)]:
        delays = [policy.backoff(retry, rng) for _ in range(50)]
        assert all(step / 2 <= d <= step for d in delays)
        assert len(set(delays)) > 1
