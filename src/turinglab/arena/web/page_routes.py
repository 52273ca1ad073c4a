"""The public routes that are not the study's own: the page, its static files, the favicon and
the health check."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request, Response, status
from fastapi.responses import HTMLResponse, RedirectResponse
from fastapi.staticfiles import StaticFiles

from turinglab.arena.core.hub_port import Hub
from turinglab.arena.http.session_cookie import COOKIE
from turinglab.arena.web.study_page import PageCache

STATIC = Path(__file__).parents[1] / "static"


def add_page_routes(app: FastAPI, hub: Hub) -> None:
    """The hub says which services /healthz asks after (the store, Redis)."""
    arena = hub.arena
    # Rendered once per study: every person loads it, and a file response costs several
    # thread hops each.
    pages = PageCache((STATIC / "index.html").read_text(encoding="utf-8"))

    @app.get("/")
    async def index(request: Request) -> Response:
        # No session yet: the page shows the consent form; POST /consent starts one.
        session = arena.sessions.get(request.cookies.get(COOKIE)) is not None
        page = pages.page(arena.setup, session)
        return HTMLResponse(page, headers={"Cache-Control": "no-store"})

    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    @app.get("/favicon.ico")
    async def favicon() -> Response:
        """Pages link /static/favicon.svg; anything else a browser shows asks here."""
        return RedirectResponse("/static/favicon.svg", status.HTTP_308_PERMANENT_REDIRECT)

    @app.get("/healthz")
    async def healthz(response: Response) -> dict[str, Any]:
        """200 when every service this process needs answers; 503 (with which one) if not.
        Public, so it says nothing of the study: counts of games and people are in /admin."""
        checks = await hub.health()
        ok = all(checks.values())
        if not ok:
            response.status_code = 503
        return {"ok": ok, "status": "ok" if ok else "degraded", **checks}
