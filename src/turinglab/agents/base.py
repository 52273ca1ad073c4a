"""The one interface every agent speaks: given what this role can see, say the next message.

Agents are stateless between calls: the game hands over the participant's whole view of the
conversation each time, so a "fresh instance" is simply a fresh history. This is what lets a
hosted LLM, a local GGUF model, ELIZA, a replayed transcript and a person share the game code.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

ChatRole = Literal["system", "user", "assistant"]


@dataclass(frozen=True, slots=True)
class ChatMessage:
    """One message of a participant's own view: 'user' = received, 'assistant' = said by it."""

    role: ChatRole
    content: str


@dataclass(frozen=True, slots=True)
class Route:
    """Where a reply came from, as recorded with the trial (GTT appendix B.1)."""

    backend: str  # "openai", "local", "eliza", "scripted", "human"
    model: str  # model id or file name
    base_url: str | None = None
    provider: str | None = None  # the provider the response names (OpenRouter's "provider")
    display_name: str | None = None


@dataclass(frozen=True, slots=True)
class AgentReply:
    text: str
    route: Route
    tokens_in: int | None = None
    tokens_out: int | None = None
    latency_s: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class CallContext:
    """Per-call facts an agent may use: a seed derived from the trial seed, never the global RNG."""

    seed: int
    participant: str = ""
    stop: tuple[str, ...] = ()
    # When set, the game needs exactly one of these strings (a forced choice). Agents that can
    # constrain decoding (local GGUF models) do; the others may ignore it, and the game parses.
    choices: tuple[str, ...] = ()


@runtime_checkable
class Agent(Protocol):
    """Anything that can answer. `endpoint` names the rate-limit pool its calls share
    (base_url + key for hosted models, the model file for local ones, None for free agents)."""

    name: str

    @property
    def endpoint(self) -> str | None: ...

    async def reply(self, history: list[ChatMessage], ctx: CallContext) -> AgentReply: ...

    async def aclose(self) -> None: ...
