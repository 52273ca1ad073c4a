"""The arena's web app: the page, the websocket, the admin pages.

`create_app` is a factory so tests and `serve` build the same thing, and a short composition:
each group of routes lives in its own module and is added here. Pages are static files (no
CDN, no third-party request: a strict Content-Security-Policy says so to the browser); all
live state goes over one websocket per tab, and the server is the only authority on it.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections import Counter
from collections.abc import AsyncIterator, Callable
from pathlib import Path

from fastapi import FastAPI, WebSocket

from turinglab.arena.cluster.cluster_hub import cluster_hub
from turinglab.arena.core.hub import Arena, FinishedHook
from turinglab.arena.core.hub_port import Hub
from turinglab.arena.core.local_hub import LocalHub
from turinglab.arena.core.modes import ArenaSetup
from turinglab.arena.core.store_bridge import ArenaStore
from turinglab.arena.http.new_records import NewRecordGate
from turinglab.arena.http.security_headers import SecurityHeaders
from turinglab.arena.itt.collect import collect_router
from turinglab.arena.itt.collect_store import CollectStore
from turinglab.arena.itt.judging import judging_router
from turinglab.arena.itt.judging_store import JudgingStore
from turinglab.arena.web.admin_keys import KeyAllowlist
from turinglab.arena.web.admin_routes import add_admin_guard, add_admin_routes
from turinglab.arena.web.consent import add_consent_route, arena_limits
from turinglab.arena.web.export_routes import add_export_routes
from turinglab.arena.web.handoff import add_handoff_routes
from turinglab.arena.web.image_routes import add_image_route
from turinglab.arena.web.page_routes import add_page_routes
from turinglab.arena.web.player_socket import FrameLog, SocketRoute, serve_socket
from turinglab.games.clock import REAL_CLOCK, Clock

TICK_S = 0.5


def create_app(
    setup: ArenaSetup,
    *,
    admin_password: str,
    clock: Clock = REAL_CLOCK,
    on_finished: FinishedHook | None = None,
    frame_log: FrameLog | None = None,
    judging: JudgingStore | None = None,
    collecting: CollectStore | None = None,
    store: ArenaStore | None = None,
    redis_url: str | None = None,
    secret: str | None = None,
    namespace: str | None = None,
    studies_dir: Path | None = None,
    admin_keys: KeyAllowlist | None = None,
) -> FastAPI:
    """`store`: write every game to the generic store as it is played, and export from it.
    `redis_url` (with `secret`, shared by all processes): one of several processes serving
    one arena (cluster.py); `namespace` keeps their Redis keys apart from other arenas'.
    `studies_dir`: the folder whose config files the admin may open as a study; `admin_keys`:
    the API-key variables those configs may use (admin_keys.py; None: none)."""
    # The one place that knows whether other processes serve this arena: every route below
    # talks to the hub alike (hub_port.py).
    hub: Hub
    if redis_url is None:
        hub = LocalHub(Arena(setup, clock, on_finished, store), store)
    else:
        hub = cluster_hub(
            setup,
            clock,
            on_finished,
            store,
            redis_url=redis_url,
            secret=secret,
            namespace=namespace,
        )
    arena = hub.arena

    # No OpenAPI schema or docs pages: nothing to hand a prober the admin routes.
    app = FastAPI(
        title="Turing Lab arena",
        lifespan=_lifespan(hub),
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
    )
    app.state.arena = arena
    add_image_route(app)  # images are uploaded, then named in a message (the kits that take them)
    app.add_middleware(SecurityHeaders)
    add_page_routes(app, hub)  # the page, static files, /healthz
    add_consent_route(app, arena)  # a session starts here, throttled per address
    add_handoff_routes(app, hub)  # which recruitment code a person has earned

    sockets: Counter[str] = Counter()  # open sockets per participant, in this process

    async def play(ws: WebSocket) -> None:
        await serve_socket(ws, hub, setup, frame_log, sockets)

    app.add_middleware(SocketRoute, path="/ws", serve=play)

    admin = add_admin_guard(app, admin_password)
    if judging is not None:  # ITT human judging of a study folder under /judge
        gate = NewRecordGate("judges", arena_limits(arena))
        app.include_router(judging_router(judging, admin, gate))
    if collecting is not None:  # ITT human responses to a stimuli file under /respond
        gate = NewRecordGate("respondents", arena_limits(arena))
        app.include_router(collect_router(collecting, admin, gate))
    csrf = secrets.token_urlsafe(24)  # in every admin form; a cross-site post cannot know it
    add_admin_routes(
        app,
        hub,
        admin,
        startup=setup,
        store=store,
        csrf=csrf,
        studies_dir=studies_dir,
        admin_keys=admin_keys,
    )
    add_export_routes(app, arena, admin)
    return app


def _lifespan(hub: Hub) -> Callable[[FastAPI], contextlib.AbstractAsyncContextManager[None]]:
    """The app's lifetime: the hub started and stopped, and ticked meanwhile."""

    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        async def ticker() -> None:
            while True:
                await asyncio.sleep(TICK_S)
                await hub.tick()

        await hub.start()
        task = asyncio.create_task(ticker())
        try:
            yield
        finally:
            task.cancel()
            await hub.stop()

    return lifespan
