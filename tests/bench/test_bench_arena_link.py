"""The benchmark's page (bench/arena_link.py) sends as arena.js does across a reconnect.

A process that dies drops its sockets; the page opens one on the next process, whose connect
can take seconds under a reconnect storm before its first frame. arena.js sends whatever the
person does once the socket is open; the benchmark's link dropped it until that first frame,
and since the lobby shown next came on a socket already counted, the person never sent their
join again: left waiting (issue 15's fault runs).
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Awaitable, Callable

import aiohttp
import pytest
from aiohttp import web

from turinglab.bench import arena_link
from turinglab.bench.arena_link import Link

IDLE = {"type": "status", "state": "idle", "modes": []}
Handler = Callable[[web.Request], Awaitable[web.WebSocketResponse]]


async def _serve(handler: Handler) -> tuple[web.AppRunner, str]:
    """A websocket server on a free port: its runner (to clean up) and base URL."""
    app = web.Application()
    app.router.add_get("/ws", handler)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    return runner, f"http://127.0.0.1:{port}"


def _sending(*frames: dict[str, object]) -> Handler:
    """A server that sends `frames` on each socket, then reads until it closes."""

    async def handler(request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        for frame in frames:
            await ws.send_json(frame)
        async for _ in ws:
            pass
        return ws

    return handler


async def test_a_join_pressed_before_a_new_sockets_first_frame_is_sent() -> None:
    die, speak = asyncio.Event(), asyncio.Event()
    received: list[dict[str, object]] = []
    sockets = 0

    async def handler(request: web.Request) -> web.WebSocketResponse:
        nonlocal sockets
        sockets += 1
        first = sockets == 1
        ws = web.WebSocketResponse()
        await ws.prepare(request)  # the handshake is done: the page counts a new socket
        if first:  # the process that dies
            await ws.send_json(IDLE)
            await die.wait()
            await ws.close()
            return ws
        await speak.wait()  # a busy process still connecting the person
        await ws.send_json(IDLE)
        async for msg in ws:
            received.append(json.loads(msg.data))
        return ws

    runner, base = await _serve(handler)
    async with aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar()) as http:
        link = Link(http, [base], "p-1.sig", random.Random(0))
        try:
            await link.open()
            assert (await asyncio.wait_for(link.frames.get(), 5))["state"] == "idle"
            die.set()
            for _ in range(200):  # reconnected (backoff under 1 s), nothing heard yet
                if link.sockets == 2:
                    break
                await asyncio.sleep(0.02)
            assert link.sockets == 2 and link.frames.empty()
            join = {"type": "join", "mode": "three-party", "consent": True}
            await link.send(join)  # pressed now: the page would send it
            speak.set()
            assert (await asyncio.wait_for(link.frames.get(), 5))["state"] == "idle"
            for _ in range(100):
                if received:
                    break
                await asyncio.sleep(0.02)
            assert received == [join]
        finally:
            await link.close()
            await runner.cleanup()


async def test_a_handshake_that_hangs_is_given_up_for_the_next_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A process that accepts the connection but never answers the upgrade (wedged): the page
    gives it up after OPEN_S, as arena.js does, and opens one on the next process."""
    monkeypatch.setattr(arena_link, "OPEN_S", 0.3)
    stuck = asyncio.Event()

    async def wedged(_r: asyncio.StreamReader, _w: asyncio.StreamWriter) -> None:
        await stuck.wait()

    hung = await asyncio.start_server(wedged, "127.0.0.1", 0)
    hung_port = hung.sockets[0].getsockname()[1]

    runner, good = await _serve(_sending(IDLE))
    async with aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar()) as http:
        link = Link(http, [f"http://127.0.0.1:{hung_port}", good], "p-1.sig", random.Random(0))
        try:
            await asyncio.wait_for(link._reopen(backoff=False), 10)
            assert link.sockets == 1 and link.bases[0] == good
        finally:
            stuck.set()
            await link.close()
            await runner.cleanup()
            hung.close()


async def test_a_frame_the_page_fails_on_does_not_stop_it_reading() -> None:
    """A fault of the simulated page on one frame (a bug in the benchmark) is counted and
    printed, and the page goes on reading, as a browser does: its reader task used to die,
    leaving the person deaf on a socket nobody watched (issue 15's "heard nothing" waits)."""

    runner, base = await _serve(_sending({"type": "resumed", "game": "g-1"}, IDLE))  # no seq
    async with aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar()) as http:
        link = Link(http, [base], "p-1.sig", random.Random(0))
        try:
            await link.open()
            frame = await asyncio.wait_for(link.frames.get(), 10)
            assert frame["type"] == "status" and link.page_errors == 1
        finally:
            await link.close()
            await runner.cleanup()
