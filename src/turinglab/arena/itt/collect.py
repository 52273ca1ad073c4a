"""Collecting human responses on the arena's server (`turinglab serve --itt-collect STIMULI`):
the /respond page, its small JSON API, the stimulus images and the admin export.

A participant consents, then answers one stimulus at a time — a caption for an image, one word
for a cue, an image's dominant colour from the paper's list, three things seen in an image —
with the task's controls (itt/tasks.py) checked on the server. A participant is
known by an HttpOnly cookie and by an anonymous id in the data; the page only ever gets the
current stimulus. Stored answers download as dataset rows at /admin/export/responses.csv.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Depends, HTTPException, Request, Response
from fastapi.responses import FileResponse, JSONResponse
from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic_core import PydanticCustomError
from starlette.concurrency import run_in_threadpool

from turinglab.arena.core.chat_text import clean, utf16_length
from turinglab.arena.http.new_records import NewRecordGate
from turinglab.arena.http.session_api import (
    StartBody,
    admit,
    bad_request,
    page_with_session,
    read_body,
    read_start,
)
from turinglab.arena.itt.collect_store import CollectStore, Participant, Refused
from turinglab.arena.itt.judging import Guard

COOKIE = "turinglab_respondent"
MAX_ANSWER_CHARS = 1000  # as the page's maxlength counts: UTF-16 code units


class StartIn(StartBody):
    """Consent alone (its own name: pydantic's errors name the model)."""


class AnswerIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    position: int = Field(ge=0)
    text: str

    @field_validator("text")
    @classmethod
    def _cleaned(cls, text: str) -> str:
        """Without control or bidi characters (chat_text.py), as the chat's messages are:
        what is stored, exported and shown to judges reads as it was typed."""
        text = clean(text)
        if utf16_length(text) > MAX_ANSWER_CHARS:
            raise PydanticCustomError(
                "too_long", f"an answer has at most {MAX_ANSWER_CHARS} characters"
            )
        return text


def _state(store: CollectStore, p: Participant | None) -> dict[str, Any]:
    if p is None:
        return {"registered": False}
    out: dict[str, Any] = {"registered": True, "answered": len(p.answers), "total": len(p.order)}
    trial = store.current(p)
    if trial is not None:
        out["trial"] = trial
    return out


def collect_router(
    store: CollectStore, guard: Guard, gate: NewRecordGate | None = None
) -> APIRouter:
    """`gate`: how many new respondents one address may start (new_records.py; None: its
    defaults)."""
    router = APIRouter()
    gate = gate or NewRecordGate("respondents")
    shown = partial(_state, store)  # what a start answers

    def current(request: Request) -> Participant | None:
        return store.participant_for(request.cookies.get(COOKIE))

    @router.get("/respond")
    async def page(request: Request) -> Response:
        return page_with_session(request, "respond.html", COOKIE)

    @router.get("/respond/api/state")
    async def state(request: Request) -> JSONResponse:
        return JSONResponse(_state(store, current(request)), headers={"Cache-Control": "no-store"})

    @router.post("/respond/api/start")
    async def start(request: Request) -> JSONResponse:
        started = await read_start(request, COOKIE, StartIn)
        if isinstance(started, JSONResponse):
            return started
        token, _consented = started
        register = partial(store.register, token)
        known = store.participant_for(token)
        return await admit(request, gate, len(store.participants), known, register, shown)

    @router.post("/respond/api/answer")
    async def answer(request: Request) -> JSONResponse:
        p = current(request)
        if p is None:
            return bad_request("not registered: give your consent first")
        body = await read_body(request, AnswerIn)
        if isinstance(body, JSONResponse):
            return body
        try:
            await run_in_threadpool(store.answer, p, body.position, body.text)
        except Refused as err:
            violations = [{"rule": v.rule, "message": v.message} for v in err.violations]
            return JSONResponse(
                {"error": str(err), "violations": violations, **_state(store, p)},
                status_code=422,
            )
        return JSONResponse(_state(store, p))

    @router.get("/respond/media/{number}")
    async def media(number: int) -> Response:
        if not 0 <= number < len(store.images):
            raise HTTPException(404, "no such image")
        path: Path = store.images[number]
        return FileResponse(
            path, media_type=store.media_types[path], headers={"Cache-Control": "private"}
        )

    @router.get("/admin/export/responses.csv", dependencies=[Depends(guard)])
    async def export() -> Response:
        data = await run_in_threadpool(store.csv_bytes)
        return Response(
            data,
            media_type="text/csv",
            headers={"Content-Disposition": 'attachment; filename="responses-human.csv"'},
        )

    return router
