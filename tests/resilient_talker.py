"""A scripted participant that behaves as the arena page does after a fault (arena.js).

Like fault_fixtures.Talker, it answers (a witness) or asks on every channel in turn (the
interrogator), taking frames as the page does. Beyond it, it keeps the page's inputs: every
input carries an id and is kept until the server answers it, and is sent again when overdue,
after a reconnect once caught up, and after a snapshot that does not show it; a server silent
past the page's limit is given up, and a reconnect names the last frame taken. All of it is
the page's protocol (arena/page_protocol.py, the rules of static/protocol.js); nothing here
waits a fixed time hoping: it reacts to frames, or to the page's heartbeat.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any

from fault_fixtures import Talker, now_ms


@dataclass
class ResilientTalker(Talker):
    resent: int = 0  # inputs sent again

    recv_timeout_s: float = 0.5  # the page's heartbeat, checked often

    async def _idle(self) -> None:
        beat = self.page.tick(now_ms(), "open")
        if beat.dead:  # the server stopped answering (a paused process): go elsewhere
            await self._reconnect()
            return
        for frame in beat.sends:
            await self._sent_again(frame)

    async def _sent_again(self, frame: dict[str, Any]) -> None:
        self.resent += "id" in frame
        await super()._sent_again(frame)

    def _deciding(self) -> bool:
        return any(h.frame["type"] in ("end", "verdict") for h in self.page.unanswered.values())

    async def _input(self, frame: dict[str, Any]) -> None:
        frame = {**frame, "id": secrets.token_hex(6)}
        for out in self.page.input(frame, now_ms(), self.person.ws is not None):
            await self.person.send(**out)

    async def _reconnect(self) -> None:
        await self.person.drop()
        self.bases = [*self.bases[1:], self.bases[0]]
        self.person.base = self.bases[0]
        url = self.person.base.replace("http", "ws") + "/ws"
        params = {k: str(v) for k, v in (self.page.query() or {}).items()}
        self.page.connecting(now_ms())
        self.person.ws = await self.person.http.ws_connect(url, params=params)
        self.page.opened(now_ms())
