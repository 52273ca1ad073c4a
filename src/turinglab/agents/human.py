"""A person as an agent: what they type arrives from outside.

Transport-agnostic: the arena pushes what a person does over its websocket (`push`); tests push
scripted people's inputs at given moments on a simulated clock. Turn-based games call `reply()`
like any agent's (it waits for the person's next message); event-driven games read `next_input`
so that a person can write whenever they want, give a verdict, or end the game early. What a
person may see does not go through here: games report it to the table's observer
(games/events.py), which the arena renders for the person's browser.
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


class HumanAgent:
    """A participant in a live game. `participant` is the person's anonymous id."""

    def __init__(self, name: str, participant: str) -> None:
        self.name = name
        self.participant = participant
        self.inbox: asyncio.Queue[HumanInput] = asyncio.Queue()

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

    async def aclose(self) -> None:
        return None


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
