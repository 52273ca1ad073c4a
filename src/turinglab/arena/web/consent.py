"""POST /consent: a session starts only once the person agrees, and no loop can mint thousands.

Each new session is a participant in memory and a row in the store, so a script posting
consent in a loop could fill the study with empty participants (and their surveys). New
sessions pass a NewRecordGate (new_records.py): `consents_per_address` within
`consent_window_s` per client address, and at most `max_sessions` in this process. A person who
already has a session (a reload, a second tab, their recruitment ids arriving) never counts.
Refusals are 429 or 503 with Retry-After. The body is read up to 4 KiB only (request_body.py).
"""

from __future__ import annotations

from collections.abc import Callable

from fastapi import FastAPI, HTTPException, Request, Response, status
from fastapi.responses import JSONResponse

from turinglab.arena.core.hub import Arena
from turinglab.arena.core.study_config import recruitment_ids
from turinglab.arena.http.new_records import Limits, NewRecordGate, client_address
from turinglab.arena.http.request_body import BodyTooLarge, bounded_json
from turinglab.arena.http.session_cookie import COOKIE, set_session_cookie

MAX_BODY_BYTES = 4096


def arena_limits(arena: Arena) -> Callable[[], Limits]:
    """The open study's limits on new records (also those of /judge and /respond)."""

    def limits() -> Limits:
        settings = arena.setup.settings  # read now: the admin may have opened another study
        return Limits(
            settings.consents_per_address, settings.consent_window_s, settings.max_sessions
        )

    return limits


def add_consent_route(app: FastAPI, arena: Arena) -> None:
    gate = NewRecordGate("sessions", arena_limits(arena))

    @app.post("/consent")
    async def consent(request: Request) -> Response:
        """A session, only once the person has agreed; with their recruitment ids (Prolific's
        PROLIFIC_PID, STUDY_ID and SESSION_ID, or ?pid=) from the page's URL."""
        if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
            raise HTTPException(status.HTTP_415_UNSUPPORTED_MEDIA_TYPE, "expected JSON")
        try:
            given = await bounded_json(request, MAX_BODY_BYTES)
        except BodyTooLarge as err:
            raise HTTPException(status.HTTP_413_CONTENT_TOO_LARGE, str(err)) from None
        except ValueError:
            given = None
        if not isinstance(given, dict) or given.get("consent") is not True:
            raise HTTPException(status.HTTP_400_BAD_REQUEST, "consent is required")
        person = arena.sessions.get(request.cookies.get(COOKIE))
        if person is None:
            address = client_address(request)
            refused = gate.refusal(address, len(arena.sessions))
            if refused is not None:
                raise HTTPException(refused.status, refused.message, headers=refused.headers)
            person = arena.sessions.new()
            gate.started(address)
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
