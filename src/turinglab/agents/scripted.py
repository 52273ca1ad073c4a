"""Scripted and replay agents: fixed replies, for tests and for replaying recorded transcripts."""

from __future__ import annotations

import time

from turinglab.agents.base import AgentReply, CallContext, ChatMessage, Route


class ScriptedAgent:
    """Answers with `replies` in order, one per message it has already sent.

    The position comes from the history (how many assistant messages it holds), so the agent
    is stateless like every other one. Past the end it repeats the last reply, or cycles when
    `cycle` is set; with no replies at all it says `fallback`.
    """

    def __init__(
        self,
        name: str,
        replies: list[str],
        *,
        cycle: bool = False,
        fallback: str = "",
        backend: str = "scripted",
    ) -> None:
        self.name = name
        self.replies = list(replies)
        self.cycle = cycle
        self.fallback = fallback
        self.backend = backend

    @property
    def endpoint(self) -> str | None:
        return None

    def next_text(self, history: list[ChatMessage]) -> str:
        if not self.replies:
            return self.fallback
        said = sum(1 for m in history if m.role == "assistant")
        if self.cycle:
            return self.replies[said % len(self.replies)]
        return self.replies[min(said, len(self.replies) - 1)]

    async def reply(self, history: list[ChatMessage], ctx: CallContext) -> AgentReply:
        start = time.perf_counter()
        text = self.next_text(history)
        return AgentReply(
            text=text,
            route=Route(backend=self.backend, model=self.name),
            latency_s=time.perf_counter() - start,
        )

    async def aclose(self) -> None:
        return None
