"""The admin's pages behind the password: the study (open another, close it), each game's
transcript (and ending a stuck one), the live games, metrics and the images messages carried.

`add_admin_guard` makes the password check every admin route depends on; a device that once
gave the right password gets a cookie that spares it the wrong-guess throttle.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Annotated, Any

from fastapi import Depends, FastAPI, HTTPException, Request, Response, status
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse
from fastapi.security import HTTPBasic, HTTPBasicCredentials

from turinglab.arena.core.hub_port import Hub
from turinglab.arena.core.metrics import CONTENT_TYPE
from turinglab.arena.core.modes import ArenaSetup
from turinglab.arena.core.store_bridge import ArenaStore
from turinglab.arena.core.witness_preflight import opened_study_problem
from turinglab.arena.web.admin import StudyForm, admin_page, transcript_page
from turinglab.arena.web.admin_guard import (
    DEVICE_COOKIE,
    DEVICE_MAX_AGE_S,
    GuessThrottle,
    device_token,
    known_device,
)
from turinglab.arena.web.admin_keys import KeyAllowlist
from turinglab.arena.web.admin_people import study_view
from turinglab.arena.web.metrics_page import render_metrics
from turinglab.arena.web.study_admin import AdminFormError, open_study, read_form
from turinglab.store.media import MediaError

BASIC = HTTPBasic(realm="Turing Lab admin")
AdminGuard = Callable[..., None]  # a FastAPI dependency: raises unless the admin asks


def add_admin_guard(app: FastAPI, admin_password: str) -> AdminGuard:
    """The password check, throttled per address, and the cookie that remembers a device."""
    guesses = GuessThrottle()

    def admin(
        request: Request, credentials: Annotated[HTTPBasicCredentials, Depends(BASIC)]
    ) -> None:
        address = request.client.host if request.client else "unknown"
        now = time.monotonic()
        known = known_device(request.cookies.get(DEVICE_COOKIE), admin_password)
        wait = None if known else guesses.retry_after(address, now)
        if wait is not None:
            raise HTTPException(
                status.HTTP_429_TOO_MANY_REQUESTS,
                "too many wrong admin passwords; try again later",
                headers={"Retry-After": str(int(wait) + 1)},
            )
        given = credentials.password.encode()
        if not secrets.compare_digest(given, admin_password.encode()):
            guesses.wrong(address, now)
            raise HTTPException(
                status.HTTP_401_UNAUTHORIZED,
                "wrong admin password",
                headers={"WWW-Authenticate": 'Basic realm="Turing Lab admin"'},
            )
        if not known:
            request.state.admin_device = True  # remember_admin_device sets the cookie

    @app.middleware("http")
    async def remember_admin_device(
        request: Request, call_next: Callable[[Request], Awaitable[Response]]
    ) -> Response:
        response = await call_next(request)
        if getattr(request.state, "admin_device", False):
            response.set_cookie(
                DEVICE_COOKIE,
                device_token(admin_password),
                max_age=DEVICE_MAX_AGE_S,
                httponly=True,
                samesite="strict",
                secure=request.url.scheme == "https",
            )
        return response

    return admin


def add_admin_routes(
    app: FastAPI,
    hub: Hub,
    guard: AdminGuard,
    *,
    startup: ArenaSetup,
    store: ArenaStore | None,
    csrf: str,
    studies_dir: Path | None,
    admin_keys: KeyAllowlist | None,
) -> None:
    """`startup`: the study closing another goes back to; `store`: the start-up store, where
    images are kept; `csrf`: the token in every admin form (a cross-site post cannot know it)."""
    arena = hub.arena
    guarded = [Depends(guard)]
    study = {"source": "the start-up study"}
    # One process may switch studies; several would disagree about which one is open. Without
    # a store the open study's games live only in memory, and a switch would mix two studies.
    fixed_study = hub.study_fixed
    if fixed_study is None and store is None:
        fixed_study = "Opening another study needs a store (turinglab serve --store)."

    async def admin_html(error: str | None = None, code: int = 200) -> HTMLResponse:
        form = StudyForm(csrf, study["source"], studies_dir, fixed_study, error)
        view = await study_view(hub)  # the whole study, from the store
        page = admin_page(arena, form, await hub.live_games(), view)
        return HTMLResponse(page, code, headers={"Cache-Control": "no-store"})

    @app.get("/admin", response_class=HTMLResponse, dependencies=guarded)
    async def admin_home() -> HTMLResponse:
        return await admin_html()

    @app.post("/admin/study", response_class=HTMLResponse, dependencies=guarded)
    async def admin_open_study(request: Request) -> Response:
        try:
            fields = await read_form(request, csrf)
            if fixed_study is not None:
                raise AdminFormError(fixed_study, 409)
            opened = await asyncio.to_thread(open_study, fields, studies_dir, admin_keys)
            # As at start-up: AI witnesses slower than a person are refused (or warned of).
            new = opened.setup.settings
            problem = await opened_study_problem(
                opened.experiment, opened.setup.agents, new.witness_timing, new.witness_reply_max_s
            )
            if problem:
                raise AdminFormError(problem)
            arena.open_study(opened.setup)
        except (AdminFormError, ValueError) as err:
            return await admin_html(str(err), getattr(err, "status", 400))
        study["source"] = opened.source
        return RedirectResponse("/admin", status.HTTP_303_SEE_OTHER)

    @app.post("/admin/study/close", response_class=HTMLResponse, dependencies=guarded)
    async def admin_close_study(request: Request) -> Response:
        try:
            await read_form(request, csrf)
            if fixed_study is not None:
                raise AdminFormError(fixed_study, 409)
            arena.open_study(startup)
        except (AdminFormError, ValueError) as err:
            return await admin_html(str(err), getattr(err, "status", 400))
        study["source"] = "the start-up study"
        return RedirectResponse("/admin", status.HTTP_303_SEE_OTHER)

    async def game_record(gid: str) -> dict[str, Any] | None:
        """A game as the admin sees it: played here (live or recent), else from the store
        (every process writes there), else None."""
        game = arena.games.get(gid)
        if game is not None:
            return game.record()
        open_store = arena.store  # the open study's
        if open_store is not None:
            await open_store.flush()
            records = await asyncio.to_thread(open_store.records)
            return next((g for g in records if g["game"] == gid), None)
        return next((g for g in arena.finished if g["game"] == gid), None)

    @app.get("/admin/game/{gid}", response_class=HTMLResponse, dependencies=guarded)
    async def admin_game(gid: str) -> HTMLResponse:
        """A game's live transcript (refreshing itself while the game runs)."""
        record = await game_record(gid)
        if record is None:
            raise HTTPException(status.HTTP_404_NOT_FOUND, "no such game")
        why = None if await hub.owner_of(gid) else "This game is not being played (any more)."
        page = transcript_page(record, csrf, why)
        return HTMLResponse(page, headers={"Cache-Control": "no-store"})

    @app.post("/admin/game/{gid}/end", response_class=HTMLResponse, dependencies=guarded)
    async def admin_end_game(gid: str, request: Request) -> Response:
        """End a stuck game: flagged with the admin's reason, everything said kept; the
        people in it are told and get the round back (abandon.py's give_rounds_back)."""
        try:
            fields = await read_form(request, csrf)
        except AdminFormError as err:
            return HTMLResponse(str(err), err.status)
        reason = " ".join(fields.get("reason", "").split())[:300]
        if not reason:
            return HTMLResponse("Give a reason for the record.", status.HTTP_409_CONFLICT)
        owner = await hub.owner_of(gid)
        if owner is None:
            return HTMLResponse("This game is not being played.", status.HTTP_409_CONFLICT)
        await hub.end_game(owner, gid, reason)  # by its owner (admin_end.py), wherever it is
        return RedirectResponse(f"/admin/game/{gid}", status.HTTP_303_SEE_OTHER)

    @app.get("/metrics", dependencies=guarded)
    async def metrics() -> Response:
        """Prometheus text format (arena/core/metrics.py), behind the admin password."""
        return Response(render_metrics(hub), media_type=CONTENT_TYPE)

    @app.get("/admin/live.json", dependencies=guarded)
    async def admin_live() -> JSONResponse:
        return JSONResponse(await hub.live_games())

    @app.get("/admin/media/{ref}", dependencies=guarded)
    async def admin_media(ref: str) -> Response:
        """An image a message carried, by the reference the export gives."""
        if store is None:
            raise HTTPException(status.HTTP_404_NOT_FOUND, "no store: images are not kept")
        try:
            image = await asyncio.to_thread(store.image, ref)
        except MediaError as err:
            raise HTTPException(status.HTTP_404_NOT_FOUND, str(err)) from None
        return Response(image.data, media_type=image.media_type)
