"""The arena's websocket: one per tab, the only way live state reaches a page.

A person's frames go in through the arena's `Hub` (hub_port.py: this process's `Arena`, or the
cluster with several processes); every frame the server sends goes out through one queue per
socket, written in order.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import WebSocket
from starlette.types import ASGIApp, Receive, Scope, Send
from starlette.websockets import WebSocketDisconnect

from turinglab.arena.core import frames as F
from turinglab.arena.core.hub_port import Hub, HubUnreachable
from turinglab.arena.core.limits import FrameLimiter
from turinglab.arena.core.modes import ArenaSetup
from turinglab.arena.core.participants import Participant
from turinglab.arena.core.person_view import HANG_UP, RELAY_DELAYED, InputRejected
from turinglab.arena.core.resume import ResumePoint
from turinglab.arena.http.session_cookie import COOKIE

log = logging.getLogger(__name__)

FrameLog = Callable[[str, dict[str, Any]], None]  # (participant id, frame) for every frame sent


class SocketRoute:
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


def same_origin(ws: WebSocket) -> bool:
    # Browsers send Origin on websockets; refusing others stops cross-site socket hijacking.
    origin = ws.headers.get("origin")
    if origin is None:
        return True  # not a browser (benchmarks, tests); the cookie still has to be right
    return origin.split("://", 1)[-1] == ws.headers.get("host")


async def serve_socket(
    ws: WebSocket,
    hub: Hub,
    setup: ArenaSetup,
    frame_log: FrameLog | None,
    sockets: Counter[str] | None = None,
) -> None:
    arena = hub.arena
    await ws.accept()
    person = arena.sessions.get(ws.cookies.get(COOKIE))
    if person is None or not same_origin(ws):
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
        await play_socket(ws, person, hub, setup, frame_log)
    finally:
        sockets[person.id] -= 1
        if sockets[person.id] <= 0:
            del sockets[person.id]


async def play_socket(
    ws: WebSocket,
    person: Participant,
    hub: Hub,
    setup: ArenaSetup,
    frame_log: FrameLog | None,
) -> None:
    arena = hub.arena
    # Sessions start only at POST /consent: a valid token (on any process) means consent.
    person.consented = True
    queue: asyncio.Queue[F.ServerFrame | dict[str, Any] | None] = asyncio.Queue()

    def outlet(frame: F.ServerFrame | dict[str, Any]) -> None:
        # A frame from another process (cluster.py) arrives already dumped.
        queue.put_nowait(frame)

    async def writer() -> None:
        while (data := await queue.get()) is not None:
            if data is HANG_UP:  # its page reconnects (to another process: ClusterHeartbeat)
                with contextlib.suppress(Exception):
                    await ws.close(code=1012)
                return
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
        await hub.connect(person, outlet, resume)
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
                else:
                    await hub.handle(person, frame)
            except F.BadFrame as err:
                outlet(F.Error(code="bad-frame", message=str(err)))
            except InputRejected as err:
                outlet(F.Error(code=err.code, message=str(err), ref=getattr(frame, "id", None)))
            except HubUnreachable as err:  # Redis restarting: say so, keep the socket
                log.warning("redis: an input of %s not handled (%s)", person.id, err)
                # No `ref`: an input with an id stays unanswered, so the page sends it again.
                retry = "The arena is reconnecting; that was not taken — please try again."
                outlet(F.Error(code="retry", message=retry))
    except WebSocketDisconnect:
        pass
    except HubUnreachable as err:  # Redis restarting as they connected: the page comes back
        log.warning("redis: %s not connected (%s); their page reconnects", person.id, err)
        # Told why, then closed ("service restart": reconnect): a page that tries again and
        # again while no process reaches Redis is not left without a word (sim `redis-cut`).
        outlet(F.Error(code="relay-delayed", message=RELAY_DELAYED))
        outlet(HANG_UP)
    finally:
        await hub.disconnect(person, outlet)
        queue.put_nowait(None)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(sending, 2.0)
        sending.cancel()
        if limiter.exhausted:
            with contextlib.suppress(Exception):
                await ws.close(code=1008)
