"""A person as an agent: what they type arrives from outside, what they may see goes out.

Transport-agnostic: the arena connects a websocket to `push` and `subscribe`; tests connect
scripted people who type at given moments on a simulated clock. Turn-based games call `reply()`
like any agent's (it waits for the person's next message); event-driven games read `next_input`
so that a person can write whenever they want, give a verdict, or end the game early.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from turinglab.agents.base import AgentReply, CallContext, ChatMessage, Route

MESSAGE = "message"


@dataclass(frozen=True, slots=True)
class HumanInput:
    """One thing a person did: sent a message (on a channel), gave a verdict, ended the game."""

    kind: str  # "message" | "verdict" | "preference" | "end" | game-specific kinds
    text: str = ""
    channel: str | None = None
    data: Mapping[str, Any] = field(default_factory=dict)


Listener = Callable[[Mapping[str, Any]], None]


class HumanAgent:
    """A participant in a live game. `participant` is the person's anonymous id."""

    def __init__(self, name: str, participant: str) -> None:
        self.name = name
        self.participant = participant
        self.inbox: asyncio.Queue[HumanInput] = asyncio.Queue()
        self._listeners: list[Listener] = []

    @property
    def endpoint(self) -> str | None:
        return None  # people are not rate-limited by us

    # ---- input: from the person to the game ----------------------------------------------------

    def push(self, item: HumanInput) -> None:
        self.inbox.put_nowait(item)

    async def next_input(self) -> HumanInput:
        return await self.inbox.get()

    async def reply(self, history: list[ChatMessage], ctx: CallContext) -> AgentReply:
        """The person's next message (other kinds of input are kept for the game, in order)."""
        held: list[HumanInput] = []
        try:
            while True:
                item = await self.inbox.get()
                if item.kind == MESSAGE:
                    return AgentReply(item.text, Route("human", self.participant))
                held.append(item)
        finally:
            for item in held:  # keep what was not a message for the game to read
                self.inbox.put_nowait(item)

    # ---- output: from the game to the person ---------------------------------------------------

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def deliver(self, event: Mapping[str, Any]) -> None:
        """Show the person something they may see (a message, the clock, a reveal)."""
        for listener in list(self._listeners):
            listener(event)

    async def aclose(self) -> None:
        self._listeners.clear()


Sleep = Callable[[float], Awaitable[None]]


async def type_at(
    agent: HumanAgent,
    sleep: Sleep,
    now: Callable[[], float],
    steps: Sequence[tuple[float, HumanInput]],
) -> None:
    """A scripted person: push each input at its time (seconds after this starts), on the
    game's clock (`sleep`, `now`). Used by tests and by simulated studies."""
    start = now()
    for at, item in steps:
        await sleep(max(0.0, start + at - now()))
        agent.push(item)


def say(text: str, channel: str | None = None) -> HumanInput:
    return HumanInput(MESSAGE, text, channel)


class EventLog:
    """Everything delivered to a person, in order (tests and transcripts of what people saw)."""

    def __init__(self, agent: HumanAgent) -> None:
        self.events: list[Mapping[str, Any]] = []
        agent.subscribe(self.events.append)

    def of_type(self, kind: str) -> list[Mapping[str, Any]]:
        return [e for e in self.events if e.get("type") == kind]
