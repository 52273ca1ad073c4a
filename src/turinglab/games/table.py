"""The table a game is played at: seats, the shared transcript, and who may see each message.

Every message records who may see it (TextArena's observation routing). A participant's own
view — what its agent is given — is derived from the transcript: messages it sent become
'assistant' turns, messages it could see become 'user' turns. The game never calls an agent
directly: it asks the table, which goes through the runner's retrying caller.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from turinglab.agents.base import Agent, AgentReply, CallContext, ChatMessage, Route

GAME = "game"  # sender id of instructions the game itself gives

Caller = Callable[[Agent, list[ChatMessage], CallContext], Awaitable[AgentReply]]


@dataclass(slots=True)
class TranscriptMessage:
    seq: int
    sender: str  # a seat id, or GAME
    text: str
    visible_to: tuple[str, ...]
    phase: str
    created_at: float
    route: Route | None = None
    latency_s: float | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None


@dataclass(slots=True)
class Seat:
    """One participant of one trial: a role played by a fresh instance of an agent."""

    id: str  # e.g. "distinguisher", "unknown", "specimen"
    agent_name: str
    agent: Agent


@dataclass
class Table:
    seats: dict[str, Seat]
    caller: Caller
    seed: int
    messages: list[TranscriptMessage] = field(default_factory=list)
    calls: int = 0

    def tell(self, seat_id: str, text: str, *, phase: str = "main") -> TranscriptMessage:
        """An instruction from the game, sent as an ordinary user message to one seat."""
        return self._append(GAME, text, (seat_id,), phase)

    async def speak(
        self,
        seat_id: str,
        *,
        visible_to: tuple[str, ...] | None = None,
        phase: str = "main",
        stop: tuple[str, ...] = (),
        choices: tuple[str, ...] = (),
    ) -> TranscriptMessage:
        """Ask a seat for its next message; by default everyone at the table sees it."""
        seat = self.seats[seat_id]
        ctx = CallContext(seed=self._call_seed(), participant=seat_id, stop=stop, choices=choices)
        self.calls += 1
        reply = await self.caller(seat.agent, self.view(seat_id), ctx)
        msg = self._append(seat_id, reply.text, visible_to or tuple(self.seats), phase, reply=reply)
        return msg

    def view(self, seat_id: str) -> list[ChatMessage]:
        return [
            ChatMessage("assistant" if m.sender == seat_id else "user", m.text)
            for m in self.messages
            if seat_id in m.visible_to
        ]

    def history(self, seat_id: str) -> list[dict[str, str]]:
        """A participant's full history as stored and exported."""
        return [{"role": m.role, "content": m.content} for m in self.view(seat_id)]

    def routes(self) -> dict[str, dict[str, Any]]:
        """Route metadata per seat: agent name plus the route of its last reply."""
        out: dict[str, dict[str, Any]] = {
            sid: {"agent": seat.agent_name} for sid, seat in self.seats.items()
        }
        for m in self.messages:
            if m.route is not None and m.sender in out:
                out[m.sender].update(
                    backend=m.route.backend,
                    model=m.route.model,
                    base_url=m.route.base_url,
                    provider=m.route.provider,
                    display_name=m.route.display_name,
                )
        return out

    def _call_seed(self) -> int:
        # A distinct, reproducible seed per call: sha of (trial seed, call number).
        digest = hashlib.sha256(f"{self.seed}:{self.calls}".encode()).digest()
        return int.from_bytes(digest[:4], "big")

    def _append(
        self,
        sender: str,
        text: str,
        visible_to: tuple[str, ...],
        phase: str,
        *,
        reply: AgentReply | None = None,
    ) -> TranscriptMessage:
        msg = TranscriptMessage(
            seq=len(self.messages),
            sender=sender,
            text=text,
            visible_to=visible_to,
            phase=phase,
            created_at=time.time(),
        )
        if reply is not None:
            msg.route = reply.route
            msg.latency_s = reply.latency_s
            msg.tokens_in = reply.tokens_in
            msg.tokens_out = reply.tokens_out
        self.messages.append(msg)
        return msg
