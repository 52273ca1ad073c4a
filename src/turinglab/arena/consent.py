"""POST /consent: a session starts only once the person agrees, and no loop can mint thousands.

Each new session is a participant in memory and a row in the store, so a script posting
consent in a loop could fill the study with empty participants (and their surveys). New
sessions are limited per client address — `consents_per_address` within `consent_window_s`,
a sliding window, generous enough for a lab of people behind one NAT — and this process holds
at most `max_sessions`. A person who already has a session (a reload, a second tab, their
recruitment ids arriving) never counts. Refusals are 429 or 503 with Retry-After, one log
line when an address starts being refused.

The address is the client's as uvicorn gives it: behind a TLS proxy that is the proxy's unless
`turinglab serve --proxy-headers --forwarded-allow-ips …` trusts its X-Forwarded-For — without
it every participant seems to come from the proxy and they all share one limit.
"""

from __future__ import annotations

import json
import logging
import time
from collections import deque

from fastapi import FastAPI, HTTPException, Request, Response, status
from fastapi.responses import JSONResponse

from turinglab.arena.hub import Arena
from turinglab.arena.sessions import COOKIE, set_session_cookie
from turinglab.arena.study_config import recruitment_ids

log = logging.getLogger(__name__)

MAX_BODY_BYTES = 4096
MAX_ADDRESSES = 10_000  # forget the oldest beyond this (a scan from many addresses is bounded)


class NewSessionThrottle:
    """How many sessions each address started recently (at most `limit` times kept each)."""

    def __init__(self) -> None:
        self._started: dict[str, deque[float]] = {}

    def retry_after(self, address: str, now: float, limit: int, window_s: float) -> float | None:
        """Seconds until `address` may start another session; None when it may now."""
        times = self._started.get(address)
        if times is None:
            return None
        while times and now - times[0] >= window_s:
            times.popleft()
        if len(times) < limit:
            return None
        return max(1.0, window_s - (now - times[0]))

    def started(self, address: str, now: float, limit: int) -> None:
        times = self._started.pop(address, None) or deque()
        times.append(now)
        while len(times) > limit:
            times.popleft()
        self._started[address] = times  # re-inserted: the dict's order is least recent first
        if len(self._started) > MAX_ADDRESSES:
            del self._started[next(iter(self._started))]


def add_consent_route(app: FastAPI, arena: Arena) -> None:
    throttle = NewSessionThrottle()
    refusing: set[str] = set()  # addresses refused now, so the log says it once per episode

    def may_start(address: str) -> None:
        settings = arena.setup.settings  # read now: the admin may have opened another study
        if len(arena.sessions) >= settings.max_sessions:
            if "" not in refusing:  # "": the whole process
                refusing.add("")
                log.warning("consent: this process holds %d sessions (max_sessions); refusing "
                            "new ones", len(arena.sessions))  # fmt: skip
            raise HTTPException(
                status.HTTP_503_SERVICE_UNAVAILABLE,
                "the study cannot take anyone new right now; please try again later",
                headers={"Retry-After": "600"},
            )
        refusing.discard("")
        limit, window = settings.consents_per_address, settings.consent_window_s
        wait = throttle.retry_after(address, time.monotonic(), limit, window)
        if wait is None:
            refusing.discard(address)
            return
        if address not in refusing:
            refusing.add(address)
            log.warning(
                "consent: %d new sessions from %s within %g s; refusing more for %.0f s "
                "(behind a proxy, serve with --proxy-headers)", limit, address, window, wait,
            )  # fmt: skip
        raise HTTPException(
            status.HTTP_429_TOO_MANY_REQUESTS,
            "too many new sessions from your address; please try again later",
            headers={"Retry-After": str(int(wait) + 1)},
        )

    @app.post("/consent")
    async def consent(request: Request) -> Response:
        """A session, only once the person has agreed; with their recruitment ids (Prolific's
        PROLIFIC_PID, STUDY_ID and SESSION_ID, or ?pid=) from the page's URL."""
        if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
            raise HTTPException(status.HTTP_415_UNSUPPORTED_MEDIA_TYPE, "expected JSON")
        body = await request.body()
        try:
            given = json.loads(body) if len(body) <= MAX_BODY_BYTES else None
        except ValueError:
            given = None
        if not isinstance(given, dict) or given.get("consent") is not True:
            raise HTTPException(status.HTTP_400_BAD_REQUEST, "consent is required")
        person = arena.sessions.get(request.cookies.get(COOKIE))
        if person is None:
            address = request.client.host if request.client else "unknown"
            may_start(address)
            person = arena.sessions.new()
            throttle.started(address, time.monotonic(), arena.setup.settings.consents_per_address)
        first, person.consented = not person.consented, True
        ids = recruitment_ids(given.get("ids"))
        if ids and not person.recruitment:
            person.recruitment = ids
            first = True
        if first and arena.store is not None:  # kept: every process's /admin lists them
            arena.store.consented(person.id, person.recruitment)
        response = JSONResponse({"ok": True}, headers={"Cache-Control": "no-store"})
        set_session_cookie(response, request, COOKIE, person.token)
        return response
