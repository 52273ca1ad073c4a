"""The one retry loop. Agents never retry; they raise a typed error and this decides.

rate-limited → tell the endpoint's limiter, wait Retry-After (or back off), try again;
transient    → back off exponentially with jitter, try again;
fatal        → give up at once (the trial attempt fails; the scheduler may try the trial again).
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Mapping
from dataclasses import dataclass

from turinglab.agents.base import Agent, AgentReply, CallContext, ChatMessage
from turinglab.agents.errors import AgentError, RateLimited, TransientError
from turinglab.agents.limiter import AdaptiveLimiter
from turinglab.agents.pricing import Price

MAX_HONOURED_RETRY_AFTER_S = 600.0


@dataclass(frozen=True)
class RetryPolicy:
    retries: int = 6
    base_s: float = 1.0
    max_s: float = 60.0

    def backoff(self, retry: int, rng: random.Random) -> float:
        # Exponential with jitter in [½, 1] of the step, so synchronized failures spread out.
        step = min(self.max_s, self.base_s * 2**retry)
        return step * rng.uniform(0.5, 1.0)


@dataclass
class CallStats:
    calls: int = 0
    retried: int = 0
    rate_limited: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0  # of the calls to agents with a price


class Caller:
    """Calls agents through per-endpoint limiters with the retry policy; counts what it does."""

    def __init__(
        self,
        policy: RetryPolicy,
        default_limit: int,
        endpoint_limits: dict[str, int] | None = None,
        seed: int = 0,
        prices: Mapping[str, Price] | None = None,
    ) -> None:
        self.policy = policy
        self.default_limit = default_limit
        self.endpoint_limits = endpoint_limits or {}
        self.limiters: dict[str, AdaptiveLimiter] = {}
        self.stats = CallStats()
        self.prices = dict(prices or {})  # agent name -> price
        self._rng = random.Random(seed)

    def limiter(self, endpoint: str) -> AdaptiveLimiter:
        lim = self.limiters.get(endpoint)
        if lim is None:
            lim = AdaptiveLimiter(self.endpoint_limits.get(endpoint, self.default_limit))
            self.limiters[endpoint] = lim
        return lim

    async def __call__(
        self, agent: Agent, history: list[ChatMessage], ctx: CallContext
    ) -> AgentReply:
        endpoint = agent.endpoint
        limiter = self.limiter(endpoint) if endpoint is not None else None
        retry = 0
        while True:
            try:
                if limiter is None:
                    reply = await agent.reply(history, ctx)
                else:
                    async with limiter:
                        reply = await agent.reply(history, ctx)
            except (RateLimited, TransientError) as err:
                if isinstance(err, RateLimited):
                    self.stats.rate_limited += 1
                    if limiter is not None:
                        limiter.on_rate_limited()
                if retry >= self.policy.retries:
                    raise
                await asyncio.sleep(self._delay(err, retry))
                retry += 1
                self.stats.retried += 1
                continue
            except AgentError:
                raise
            # Counted per call (not per trial), so progress and the budget see every token.
            stats = self.stats
            stats.calls += 1
            t_in, t_out = reply.tokens_in or 0, reply.tokens_out or 0
            stats.tokens_in += t_in
            stats.tokens_out += t_out
            price = self.prices.get(agent.name)
            if price is not None:
                stats.cost_usd += price.of(t_in, t_out)
            if limiter is not None:
                limiter.on_success()
            return reply

    def _delay(self, err: RateLimited | TransientError, retry: int) -> float:
        if err.retry_after is not None:
            return min(err.retry_after, MAX_HONOURED_RETRY_AFTER_S) * self._rng.uniform(1.0, 1.1)
        return self.policy.backoff(retry, self._rng)
