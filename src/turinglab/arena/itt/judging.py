"""ITT human judging on the arena's server: the judge page, its small JSON API, the admin page.

`judging_router` mounts under /judge in any FastAPI app (the arena's, via create_app's
`itt_study`); `create_judging_app` serves it alone. A judge is known by an HttpOnly cookie;
the server holds the batch and only ever sends the current trial's view, so nothing in the
page can reveal sources ahead of time and no feedback is given.
"""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable
from functools import partial
from html import escape
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Depends, FastAPI, HTTPException, Request, Response, status
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse
from fastapi.security import HTTPBasic, HTTPBasicCredentials
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.concurrency import run_in_threadpool

from turinglab.arena.http.new_records import NewRecordGate
from turinglab.arena.http.session_api import (
    STATIC,
    StartBody,
    admit,
    bad_request,
    first_error,
    page_with_session,
    read_body,
    read_start,
)
from turinglab.arena.itt.judging_store import LOG, Demographics, Judge, JudgingStore, Rejected
from turinglab.arena.itt.judging_study import JudgingStudy

COOKIE = "turinglab_judge"
BASIC = HTTPBasic(realm="Turing Lab admin")
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
)
Guard = Callable[..., None]


class Start(StartBody):
    demographics: dict[str, Any]


class AnswerIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    position: int = Field(ge=0)
    label: str
    control: str | None = None
    ms: int | None = Field(default=None, ge=0)


def admin_guard(password: str) -> Guard:
    """The arena's admin check (HTTP Basic, constant-time compare) for the standalone app."""

    def admin(credentials: Annotated[HTTPBasicCredentials, Depends(BASIC)]) -> None:
        if not secrets.compare_digest(credentials.password.encode(), password.encode()):
            raise HTTPException(
                status.HTTP_401_UNAUTHORIZED,
                "wrong admin password",
                headers={"WWW-Authenticate": 'Basic realm="Turing Lab admin"'},
            )

    return admin


def _state(store: JudgingStore, judge: Judge | None) -> dict[str, Any]:
    if judge is None:
        return {"registered": False}
    total = len(judge.batch.trials)
    answered = len(judge.answers)
    out: dict[str, Any] = {"registered": True, "answered": answered, "total": total}
    if answered < total:
        out["trial"] = store.study.view(judge.batch.trials[answered])
    return out


def judging_router(
    store: JudgingStore, guard: Guard, gate: NewRecordGate | None = None
) -> APIRouter:
    """`gate`: how many new judges one address may start (new_records.py; None: its
    defaults)."""
    router = APIRouter()
    gate = gate or NewRecordGate("judges")
    shown = partial(_state, store)  # what a start answers
    guarded = [Depends(guard)]

    def current(request: Request) -> Judge | None:
        return store.judge_for(request.cookies.get(COOKIE))

    @router.get("/judge")
    async def page(request: Request) -> Response:
        return page_with_session(request, "judge.html", COOKIE)

    @router.get("/judge/api/state")
    async def state(request: Request) -> JSONResponse:
        return JSONResponse(_state(store, current(request)), headers={"Cache-Control": "no-store"})

    @router.post("/judge/api/start")
    async def start(request: Request) -> JSONResponse:
        started = await read_start(request, COOKIE, Start)
        if isinstance(started, JSONResponse):
            return started
        token, body = started
        try:
            demo = Demographics.model_validate(body.demographics)
        except ValidationError as err:
            return bad_request(first_error(err))
        register = partial(store.register, token, demo)
        known = store.judge_for(token)
        return await admit(request, gate, len(store.judges), known, register, shown)

    @router.post("/judge/api/answer")
    async def answer(request: Request) -> JSONResponse:
        judge = current(request)
        if judge is None:
            return bad_request("not registered: fill in the form first")
        body = await read_body(request, AnswerIn)
        if isinstance(body, JSONResponse):
            return body
        try:
            await run_in_threadpool(
                store.answer, judge, body.position, body.label, body.control, body.ms
            )
        except Rejected as err:
            return JSONResponse({"error": str(err), **_state(store, judge)}, status_code=409)
        return JSONResponse(_state(store, judge))

    @router.get("/judge/media/{number}")
    async def media(number: int) -> Response:
        found = store.study.image(number)
        if found is None:
            raise HTTPException(404, "no such image")
        path, kind = found
        return FileResponse(path, media_type=kind, headers={"Cache-Control": "private"})

    @router.get("/judge/admin", response_class=HTMLResponse, dependencies=guarded)
    async def admin_home() -> HTMLResponse:
        return HTMLResponse(admin_page(store), headers={"Cache-Control": "no-store"})

    @router.get("/judge/admin/judgements.csv", dependencies=guarded)
    async def admin_judgements() -> Response:
        rows = store.output.read_bytes() if store.output.is_file() else b""
        return Response(
            rows,
            media_type="text/csv",
            headers={"Content-Disposition": 'attachment; filename="judgements-human.csv"'},
        )

    @router.get("/judge/admin/log.jsonl", dependencies=guarded)
    async def admin_log() -> Response:
        path = store.study.folder / LOG
        return Response(
            path.read_bytes() if path.is_file() else b"",
            media_type="application/x-ndjson",
            headers={"Content-Disposition": 'attachment; filename="judging-log.jsonl"'},
        )

    return router


def admin_page(store: JudgingStore) -> str:
    judges = store.summary()
    screened = store.screened()
    columns = ["judge", "answered", "total", "controls", "status", "age", "gender", "education"]
    body = "".join(
        "<tr>" + "".join(f"<td>{escape(str(j[c]))}</td>" for c in columns) + "</tr>" for j in judges
    )
    head = "".join(f"<th>{escape(c)}</th>" for c in columns)
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Turing Lab · ITT judging admin</title>
<link rel="stylesheet" href="/static/judge.css"></head>
<body class="admin"><main class="card wide">
<h1>ITT judging</h1>
<p>{escape(store.study.folder.name)} · {len(judges)} judges ·
{sum(1 for j in judges if j["status"] != "judging")} finished ·
{len(screened.excluded_judges)} excluded (control accuracy &lt;
{store.min_control_accuracy:.0%}) · {screened.dropped_trials} trials dropped for a missed
control · {len(screened.judgements)} judgements kept</p>
<p><a href="/judge/admin/judgements.csv">judgements file</a> (for <code>turinglab itt
score</code>) · <a href="/judge/admin/log.jsonl">raw answer log</a></p>
<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>
</main></body></html>"""


def open_judging(
    study_dir: Path, *, batch_size: int = 20, seed: int = 0, min_control_accuracy: float = 0.75
) -> JudgingStore:
    """Open a study folder for judging (raises ValueError with one line if it cannot be)."""
    return JudgingStore(
        JudgingStudy.open(study_dir),
        batch_size=batch_size,
        seed=seed,
        min_control_accuracy=min_control_accuracy,
    )


def create_judging_app(
    study_dir: Path,
    *,
    admin_password: str,
    batch_size: int = 20,
    seed: int = 0,
    min_control_accuracy: float = 0.75,
) -> FastAPI:
    """A server for judging one ITT study folder alone (the arena mounts the same router)."""
    store = open_judging(
        study_dir, batch_size=batch_size, seed=seed, min_control_accuracy=min_control_accuracy
    )
    app = FastAPI(title="Turing Lab ITT judging", docs_url=None, redoc_url=None)
    app.state.judging = store

    @app.middleware("http")
    async def headers(
        request: Request, call_next: Callable[[Request], Awaitable[Response]]
    ) -> Response:
        response = await call_next(request)
        response.headers["Content-Security-Policy"] = CSP
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Referrer-Policy"] = "no-referrer"
        return response

    app.include_router(judging_router(store, admin_guard(admin_password)))
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    return app
