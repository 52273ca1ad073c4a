"""Scripted and replay agents: fixed replies, for tests and for replaying recorded transcripts."""

from __future__ import annotations

import json
import time
from pathlib import Path

from turinglab.agents.base import AgentReply, CallContext, ChatMessage, Route


def load_replies(path: Path) -> list[str]:
    """Replies from a .txt file (one per line) or a .json list of strings or of messages."""
    text = path.read_text(encoding="utf-8")
    if path.suffix != ".json":
        return [line for line in text.splitlines() if line.strip()]
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise ValueError(f"{path}: not valid JSON (line {err.lineno}: {err.msg})") from None
    if not isinstance(data, list):
        raise ValueError(f"{path}: expected a JSON list")
    replies = []
    for i, item in enumerate(data):
        if isinstance(item, str):
            replies.append(item)
        elif isinstance(item, dict) and "content" in item:
            if item.get("role", "assistant") == "assistant":
                replies.append(str(item["content"]))
        else:
            raise ValueError(
                f"{path}: item {i} is neither a string nor a {{role, content}} message"
            )
    return replies


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
