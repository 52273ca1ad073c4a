"""The recruitment hand-off, decided by the server: which code a participant has earned.

The page never holds the study's codes (a code in the page's source is a code for no work).
It asks `GET /handoff` once its survey is saved, or as someone declines, and gets the one end
that applies:

* `completion`: every study round played (practice never counts: rounds.py) and the survey
  saved;
* `timed_out`: sent to the survey for want of a partner (status "no-match") before that;
* `early_exit`: the survey saved before the rounds were played ("Finish & exit survey");
* `screened_out`: declined the consent form (no session), or withdrew after taking part
  (`POST /withdraw`: their data is marked withdrawn and left out of every export,
  study_export.py).

The end is decided as the survey is saved and kept with it (in the store, so any process can
answer the page), with the rounds done then; the admin page and the export show both.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from fastapi import FastAPI, HTTPException, Request, status
from fastapi.responses import JSONResponse

from turinglab.arena.core.participants import Participant
from turinglab.arena.core.study_ending import End
from turinglab.arena.http.session_cookie import COOKIE

if TYPE_CHECKING:
    from turinglab.arena.core.hub import Arena
    from turinglab.arena.core.hub_port import Hub
    from turinglab.arena.core.study_config import Recruitment

WITHDRAWN_TEXT = (
    "You withdrew your consent. Your data in this study is marked as withdrawn: it is left "
    "out of every export the researchers can download."
)
NO_SESSION_TEXT = "You did not agree to take part, so no data of yours has been kept."


def _answer(recruitment: Recruitment, end: End, **extra: Any) -> JSONResponse:
    to = getattr(recruitment, end)
    body = {
        "end": end,
        "code": to.code,
        "url": to.url,
        "redirect_after_s": recruitment.redirect_after_s,
        **extra,
    }
    return JSONResponse(body, headers={"Cache-Control": "no-store"})


async def _kept_ending(arena: Arena, person: Participant) -> dict[str, Any] | None:
    """The end decided for `person`: here, or (their survey saved by another process) in the
    store."""
    if person.ending is not None:
        return person.ending
    store = arena.store
    if store is None:
        return None
    await store.flush()
    people = await asyncio.to_thread(store.participants)
    found = people.get(person.id, {}).get("study_end")
    return found if isinstance(found, dict) else None


def add_handoff_routes(app: FastAPI, hub: Hub) -> None:
    """`hub`: takes a person who withdraws out of every queue, wherever they wait (with
    several processes, the shared ones too: cluster_hub.py)."""
    arena = hub.arena

    @app.get("/handoff")
    async def handoff(request: Request) -> JSONResponse:
        recruitment = arena.setup.settings.study.recruitment
        person = arena.sessions.get(request.cookies.get(COOKIE))
        if person is None:
            return _answer(recruitment, "screened_out", text=NO_SESSION_TEXT)
        if person.withdrawn:
            return _answer(recruitment, "screened_out", text=WITHDRAWN_TEXT)
        kept = await _kept_ending(arena, person)
        if kept is None:
            message = {"end": None, "message": "Your study is not over: no code yet."}
            return JSONResponse(message, 409, headers={"Cache-Control": "no-store"})
        done, total = kept.get("rounds_done"), kept.get("rounds_total")
        reason = kept.get("reason")  # witness rounds excused, if any
        return _answer(
            recruitment, kept["end"], rounds_done=done, rounds_total=total, reason=reason
        )

    @app.post("/withdraw")
    async def withdraw(request: Request) -> JSONResponse:
        """Consent withdrawn after taking part: the data is marked withdrawn (every export
        leaves it out) and the screened-out hand-off given."""
        if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
            raise HTTPException(status.HTTP_415_UNSUPPORTED_MEDIA_TYPE, "expected JSON")
        recruitment = arena.setup.settings.study.recruitment
        person = arena.sessions.get(request.cookies.get(COOKIE))
        if person is None:
            return _answer(recruitment, "screened_out", text=NO_SESSION_TEXT)
        live = arena.games.get(person.game or "")
        if live is not None and live.result is None:
            message = {"end": None, "message": "Finish the game first."}
            return JSONResponse(message, 409, headers={"Cache-Control": "no-store"})
        await hub.withdraw(person)  # no process may seat them from now on
        return _answer(recruitment, "screened_out", text=WITHDRAWN_TEXT)
