"""Participants and their session tokens.

A browser is known by a random token in an HttpOnly cookie, never by its IP address (people
share addresses; one person can change theirs). The token maps to an anonymous participant id
("p-…"), which is all the study data ever names.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field

COOKIE = "turinglab_session"


@dataclass
class Participant:
    id: str  # anonymous, exported
    token: str = field(repr=False)  # secret, only in the cookie
    consented: bool = False
    game: str | None = None  # the one active game, if any
    survey: dict[str, str | int | None] | None = None
    games_played: list[str] = field(default_factory=list)


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
