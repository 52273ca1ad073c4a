"""A scripted participant that behaves as the arena page does after a fault (arena.js).

Like fault_fixtures.Talker, it answers (a witness) or asks on every channel in turn (the
interrogator). Unlike it, it uses the resilience protocol: every input carries an id and is
kept until the server answers it (its message shown with `ref`, an `ack`, an error naming it,
or the game moving on), and sent again when overdue or after a reconnect; frames of the game
stream are taken in `seq` order, each once (a gap asks for the rest with `resume`); a
reconnect names the last frame seen. Nothing here waits a fixed time hoping: it reacts to
frames, or to an input staying unanswered.
"""

from __future__ import annotations

import contextlib
import secrets
import time
from dataclasses import dataclass, field
from typing import Any

import aiohttp

from fault_fixtures import Talker

RESEND_S = 2.0  # an input unanswered this long is sent again (the page waits 5 s)


@dataclass
class ResilientTalker(Talker):
    point: dict[str, Any] | None = None  # game, stream, seq: the last frame taken
    unanswered: dict[str, tuple[dict[str, Any], float]] = field(default_factory=dict)
    resent: int = 0  # inputs sent again
    duplicates: int = 0  # frames dropped because their seq was already taken
    resumes: int = 0  # gaps that asked for the rest

    def snapshot(self, frame: dict[str, Any]) -> None:
        super().snapshot(frame)
        if frame.get("stream"):
            self.point = {"game": frame["game"], "stream": frame["stream"], "seq": frame["seq"]}
        for key, (sent, _) in list(self.unanswered.items()):
            if sent["type"] == "message" and any(
                m["sender"] == "you" and m["channel"] == sent["channel"] and m["n"] >= sent["after"]
                for m in frame["messages"]
            ):
                del self.unanswered[key]

    recv_timeout_s: float = 0.5  # wake up often to send overdue inputs again

    async def _idle(self) -> None:
        await self._resend(overdue=True)

    async def _accept(self, frame: dict[str, Any]) -> bool:
        taken = self._take(frame)
        if taken == "gap":
            await self._send_quietly({"type": "resume", **(self.point or {})})
        return taken == "take"

    async def _resumed(self, frame: dict[str, Any]) -> None:
        self.point = {k: frame[k] for k in ("game", "stream", "seq")}
        await self._resend(overdue=False)

    def _deciding(self) -> bool:
        return any(f["type"] in ("end", "verdict") for f, _ in self.unanswered.values())

    def _take(self, frame: dict[str, Any]) -> str:
        """Whether to act on `frame` ("take"), or not ("drop": already taken; "gap": frames
        before it are missing). Answered inputs are forgotten."""
        if frame.get("ref"):
            self.unanswered.pop(frame["ref"], None)
        if frame["type"] in ("phase", "reveal"):
            for key, (sent, _) in list(self.unanswered.items()):
                ended = sent["type"] == "verdict" and frame["type"] == "reveal"
                if sent["type"] == "end" or ended:
                    del self.unanswered[key]
        seq = frame.get("seq")
        if seq is None or self.point is None or frame["type"] == "game":
            return "take"
        if seq <= self.point["seq"]:
            self.duplicates += 1
            return "drop"
        if seq > self.point["seq"] + 1:
            self.resumes += 1
            return "gap"
        self.point["seq"] = seq
        return "take"

    async def _send_quietly(self, frame: dict[str, Any]) -> None:
        # A socket that is going: the reconnect resumes and sends again.
        with contextlib.suppress(AssertionError, aiohttp.ClientError, ConnectionError):
            await self.person.send(**frame)

    async def _input(self, frame: dict[str, Any]) -> None:
        frame = {**frame, "id": secrets.token_hex(6)}
        self.unanswered[frame["id"]] = (frame, time.monotonic())
        await self.person.send(**frame)

    async def _resend(self, *, overdue: bool) -> None:
        now = time.monotonic()
        for key, (frame, sent_at) in list(self.unanswered.items()):
            if overdue and now - sent_at < RESEND_S:
                continue
            self.unanswered[key] = (frame, now)
            self.resent += 1
            await self._send_quietly(frame)

    async def _reconnect(self) -> None:
        await self.person.drop()
        self.bases = [*self.bases[1:], self.bases[0]]
        self.person.base = self.bases[0]
        url = self.person.base.replace("http", "ws") + "/ws"
        params = {k: str(v) for k, v in (self.point or {}).items()}
        self.person.ws = await self.person.http.ws_connect(url, params=params)
