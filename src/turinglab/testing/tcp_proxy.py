"""A TCP proxy that can fail on purpose, for fault tests against real services.

It forwards bytes both ways between its clients and one target (PostgreSQL, say) and can:

* `refuse()`: stop listening, so new connections are refused (ECONNREFUSED) while the
  connections already made go on; `accept()` listens again on the same port;
* `stall()`: stop forwarding on every connection, both ways, without closing anything (a
  network that black-holes packets); `flow()` forwards again what was held;
* `cut()`: close every connection now (a network that resets).

All of it runs on the caller's event loop: `await proxy.start()`, then the methods above.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket


class TcpProxy:
    def __init__(self, target_host: str, target_port: int, host: str = "127.0.0.1") -> None:
        self.target = (target_host, target_port)
        self.host = host
        self.port = 0
        self.accepted = 0  # connections accepted so far
        self._server: asyncio.Server | None = None
        self._flowing = asyncio.Event()
        self._flowing.set()
        self._links: set[asyncio.StreamWriter] = set()
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        if self.port == 0:
            with socket.socket() as s:  # a port of our own, kept across refuse/accept
                s.bind((self.host, 0))
                self.port = int(s.getsockname()[1])
        self._server = await asyncio.start_server(
            self._link, self.host, self.port, reuse_address=True
        )

    async def stop(self) -> None:
        await self.refuse()
        self.cut()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    # ---- faults ------------------------------------------------------------------------------

    async def refuse(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None

    async def accept(self) -> None:
        if self._server is None:
            await self.start()

    def stall(self) -> None:
        self._flowing.clear()

    def flow(self) -> None:
        self._flowing.set()

    def cut(self) -> None:
        for writer in list(self._links):
            writer.transport.abort()
        self._links.clear()

    @property
    def links(self) -> int:
        """Connection ends open now (two per proxied connection)."""
        return len(self._links)

    # ---- forwarding --------------------------------------------------------------------------

    async def _link(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        self.accepted += 1
        try:
            target_r, target_w = await asyncio.open_connection(*self.target)
        except OSError:
            client_w.transport.abort()
            return
        self._links |= {client_w, target_w}
        pumps = [
            asyncio.ensure_future(self._pump(client_r, target_w)),
            asyncio.ensure_future(self._pump(target_r, client_w)),
        ]
        for pump in pumps:
            self._tasks.add(pump)
            pump.add_done_callback(self._tasks.discard)
        await asyncio.wait(pumps, return_when=asyncio.FIRST_COMPLETED)
        for pump in pumps:
            pump.cancel()
        for writer in (client_w, target_w):
            self._links.discard(writer)
            writer.transport.abort()

    async def _pump(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(OSError, asyncio.IncompleteReadError):
            while True:
                data = await reader.read(65536)
                if not data:
                    return
                await self._flowing.wait()  # a stall holds what arrived, on every connection
                writer.write(data)
                await writer.drain()
