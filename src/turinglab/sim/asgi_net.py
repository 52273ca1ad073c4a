"""The network between simulated pages and arena processes: each process's real ASGI app (its
routes, cookies, websocket handler) is called in memory, and frames cross after a seeded delay,
in order per direction, as over one TCP connection. The client side looks like aiohttp's
(`post`, `ws_connect`, a socket to iterate), so the benchmark's people (bench/arena_people.py,
bench/arena_link.py) play here unchanged.

A process that has crashed refuses websockets, and its open sockets end as a dead server's
do: the page sees them close (code 1006) and reconnects elsewhere. Plain HTTP (the consent that
starts a session) goes to a live process, as through the load balancer a page is loaded from.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import urlencode, urlsplit

import aiohttp

Run = Callable[[str, Any], "asyncio.Task[Any]"]  # (process, coroutine) -> its task there


class Wire:
    """One direction of one connection: delivered in order, each after a seeded delay."""

    def __init__(self, rng: random.Random, latency_s: tuple[float, float]) -> None:
        self.rng = rng
        self.latency_s = latency_s
        self._last = 0.0

    def when(self, now: float) -> float:
        low, high = self.latency_s
        # Strictly later than the last: timers due at one instant run in no set order.
        self._last = max(self._last + 1e-6, now + self.rng.uniform(low, high))
        return self._last - now


@dataclass
class Msg:
    """An aiohttp-like websocket message."""

    type: aiohttp.WSMsgType
    data: Any = None


class SimSocket:
    """The page's end of a websocket to one process's app."""

    def __init__(self, net: Network, process: str, rng: random.Random) -> None:
        self.net = net
        self.process = process
        self.up = Wire(rng, net.latency_s)  # page -> server
        self.down = Wire(rng, net.latency_s)  # server -> page
        self.to_server: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.to_page: asyncio.Queue[Msg] = asyncio.Queue()
        self.accepted: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self.closed = False
        self.close_code: int | None = None
        self.server_task: asyncio.Task[Any] | None = None

    # ---- the page's side (aiohttp's ClientWebSocketResponse, as bench/arena_link.py uses) --

    async def send_str(self, data: str) -> None:
        if self.closed:
            raise ConnectionResetError("socket closed")
        self._later(self.up, self.to_server.put_nowait, {"type": "websocket.receive", "text": data})

    async def close(self) -> None:
        if not self.closed:
            self._ended(1000)
            self._later(
                self.up, self.to_server.put_nowait, {"type": "websocket.disconnect", "code": 1000}
            )

    def __aiter__(self) -> SimSocket:
        return self

    async def __anext__(self) -> Msg:
        msg = await self.to_page.get()
        if msg.type == aiohttp.WSMsgType.CLOSED:
            raise StopAsyncIteration
        return msg

    # ---- the server's side (ASGI) ------------------------------------------------------------

    async def receive(self) -> dict[str, Any]:
        return await self.to_server.get()

    async def send(self, message: dict[str, Any]) -> None:
        kind = message["type"]
        if kind == "websocket.accept":
            self._later(self.down, self._accepted, True)
        elif kind == "websocket.send":
            text = message.get("text") or (message.get("bytes") or b"").decode()
            self._later(self.down, self._frame, text)
        elif kind == "websocket.close":
            code = int(message.get("code", 1000))
            self._later(self.down, self._server_closed, code)

    def _accepted(self, ok: bool) -> None:
        if not self.accepted.done():
            self.accepted.set_result(ok)

    def _frame(self, text: str) -> None:
        if not self.closed:
            self.to_page.put_nowait(Msg(aiohttp.WSMsgType.TEXT, text))

    def _server_closed(self, code: int) -> None:
        self._accepted(False)
        if not self.closed:
            self._ended(code)
            # The page's side of the closing handshake: the server's `receive` ends. No
            # delay drawn (a draw would shift every later one of the seed's schedule).
            message = {"type": "websocket.disconnect", "code": code}
            asyncio.get_running_loop().call_soon(self.to_server.put_nowait, message)

    def _ended(self, code: int) -> None:
        self.closed = True
        self.close_code = code
        self.to_page.put_nowait(Msg(aiohttp.WSMsgType.CLOSED))

    def cut(self) -> None:
        """Its server died: the page sees the socket end; the server's end is gone with it."""
        self._accepted(False)
        if not self.closed:
            self._ended(1006)

    def _later(self, wire: Wire, call: Callable[[Any], None], arg: Any) -> None:
        loop = asyncio.get_running_loop()
        # On the wire it belongs to nobody: it arrives even if its sender is paused now.
        loop.call_later(wire.when(loop.time()), call, arg, context=contextvars.Context())


class _Response:
    def __init__(self, status: int, headers: list[tuple[bytes, bytes]], body: bytes) -> None:
        self.status = status
        self.body = body
        self.cookies: SimpleCookie = SimpleCookie()
        for name, value in headers:
            if name.lower() == b"set-cookie":
                self.cookies.load(value.decode())

    def raise_for_status(self) -> None:
        if self.status >= 400:
            raise aiohttp.ClientConnectionError(f"HTTP {self.status}: {self.body[:200]!r}")

    async def __aenter__(self) -> _Response:
        return self

    async def __aexit__(self, *_: object) -> None:
        return None


class Network:
    """Pages to processes: `apps` by host ("p0", "p1", …), `run` starts a task in a process."""

    def __init__(self, rng: random.Random, run: Run, latency_s: tuple[float, float]) -> None:
        self.rng = rng
        self.run = run
        self.latency_s = latency_s
        self.apps: dict[str, Any] = {}
        self.dead: set[str] = set()
        self.sockets: dict[str, list[SimSocket]] = {}

    def crash(self, process: str) -> None:
        self.dead.add(process)
        for sock in self.sockets.pop(process, []):
            sock.cut()

    # ---- aiohttp's ClientSession, the parts the benchmark's people use -----------------------

    def post(self, url: str, json: Any = None) -> _Post:
        return _Post(self, url, json)

    async def ws_connect(
        self, url: str, params: dict[str, str] | None = None, headers: dict[str, str] | None = None
    ) -> SimSocket:
        parts = urlsplit(url)
        process = parts.hostname or ""
        await asyncio.sleep(Wire(self.rng, self.latency_s).when(0.0))  # the handshake's trip
        if process in self.dead or process not in self.apps:
            raise aiohttp.ClientConnectionError(f"{process}: connection refused")
        sock = SimSocket(self, process, self.rng)
        scope = {
            "type": "websocket",
            "asgi": {"version": "3.0"},
            "scheme": "ws",
            "path": parts.path,
            "raw_path": parts.path.encode(),
            "query_string": urlencode(params or {}).encode(),
            "headers": [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()]
            + [(b"host", process.encode())],
            "client": ("10.0.0.1", 50000),
            "server": (process, 80),
            "subprotocols": [],
        }
        sock.to_server.put_nowait({"type": "websocket.connect"})
        self.sockets.setdefault(process, []).append(sock)
        sock.server_task = self.run(process, self.apps[process](scope, sock.receive, sock.send))
        if not await sock.accepted:
            raise aiohttp.ClientConnectionError(f"{process}: websocket refused ({sock.close_code})")
        return sock

    async def request(self, method: str, url: str, body: Any) -> _Response:
        parts = urlsplit(url)
        process = parts.hostname or ""
        await asyncio.sleep(Wire(self.rng, self.latency_s).when(0.0))
        if process in self.dead:  # a page is loaded through the balancer: a live process
            process = next((p for p in self.apps if p not in self.dead), process)
        if process in self.dead or process not in self.apps:
            raise aiohttp.ClientConnectionError(f"{process}: connection refused")
        raw = b"" if body is None else json.dumps(body).encode()
        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": method,
            "scheme": "http",
            "path": parts.path,
            "raw_path": parts.path.encode(),
            "query_string": parts.query.encode(),
            "headers": [
                (b"host", process.encode()),
                (b"content-type", b"application/json"),
                (b"content-length", str(len(raw)).encode()),
            ],
            "client": ("10.0.0.1", 50000),
            "server": (process, 80),
        }
        sent: list[dict[str, Any]] = []
        given = False

        async def receive() -> dict[str, Any]:
            nonlocal given
            if given:
                await asyncio.Event().wait()  # a request body is read once; then nothing
            given = True
            return {"type": "http.request", "body": raw, "more_body": False}

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        await self.run(process, self.apps[process](scope, receive, send))
        start = next(m for m in sent if m["type"] == "http.response.start")
        body_out = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
        return _Response(start["status"], start.get("headers", []), body_out)


class _Post:
    def __init__(self, net: Network, url: str, body: Any) -> None:
        self.net, self.url, self.body = net, url, body
        self._response: _Response | None = None

    async def __aenter__(self) -> _Response:
        self._response = await self.net.request("POST", self.url, self.body)
        return self._response

    async def __aexit__(self, *_: object) -> None:
        return None
