"""The arena's web app: the page, the websocket, the admin pages.

`create_app` is a factory so tests and `serve` build the same thing. Pages are static files
(no CDN, no third-party request: a strict Content-Security-Policy says so to the browser); all
live state goes over one websocket per tab, and the server is the only authority on it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import secrets
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Annotated, Any

from fastapi import Depends, FastAPI, HTTPException, Request, Response, WebSocket, status
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse
from fastapi.security import HTTPBasic, HTTPBasicCredentials
from fastapi.staticfiles import StaticFiles
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError
from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from starlette.websockets import WebSocketDisconnect

from turinglab.arena import frames as F
from turinglab.arena.admin import StudyForm, admin_page, transcript_page
from turinglab.arena.admin_end import end_by_admin
from turinglab.arena.admin_guard import (
    DEVICE_COOKIE,
    DEVICE_MAX_AGE_S,
    GuessThrottle,
    device_token,
    known_device,
)
from turinglab.arena.admin_keys import KeyAllowlist
from turinglab.arena.admin_people import study_view
from turinglab.arena.cluster import Cluster, SignedSessions, health_checks
from turinglab.arena.collect import collect_router
from turinglab.arena.collect_store import CollectStore
from turinglab.arena.consent import add_consent_route, arena_limits
from turinglab.arena.handoff import add_handoff_routes
from turinglab.arena.hub import Arena, FinishedHook
from turinglab.arena.judging import judging_router
from turinglab.arena.judging_store import JudgingStore
from turinglab.arena.limits import FrameLimiter
from turinglab.arena.live import InputRejected
from turinglab.arena.live_itt_mode import live_itt_judgements
from turinglab.arena.metrics import CONTENT_TYPE, said_if_slow
from turinglab.arena.metrics_page import render_metrics
from turinglab.arena.modes import ArenaSetup
from turinglab.arena.new_records import NewRecordGate
from turinglab.arena.resume import ResumePoint
from turinglab.arena.sessions import COOKIE, Participant
from turinglab.arena.store_bridge import ArenaStore
from turinglab.arena.strong_mode import add_image_route
from turinglab.arena.study_admin import AdminFormError, open_study, read_form
from turinglab.arena.study_page import PageCache
from turinglab.arena.witness_preflight import opened_study_problem
from turinglab.games.clock import REAL_CLOCK, Clock
from turinglab.itt.judgements import judgements_csv
from turinglab.store.media import MediaError
from turinglab.study_export import (
    flag_exclusions,
    interrogator_facts,
    study_jsonl,
    withdrawn_ids,
    without_withdrawn,
)

log = logging.getLogger(__name__)

STATIC = Path(__file__).parent / "static"
TICK_S = 0.5
FrameLog = Callable[[str, dict[str, Any]], None]  # (participant id, frame) for every frame sent
BASIC = HTTPBasic(realm="Turing Lab admin")
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
)


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

    # No OpenAPI schema or docs pages: nothing to hand a prober the admin routes.
    app = FastAPI(
        title="Turing Lab arena",
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
    )
    app.state.arena = arena
    add_image_route(app)  # Strong Turing Test: images are uploaded, then named in a message

    app.add_middleware(_SecurityHeaders)

    # Rendered once per study: every person loads it, and a file response costs several
    # thread hops each.
    pages = PageCache((STATIC / "index.html").read_text(encoding="utf-8"))

    @app.get("/")
    async def index(request: Request) -> Response:
        # No session yet: the page shows the consent form; POST /consent starts one.
        session = arena.sessions.get(request.cookies.get(COOKIE)) is not None
        page = pages.page(arena.setup, session)
        return HTMLResponse(page, headers={"Cache-Control": "no-store"})

    add_consent_route(app, arena)  # a session starts here, throttled per address
    leave = None if cluster is None else cluster.leave_queues  # the shared queues, too
    add_handoff_routes(app, arena, leave)  # which recruitment code a person has earned
    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    @app.get("/favicon.ico")
    async def favicon() -> Response:
        """Pages link /static/favicon.svg; anything else a browser shows asks here."""
        return RedirectResponse("/static/favicon.svg", status.HTTP_308_PERMANENT_REDIRECT)

    @app.get("/healthz")
    async def healthz(response: Response) -> dict[str, Any]:
        """200 when every service this process needs answers; 503 (with which one) if not.
        Public, so it says nothing of the study: counts of games and people are in /admin."""
        checks = await health_checks(store, cluster)
        ok = all(checks.values())
        if not ok:
            response.status_code = 503
        return {"ok": ok, "status": "ok" if ok else "degraded", **checks}

    sockets: Counter[str] = Counter()  # open sockets per participant, in this process

    async def play(ws: WebSocket) -> None:
        await _serve_socket(ws, arena, setup, frame_log, cluster, sockets)

    app.add_middleware(_SocketRoute, path="/ws", serve=play)

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

    guarded = [Depends(admin)]
    if judging is not None:  # ITT human judging of a study folder under /judge
        gate = NewRecordGate("judges", arena_limits(arena))
        app.include_router(judging_router(judging, admin, gate))
    if collecting is not None:  # ITT human responses to a stimuli file under /respond
        gate = NewRecordGate("respondents", arena_limits(arena))
        app.include_router(collect_router(collecting, admin, gate))

    csrf = secrets.token_urlsafe(24)  # in every admin form; a cross-site post cannot know it
    study = {"source": "the start-up study"}
    # One process may switch studies; several would disagree about which one is open. Without
    # a store the open study's games live only in memory, and a switch would mix two studies.
    fixed_study: str | None = None
    if cluster is not None:
        fixed_study = "Several processes serve this arena: restart them with another config."
    elif store is None:
        fixed_study = "Opening another study needs a store (turinglab serve --store)."

    async def live_games() -> list[dict[str, Any]]:
        # Several processes: every process's games, with their owner (cluster.py).
        return arena.live_games() if cluster is None else await cluster.live_games()

    async def admin_html(error: str | None = None, code: int = 200) -> HTMLResponse:
        form = StudyForm(csrf, study["source"], studies_dir, fixed_study, error)
        view = await study_view(arena, cluster)  # the whole study, from the store
        page = admin_page(arena, form, await live_games(), view)
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
            arena.open_study(setup)
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
        store = arena.store
        if store is not None:
            await store.flush()
            records = await asyncio.to_thread(store.records)
            return next((g for g in records if g["game"] == gid), None)
        return next((g for g in arena.finished if g["game"] == gid), None)

    async def owner_of(gid: str) -> str | None:
        """Which process plays live game `gid`: "here", another live process, or None."""
        game = arena.games.get(gid)
        if game is not None and game.result is None:
            return "here"
        if cluster is None:
            return None
        found = [g for g in await cluster.live_games() if g["game"] == gid]
        return str(found[0]["owner"]) if found and found[0].get("owner_alive") else None

    @app.get("/admin/game/{gid}", response_class=HTMLResponse, dependencies=guarded)
    async def admin_game(gid: str) -> HTMLResponse:
        """A game's live transcript (refreshing itself while the game runs)."""
        record = await game_record(gid)
        if record is None:
            raise HTTPException(status.HTTP_404_NOT_FOUND, "no such game")
        why = None if await owner_of(gid) else "This game is not being played (any more)."
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
        owner = await owner_of(gid)
        if owner is None:
            return HTMLResponse("This game is not being played.", status.HTTP_409_CONFLICT)
        if owner == "here":
            end_by_admin(arena, gid, reason)
        elif cluster is not None:  # its owner ends it (admin_end.py, over Redis)
            cluster.ask_to_end(owner, gid, reason)
        return RedirectResponse(f"/admin/game/{gid}", status.HTTP_303_SEE_OTHER)

    @app.get("/metrics", dependencies=guarded)
    async def metrics() -> Response:
        """Prometheus text format (arena/metrics.py), behind the admin password."""
        return Response(render_metrics(arena, cluster), media_type=CONTENT_TYPE)

    @app.get("/admin/live.json", dependencies=guarded)
    async def admin_live() -> JSONResponse:
        return JSONResponse(await live_games())

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

    @app.get("/admin/export.json", dependencies=guarded)
    async def admin_export() -> Response:
        store = arena.store  # the open study's
        if store is not None:
            await store.flush()
            data = await asyncio.to_thread(store.export)
        else:
            data = arena.export()
        body = json.dumps(flag_exclusions(data), indent=1, ensure_ascii=False)
        return Response(
            body,
            media_type="application/json",
            headers={"Content-Disposition": 'attachment; filename="arena-export.json"'},
        )

    async def finished_records() -> list[dict[str, Any]]:
        store = arena.store  # the open study's
        if store is None:
            return list(arena.finished)
        # Every process's games, and those of earlier runs of the server.
        await store.flush()
        games = await asyncio.to_thread(store.records)
        return [g for g in games if g["status"] is not None]

    async def study_people() -> dict[str, dict[str, Any]]:
        """participant id -> {survey, recruitment, study_end, withdrawn}: from the store (every
        process's people), else this process's sessions."""
        store = arena.store  # the open study's
        if store is not None:
            await store.flush()
            return await asyncio.to_thread(store.participants)
        return {p.id: arena.person_entry(p) for p in arena.sessions.by_id.values()}

    async def finished_games() -> list[dict[str, Any]]:
        """The study's finished games, none with a withdrawn participant."""
        gone = withdrawn_ids(await study_people())
        return without_withdrawn(await finished_records(), gone)

    @app.get("/admin/export/study.jsonl", dependencies=guarded)
    async def admin_study() -> Response:
        people = await study_people()
        finished = without_withdrawn(await finished_records(), withdrawn_ids(people))
        surveys = {pid: p.get("survey") for pid, p in people.items()}
        return Response(
            study_jsonl(finished, surveys, interrogator_facts(people)),
            media_type="application/x-ndjson",
            headers={"Content-Disposition": 'attachment; filename="arena-study.jsonl"'},
        )

    @app.get("/admin/export/live-itt.csv", dependencies=guarded)
    async def admin_live_itt() -> Response:
        """Live integrative-test sessions as the judgements file `turinglab itt score` reads."""
        rows = live_itt_judgements(await finished_games())
        return Response(
            judgements_csv(rows),
            media_type="text/csv; charset=utf-8",
            headers={"Content-Disposition": 'attachment; filename="live-itt-judgements.csv"'},
        )

    return app


class _SecurityHeaders:
    """Plain ASGI (not BaseHTTPMiddleware, which costs a task and a stream per request)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                headers["Content-Security-Policy"] = CSP
                headers["X-Content-Type-Options"] = "nosniff"
                headers["Referrer-Policy"] = "no-referrer"
            await send(message)

        await self.app(scope, receive, with_headers)


class _SocketRoute:
    """The arena's websocket, answered ahead of FastAPI's router: every person connects at
    once when a study opens, and the router's matching, dependency solving and exception
    wrappers (around each frame sent, too) would cost more than the socket's own work."""

    def __init__(
        self, app: ASGIApp, path: str, serve: Callable[[WebSocket], Awaitable[None]]
    ) -> None:
        self.app = app
        self.path = path
        self.serve = serve

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket" and scope["path"] == self.path:
            await self.serve(WebSocket(scope, receive, send))
        else:
            await self.app(scope, receive, send)


def _same_origin(ws: WebSocket) -> bool:
    # Browsers send Origin on websockets; refusing others stops cross-site socket hijacking.
    origin = ws.headers.get("origin")
    if origin is None:
        return True  # not a browser (benchmarks, tests); the cookie still has to be right
    return origin.split("://", 1)[-1] == ws.headers.get("host")


async def _serve_socket(
    ws: WebSocket,
    arena: Arena,
    setup: ArenaSetup,
    frame_log: FrameLog | None,
    cluster: Cluster | None = None,
    sockets: Counter[str] | None = None,
) -> None:
    await ws.accept()
    person = arena.sessions.get(ws.cookies.get(COOKIE))
    if person is None or not _same_origin(ws):
        err = F.Error(code="no-session", message="No session: reload the page to start one.")
        await ws.send_json(F.dump(err))
        await ws.close(code=4401)
        return
    sockets = Counter() if sockets is None else sockets
    # A few tabs each; not thousands of sockets for one session, each sent every frame.
    if sockets[person.id] >= arena.setup.settings.max_sockets_per_session:
        message = "This study is open in too many tabs: close one, and this one reconnects."
        await ws.send_json(F.dump(F.Error(code="too-many-tabs", message=message)))
        await ws.close(code=1008)
        return
    sockets[person.id] += 1
    try:
        await _play_socket(ws, person, arena, setup, frame_log, cluster)
    finally:
        sockets[person.id] -= 1
        if sockets[person.id] <= 0:
            del sockets[person.id]


async def _play_socket(
    ws: WebSocket,
    person: Participant,
    arena: Arena,
    setup: ArenaSetup,
    frame_log: FrameLog | None,
    cluster: Cluster | None,
) -> None:
    # Sessions start only at POST /consent: a valid token (on any process) means consent.
    person.consented = True
    queue: asyncio.Queue[F.ServerFrame | dict[str, Any] | None] = asyncio.Queue()

    def outlet(frame: F.ServerFrame | dict[str, Any]) -> None:
        # A frame from another process (cluster.py) arrives already dumped.
        queue.put_nowait(frame)

    async def writer() -> None:
        while (data := await queue.get()) is not None:
            if isinstance(data, dict):
                text = json.dumps(data, ensure_ascii=False)
            else:  # frames are immutable; pydantic writes JSON directly (no dict in between)
                text = data.model_dump_json()
            if frame_log is not None:
                frame_log(person.id, data if isinstance(data, dict) else F.dump(data))
            await ws.send_text(text)
            arena.metrics.frames_sent += 1

    sending = asyncio.create_task(writer())
    limiter = FrameLimiter.from_settings(setup.settings)
    arena.metrics.socket_connects += 1
    resume = ResumePoint.from_query(dict(ws.query_params))  # a page reconnecting (resume.py)
    try:  # a connect that fails (Redis, the store) is undone like a closed socket
        if cluster is not None:
            with said_if_slow(log, "connect-slow", participant=person.id):
                await cluster.connect(person, outlet, resume)
        else:
            arena.connect(person, outlet, resume)
        while True:
            message = await ws.receive()
            if message["type"] == "websocket.disconnect":
                break
            raw = message.get("text")
            if raw is None:
                raw = (message.get("bytes") or b"").decode("utf-8", "replace")
            why = limiter.check(len(raw.encode()), time.monotonic())
            if why is not None:
                outlet(F.Error(code="limit", message=why))
                if limiter.exhausted:
                    break
                continue
            frame = None
            try:
                frame = F.parse_client_frame(raw)
                if isinstance(frame, F.Ping):  # answered here: is this process alive?
                    outlet(F.Pong())
                elif cluster is not None:
                    with said_if_slow(log, "input-slow", participant=person.id, frame=frame.type):
                        await cluster.handle(person, frame)
                else:
                    arena.handle(person, frame)
            except F.BadFrame as err:
                outlet(F.Error(code="bad-frame", message=str(err)))
            except InputRejected as err:
                outlet(F.Error(code=err.code, message=str(err), ref=getattr(frame, "id", None)))
            except RedisError as err:  # Redis restarting: say so, keep the socket
                log.warning("redis: an input of %s not handled (%s)", person.id, err)
                # No `ref`: an input with an id stays unanswered, so the page sends it again.
                retry = "The arena is reconnecting; that was not taken — please try again."
                outlet(F.Error(code="retry", message=retry))
    except WebSocketDisconnect:
        pass
    except RedisError as err:  # Redis restarting as they connected: the page comes back
        log.warning("redis: %s not connected (%s); their page reconnects", person.id, err)
        with contextlib.suppress(Exception):
            await ws.close(code=1012)  # "service restart": reconnect
    finally:
        if cluster is not None:
            await cluster.disconnect(person, outlet)
        else:
            arena.disconnect(person, outlet)
        queue.put_nowait(None)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(sending, 2.0)
        sending.cancel()
        if limiter.exhausted:
            with contextlib.suppress(Exception):
                await ws.close(code=1008)
