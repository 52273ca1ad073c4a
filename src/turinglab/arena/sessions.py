"""Participants and their session tokens.

A browser is known by a random token in an HttpOnly cookie, never by its IP address (people
share addresses; one person can change theirs). The token maps to an anonymous participant id
("p-…"), which is all the study data ever names.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field

from starlette.requests import HTTPConnection
from starlette.responses import Response

COOKIE = "turinglab_session"
COOKIE_MAX_AGE_S = 7 * 24 * 3600


def set_session_cookie(response: Response, request: HTTPConnection, name: str, token: str) -> None:
    """HttpOnly and SameSite=strict always; Secure when the page came over HTTPS, directly or
    through a trusted TLS proxy (uvicorn's --proxy-headers sets the scheme from
    X-Forwarded-Proto), so the token never travels in clear text after a TLS start."""
    secure = request.url.scheme in ("https", "wss")
    response.set_cookie(
        name, token, httponly=True, samesite="strict", max_age=COOKIE_MAX_AGE_S, secure=secure
    )


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
    # How their study ended, decided as their survey was saved (arena/handoff.py).
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
