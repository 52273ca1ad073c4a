"""The people of the arena: a participant, known to the study only by an anonymous id, and
the sessions that map a browser's secret token to one (the cookie is http/session_cookie.py)."""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field


@dataclass
class Participant:
    id: str  # anonymous, exported
    token: str = field(repr=False)  # secret, only in the cookie
    consented: bool = False
    game: str | None = None  # the one active game, if any
    survey: dict[str, str | int | None] | None = None
    games_played: list[str] = field(default_factory=list)
    # The recruitment platform's ids (PROLIFIC_PID, ?pid=…) given as the person consented.
    recruitment: dict[str, str] = field(default_factory=dict)
    timed_out: bool = False  # was sent on for want of a partner (status "no-match")
    # How their study ended, decided as their survey was saved (arena/web/handoff.py).
    ending: dict[str, str | int] | None = None
    withdrawn: bool = False  # withdrew consent after taking part: their data is left out


class Sessions:
    def __init__(self) -> None:
        self._by_token: dict[str, Participant] = {}
        self.by_id: dict[str, Participant] = {}

    def new(self) -> Participant:
        p = Participant(id=f"p-{secrets.token_hex(6)}", token=secrets.token_urlsafe(32))
        self._by_token[p.token] = p
        self.by_id[p.id] = p
        return p

    def get(self, token: str | None) -> Participant | None:
        if not token:
            return None
        return self._by_token.get(token)

    def __len__(self) -> int:
        return len(self.by_id)
