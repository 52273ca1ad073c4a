"""Shared helpers for the human-game tests: tables on a simulated clock, recording agents."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from turinglab.agents.base import Agent, AgentReply, CallContext, ChatMessage, Route
from turinglab.agents.errors import FatalError
from turinglab.agents.human import HumanAgent, HumanInput, type_at
from turinglab.games.clock import SimulatedClock
from turinglab.games.events import GameObserver
from turinglab.games.kinds import GameContext
from turinglab.games.spec import TrialSpec
from turinglab.games.table import Table


async def direct_caller(agent: Agent, history: list[ChatMessage], ctx: CallContext) -> AgentReply:
    return await agent.reply(history, ctx)


class Recording:
    """Wraps an agent and keeps every history it was given."""

    def __init__(self, agent: Agent) -> None:
        self.inner = agent
        self.name = agent.name
        self.histories: list[list[ChatMessage]] = []

    @property
    def endpoint(self) -> str | None:
        return None

    async def reply(self, history: list[ChatMessage], ctx: CallContext) -> AgentReply:
        self.histories.append(list(history))
        return await self.inner.reply(history, ctx)

    async def aclose(self) -> None:
        return None


class Failing:
    """An AI that raises (like an API that keeps failing after the retry loop)."""

    def __init__(self, name: str = "broken") -> None:
        self.name = name

    @property
    def endpoint(self) -> str | None:
        return None

    async def reply(self, history: list[ChatMessage], ctx: CallContext) -> AgentReply:
        raise FatalError("HTTP 500 from the provider")

    async def aclose(self) -> None:
        return None


class Silent:
    """An AI whose call never completes (a hung request)."""

    def __init__(self, name: str = "silent") -> None:
        self.name = name
        self.cancelled = False

    @property
    def endpoint(self) -> str | None:
        return None

    async def reply(self, history: list[ChatMessage], ctx: CallContext) -> AgentReply:
        import asyncio

        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        return AgentReply("", Route("x", "x"))

    async def aclose(self) -> None:
        return None


def table_for(
    game: Any,
    spec: TrialSpec,
    agents: Mapping[str, Agent],
    clock: SimulatedClock,
    observer: GameObserver | None = None,
) -> Table:
    seats = game.seats(spec, agents)
    return Table(seats=seats, caller=direct_caller, seed=spec.seed, clock=clock, observer=observer)


async def play_with_people(
    game: Any,
    spec: TrialSpec,
    agents: Mapping[str, Agent],
    scripts: Mapping[str, Sequence[tuple[float, HumanInput]]],
    clock: SimulatedClock | None = None,
    observer: GameObserver | None = None,
) -> tuple[Any, Table]:
    """Play one game with scripted people typing at given times on a simulated clock; what
    the people may see goes to `observer` (an EventLog, say)."""
    import asyncio

    clock = clock or SimulatedClock()
    table = table_for(game, spec, agents, clock, observer)
    people = [
        asyncio.ensure_future(type_at(agents[name], clock.sleep, clock.now, steps))
        for name, steps in scripts.items()
        if isinstance(agents[name], HumanAgent)
    ]
    try:
        result = await game.play(table, spec)
    finally:
        for task in people:
            task.cancel()
    return result, table


CONTEXT = GameContext()
