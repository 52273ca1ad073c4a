"""One simulated person's page: a websocket to the arena that behaves as arena.js does, by
following the page's own protocol (arena/core/page_protocol.py, which passes the same conformance
vectors as static/protocol.js):

* Inputs (a message, the end, a verdict) carry an id and are kept until the server answers
  them (a frame with `ref`, an `ack`, the message shown, the game moving on); they are sent
  again when 5 s overdue, after every reconnect and after a snapshot that does not show them
  (the server applies each once).
* Frames of a game stream carry `stream` and `seq`: one already taken is dropped, a gap asks
  for the rest (`resume`); a takeover's new stream is taken from its snapshot on, as the page.
* A ping every 5 s; a server silent for 15 s is taken for gone. A lost socket is opened again
  after a jittered, growing backoff, on the next server when there are several (a process that
  died), naming the last frame seen (`/ws?game=…&stream=…&seq=…`).

Taken frames go to `frames` for the person's script (arena_people.py). The link also keeps
the figures only it can see: what each input waited for its answer, and how long the person
went without any frame while the arena owed them one (an input unanswered, or the socket
down) — the "Sending…" or "reconnecting…" a real person would stare at.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import random
import secrets
import sys
import time
import traceback
from dataclasses import dataclass
from typing import Any

import aiohttp

from turinglab.arena.core import page_protocol as P
from turinglab.arena.core.page_protocol import PageProtocol

log = logging.getLogger(__name__)

PING_S = P.PING_MS / 1000
OPEN_S = P.OPEN_MS / 1000
NOTICES = ("game", "status", "error", "phase", "reveal", "resumed", "ack")  # tell a person why


class Gone(Exception):
    """The person closed their page for good (an abandon)."""


def _ms() -> float:
    return time.monotonic() * 1000


@dataclass
class _Input:
    frame: dict[str, Any]
    owed_since: float  # epoch: since when its answer is owed (a notice explains a wait)
    due: float  # epoch: when the person first waited for it (notices or not)


class Link:
    def __init__(
        self, http: aiohttp.ClientSession, bases: list[str], cookie: str, rng: random.Random
    ) -> None:
        self.http = http
        self.bases = list(bases)
        self.cookie = cookie
        self.rng = rng
        self.ws: aiohttp.ClientWebSocketResponse | None = None
        self.page = PageProtocol()  # what the page takes, keeps and sends (as arena.js)
        self.frames: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.unanswered: dict[str, _Input] = {}  # the page's unanswered inputs, as waited for
        self.down_since: float | None = None  # epoch: the socket was lost, not yet back
        self._gone: aiohttp.ClientWebSocketResponse | None = None  # the socket given up on
        self.longest_owed_s = 0.0  # longest wait for an owed frame (input answer / reconnect)
        self.longest_owed_what = ""
        self.longest_owed_since = 0.0  # epoch s: when that wait began (to set beside the faults)
        # The longest any input took to be answered, notices or not: [s, what, since (epoch)]
        self.longest_input: list[Any] = [0.0, "", 0.0]
        self.reconnects = 0
        self.sockets = 0  # sockets opened so far: a new one means a reconnect happened
        self.resent = 0
        self.duplicate_frames = 0
        self.gaps = 0
        self.moved = 0  # snapshots of a new stream of the game (takeovers), taken
        self.page_errors = 0  # frames (or reconnects) this page failed on: a bench bug
        self._closed = False
        self._bouncing = False
        self.broke = asyncio.Event()  # the server was lost (not a drop of the person's own)
        self._tasks: list[asyncio.Task[None]] = []

    # ---- the socket ---------------------------------------------------------------------------

    async def open(self) -> None:
        try:
            await self._connect()
        except (TimeoutError, aiohttp.ClientError, OSError):  # that process died: as arena.js,
            self._lost()  # back off and try the next one
            self.bases = [*self.bases[1:], self.bases[0]]
            await self._reopen()
        self._tasks = [
            asyncio.create_task(self._read()),
            asyncio.create_task(self._heartbeat()),
        ]

    async def _connect(self) -> None:
        url = self.bases[0].replace("http", "ws", 1) + "/ws"
        params = {k: str(v) for k, v in (self.page.query() or {}).items()}
        self.page.connecting(_ms())
        async with asyncio.timeout(OPEN_S):  # as arena.js: a handshake that hangs is given up
            ws = await self.http.ws_connect(
                url, params=params, headers={"Cookie": f"turinglab_session={self.cookie}"}
            )
        # One socket at a time, as arena.js (`ws = socket`): a reconnect of the reader's and a
        # bounce's can overlap, and the reader must not go on reading a socket the page no
        # longer watches (the heartbeat closes `self.ws` only).
        old, self.ws = self.ws, ws
        if old is not None and not old.closed:
            asyncio.get_running_loop().create_task(old.close())
        self.page.opened(_ms())
        self.sockets += 1

    async def close(self) -> None:
        """Close the page for good."""
        self._closed = True
        for task in self._tasks:
            task.cancel()
        if self.ws is not None:
            with contextlib.suppress(Exception):
                await self.ws.close()

    async def bounce(self, down_s: float) -> None:
        """A network drop: the socket goes now, the page is back `down_s` later and resumes."""
        self.reconnects += 1
        self._bouncing = True
        self._lost()
        try:
            if self.ws is not None:
                await self.ws.close()  # the reader sees it end and waits for us
            await asyncio.sleep(down_s)
            await self._reopen(backoff=False)
        finally:
            self._bouncing = False

    def _lost(self) -> None:
        self._gone = self.ws  # nothing more is sent on it, even while it is closing
        if self.down_since is None:
            self.down_since = time.time()

    async def _reopen(self, *, backoff: bool = True) -> None:
        while not self._closed:
            if backoff:
                delay_ms = self.page.closed(None, self.rng.random())["delay_ms"]
                await asyncio.sleep(delay_ms / 1000)
            backoff = True
            try:
                await self._connect()
                return
            except (TimeoutError, aiohttp.ClientError, OSError):
                self.bases = [*self.bases[1:], self.bases[0]]  # that process may be gone

    async def _read(self) -> None:
        while not self._closed:
            ws = self.ws
            assert ws is not None
            async for msg in ws:
                if msg.type != aiohttp.WSMsgType.TEXT:
                    break
                try:
                    self._arrived(json.loads(msg.data))
                except Exception:  # as a browser: a frame the page fails on does not stop it
                    self._page_error(msg.data)
            if self._closed:
                return
            if self._bouncing:
                while self._bouncing:  # bounce() reopens it
                    await asyncio.sleep(0.05)
                continue
            self._lost()  # lost: back off and come back, on another process if it went
            self.broke.set()
            if ws.close_code == 4401:
                self.frames.put_nowait({"type": "error", "code": "no-session"})
                return
            self.bases = [*self.bases[1:], self.bases[0]]
            try:
                await self._reopen()
            except Exception:  # nor a failure while reconnecting: the next try goes on
                self._page_error("(reconnecting)")

    def _page_error(self, what: str) -> None:
        """A fault of this simulated page: counted, and the first one printed whole."""
        self.page_errors += 1
        if self.page_errors == 1:
            print(f"bench page fault on {what[:200]!r}:", file=sys.stderr)
            traceback.print_exc()

    async def _heartbeat(self) -> None:
        while not self._closed:
            await asyncio.sleep(PING_S)
            await self._beat()

    async def _beat(self) -> None:
        ws = self.ws
        if ws is None or ws.closed or self.down_since is not None:
            return
        beat = self.page.tick(_ms(), "open")
        if beat.dead:
            await ws.close()  # a hung server: the reader reconnects
            return
        if beat.late:  # the page's toast (a silent server): what was owed is explained
            self._noticed(time.time())
        await self._send_all(beat.sends)

    # ---- frames in ----------------------------------------------------------------------------

    def _arrived(self, f: dict[str, Any]) -> None:
        now = time.time()
        if f["type"] in NOTICES and self.down_since is not None:
            self._owed(now - self.down_since, "reconnect")
            self.down_since = None
        taken = self.page.frame(f, _ms())
        for key in taken.answered:
            self._answered(key, now)
        if taken.sends:
            asyncio.get_running_loop().create_task(self._send_all(taken.sends))
        if not taken.take:
            asked = any(s["type"] == "resume" for s in taken.sends)
            self.gaps += asked
            self.duplicate_frames += not asked
            return
        if taken.notice == "moved":
            self.moved += 1
        if f["type"] in ("error", "game"):  # a notice: whatever was owed has been explained
            self._noticed(now)
        if log.isEnabledFor(logging.DEBUG):  # each frame a page takes (a sim's verbose trace)
            log.debug("%s takes %s", self.cookie.partition(".")[0], str(f)[:160])
        self.frames.put_nowait(f)

    def _noticed(self, now: float) -> None:
        for item in self.unanswered.values():
            self._owed(now - item.owed_since, f"{item.frame['type']} (until a notice)")
            item.owed_since = now

    def _answered(self, key: str, now: float) -> None:
        item = self.unanswered.pop(key, None)
        if item is not None:
            self._owed(now - item.owed_since, item.frame["type"])
            self._took(item, now, item.frame["type"])

    def _took(self, item: _Input, now: float, what: str) -> None:
        if now - item.due > self.longest_input[0]:
            self.longest_input = [now - item.due, what, item.due]

    def _owed(self, waited: float, what: str) -> None:
        if waited > self.longest_owed_s:
            self.longest_owed_s, self.longest_owed_what = waited, what
            self.longest_owed_since = time.time() - waited

    def state(self, now: float) -> dict[str, Any]:
        """Where the link stands (for a person who waited long: what their page was doing)."""
        ws = self.ws
        return {
            "sockets_opened": self.sockets,
            "bounces": self.reconnects,
            "down_for_s": None if self.down_since is None else round(now - self.down_since, 1),
            "socket": "none" if ws is None else "closed" if ws.closed else "open",
            "given_up": ws is not None and ws is self._gone,
            "heard_s_ago": round((_ms() - self.page.last_heard) / 1000, 1),
            "unanswered": [i.frame["type"] for i in self.unanswered.values()],
            "at": self.page.query(),
            "server": self.bases[0],
        }

    def still_owed(self) -> None:
        """At the end: inputs never answered count as waiting until now."""
        now = time.time()
        for item in self.unanswered.values():
            self._owed(now - item.owed_since, f"{item.frame['type']} (never answered)")
            self._took(item, now, f"{item.frame['type']} (never answered)")

    # ---- frames out ---------------------------------------------------------------------------

    async def _send(self, frame: dict[str, Any]) -> bool:
        ws = self.ws
        # As arena.js: sent once the new socket is open, also before its first frame (a
        # process connecting a storm of reconnects can take seconds); dropped then, a join
        # was never sent again, as the lobby that came next was not on a newer socket.
        if ws is None or ws.closed or ws is self._gone:
            return False
        try:
            await ws.send_str(json.dumps(frame))
            return True
        except (aiohttp.ClientError, ConnectionError, RuntimeError):
            return False  # going: the reader reconnects and inputs are sent again

    async def send(self, frame: dict[str, Any]) -> None:
        """A frame the page sends without keeping it (typing, join, leave)."""
        await self._send(frame)

    async def send_input(self, frame: dict[str, Any], owed_since: float) -> str:
        """An input kept until answered; `owed_since` is when it was due (epoch)."""
        key = secrets.token_hex(6)
        item = _Input({**frame, "id": key}, owed_since, owed_since)
        self.unanswered[key] = item
        await self._send_all(self.page.input(item.frame, _ms(), self._open()), resent=False)
        return key

    def _open(self) -> bool:
        ws = self.ws
        return ws is not None and not ws.closed and ws is not self._gone

    async def _send_all(self, frames: list[dict[str, Any]], *, resent: bool = True) -> None:
        """Frames the protocol says to send; inputs among them sent again count as re-sent."""
        for frame in frames:
            if await self._send(frame) and resent and "id" in frame:
                self.resent += 1
