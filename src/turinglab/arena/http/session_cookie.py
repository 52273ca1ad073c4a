"""Participants and their session tokens.

A browser is known by a random token in an HttpOnly cookie, never by its IP address (people
share addresses; one person can change theirs). The token maps to an anonymous participant id
("p-…"), which is all the study data ever names.
"""

from __future__ import annotations

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
