"""The arena's web app: the page, the websocket, the admin pages.

`create_app` is a factory so tests and `serve` build the same thing, and a short composition:
each group of routes lives in its own module and is added here. Pages are static files (no
CDN, no third-party request: a strict Content-Security-Policy says so to the browser); all
live state goes over one websocket per tab, and the server is the only authority on it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections import Counter
from collections.abc import AsyncIterator, Callable
from pathlib import Path

from fastapi import FastAPI, WebSocket
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from turinglab.arena.admin_keys import KeyAllowlist
from turinglab.arena.admin_routes import add_admin_guard, add_admin_routes
from turinglab.arena.cluster import Cluster, SignedSessions
from turinglab.arena.collect import collect_router
from turinglab.arena.collect_store import CollectStore
from turinglab.arena.consent import add_consent_route, arena_limits
from turinglab.arena.export_routes import add_export_routes
from turinglab.arena.handoff import add_handoff_routes
from turinglab.arena.hub import Arena, FinishedHook
from turinglab.arena.judging import judging_router
from turinglab.arena.judging_store import JudgingStore
from turinglab.arena.modes import ArenaSetup
from turinglab.arena.new_records import NewRecordGate
from turinglab.arena.page_routes import add_page_routes
from turinglab.arena.player_socket import FrameLog, SocketRoute, serve_socket
from turinglab.arena.security_headers import SecurityHeaders
from turinglab.arena.store_bridge import ArenaStore
from turinglab.arena.strong_image_routes import add_image_route
from turinglab.games.clock import REAL_CLOCK, Clock

log = logging.getLogger(__name__)

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
    arena = Arena(setup, clock, on_finished, store)
    cluster: Cluster | None = None
    if redis_url is not None:
        if not secret:
            raise ValueError("a multi-process arena needs a shared session secret")
        arena.sessions = SignedSessions(secret)
        name = namespace or (store.run_id if store is not None else "arena")
        cluster = Cluster(arena, redis_url, name, store.worker if store is not None else "arena")

    # No OpenAPI schema or docs pages: nothing to hand a prober the admin routes.
    app = FastAPI(
        title="Turing Lab arena",
        lifespan=_lifespan(arena, cluster),
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
    )
    app.state.arena = arena
    add_image_route(app)  # Strong Turing Test: images are uploaded, then named in a message
    app.add_middleware(SecurityHeaders)
    add_page_routes(app, arena, store, cluster)  # the page, static files, /healthz
    add_consent_route(app, arena)  # a session starts here, throttled per address
    leave = None if cluster is None else cluster.leave_queues  # the shared queues, too
    add_handoff_routes(app, arena, leave)  # which recruitment code a person has earned

    sockets: Counter[str] = Counter()  # open sockets per participant, in this process

    async def play(ws: WebSocket) -> None:
        await serve_socket(ws, arena, setup, frame_log, cluster, sockets)

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
        arena,
        admin,
        startup=setup,
        store=store,
        cluster=cluster,
        csrf=csrf,
        studies_dir=studies_dir,
        admin_keys=admin_keys,
    )
    add_export_routes(app, arena, admin)
    return app


def _lifespan(
    arena: Arena, cluster: Cluster | None
) -> Callable[[FastAPI], contextlib.AbstractAsyncContextManager[None]]:
    """The app's lifetime: the cluster started and stopped, and the arena ticked meanwhile."""

    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        async def ticker() -> None:
            while True:
                await asyncio.sleep(TICK_S)
                arena.tick()
                if cluster is not None:
                    try:
                        await cluster.tick()
                    except (RedisConnectionError, RedisTimeoutError) as err:
                        # Redis restarting or paused: expected, and the next tick tries again.
                        log.warning("cluster tick failed: Redis unreachable (%s)", err)
                    except Exception:
                        log.exception("cluster tick failed")

        if cluster is not None:
            await cluster.start()
        task = asyncio.create_task(ticker())
        try:
            yield
        finally:
            task.cancel()
            if cluster is not None:
                await cluster.stop()

    return lifespan
