"""One simulated person's page: a websocket to the arena that behaves as arena.js does.

* Inputs (a message, the end, a verdict) carry an id and are kept until the server answers
  them (a frame with `ref`, an `ack`, the message shown, the game moving on); they are sent
  again when 5 s overdue, after every reconnect and after a snapshot that does not show them
  (the server applies each once).
* Frames of a game stream carry `seq`: one already taken is dropped, a gap asks for the rest
  (`resume`), so the person sees each frame once and in order.
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
import random
import secrets
import sys
import time
import traceback
from dataclasses import dataclass
from typing import Any

import aiohttp

PING_S = 5.0
DEAD_S = 15.0
RESEND_S = 5.0
MAX_BACKOFF_S = 5.0  # as arena.js
NOTICES = ("game", "status", "error", "phase", "reveal", "resumed", "ack")  # tell a person why


class Gone(Exception):
    """The person closed their page for good (an abandon)."""


@dataclass
class _Input:
    frame: dict[str, Any]
    sent_at: float  # last (re)send, monotonic
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
        self.point: dict[str, Any] | None = None  # game, stream, seq: the last frame taken
        self.frames: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.unanswered: dict[str, _Input] = {}
        self.last_heard = time.monotonic()
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
        self.page_errors = 0  # frames (or reconnects) this page failed on: a bench bug
        self._retry = 0
        self._closed = False
        self._bouncing = False
        self._tasks: list[asyncio.Task[None]] = []

    # ---- the socket ---------------------------------------------------------------------------

    async def open(self) -> None:
        await self._connect()
        self._tasks = [
            asyncio.create_task(self._read()),
            asyncio.create_task(self._heartbeat()),
        ]

    async def _connect(self) -> None:
        url = self.bases[0].replace("http", "ws", 1) + "/ws"
        params = {k: str(v) for k, v in (self.point or {}).items()}
        async with asyncio.timeout(DEAD_S):  # as arena.js: a handshake that hangs is given up
            ws = await self.http.ws_connect(
                url, params=params, headers={"Cookie": f"turinglab_session={self.cookie}"}
            )
        # One socket at a time, as arena.js (`ws = socket`): a reconnect of the reader's and a
        # bounce's can overlap, and the reader must not go on reading a socket the page no
        # longer watches (the heartbeat closes `self.ws` only).
        old, self.ws = self.ws, ws
        if old is not None and not old.closed:
            asyncio.get_running_loop().create_task(old.close())
        self.last_heard = time.monotonic()
        self._retry = 0
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
                self._retry = min(self._retry + 1, 8)
                delay = min(MAX_BACKOFF_S, 0.25 * 2**self._retry * (0.5 + self.rng.random()))
                await asyncio.sleep(delay)
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
                self.last_heard = time.monotonic()
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
            ws = self.ws
            if ws is None or ws.closed or self.down_since is not None:
                continue
            if time.monotonic() - self.last_heard > DEAD_S:
                await ws.close()  # a hung server: the reader reconnects
                continue
            await self._send({"type": "ping"})
            await self._resend(overdue=True)

    # ---- frames in ----------------------------------------------------------------------------

    def _arrived(self, f: dict[str, Any]) -> None:
        now = time.time()
        if f["type"] in NOTICES and self.down_since is not None:
            self._owed(now - self.down_since, "reconnect")
            self.down_since = None
        if f.get("ref"):
            self._answered(f["ref"], now)
        if not self._in_order(f):
            return
        if f["type"] in ("phase", "reveal", "status"):  # the game moved on: answered
            for key, item in list(self.unanswered.items()):
                kind = item.frame["type"]
                moved = f["type"] == "status" or (kind == "verdict" and f["type"] == "reveal")
                if kind == "end" or moved:
                    self._answered(key, now)
        if f["type"] == "game":
            self._snapshot(f, now)
        elif f["type"] == "resumed":  # the rest has come: inputs still unanswered go again
            self.point = {k: f[k] for k in ("game", "stream", "seq")}
            asyncio.get_running_loop().create_task(self._resend(overdue=False))
        elif f["type"] == "status":
            self.point = None
        if f["type"] in ("error", "game"):  # a notice: whatever was owed has been explained
            for item in self.unanswered.values():
                self._owed(now - item.owed_since, f"{item.frame['type']} (until a notice)")
                item.owed_since = now
        self.frames.put_nowait(f)

    def _in_order(self, f: dict[str, Any]) -> bool:
        seq = f.get("seq")
        # `resumed` says where the stream is, it is not a frame of it (arena.js drops it as
        # already seen, so the page re-sends its inputs only at the next heartbeat)
        if seq is None or self.point is None or f["type"] in ("game", "resumed"):
            return True
        if seq <= self.point["seq"]:
            self.duplicate_frames += 1
            return False
        if seq > self.point["seq"] + 1:
            self.gaps += 1
            asyncio.get_running_loop().create_task(self._send({"type": "resume", **self.point}))
            return False
        self.point["seq"] = seq
        return True

    def _snapshot(self, f: dict[str, Any], now: float) -> None:
        if f.get("stream"):
            self.point = {"game": f["game"], "stream": f["stream"], "seq": f["seq"]}
        for key, item in list(self.unanswered.items()):
            sent = item.frame
            if sent["type"] == "message" and any(
                m["sender"] == "you" and m["channel"] == sent["channel"] and m["n"] >= sent["after"]
                for m in f["messages"]
            ):
                self._answered(key, now)
        # As arena.js: what the snapshot does not show goes again now (a takeover's new owner
        # sends one; the input may have gone to the process that died).
        if self.unanswered:
            asyncio.get_running_loop().create_task(self._resend(overdue=False))

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
            "heard_s_ago": round(time.monotonic() - self.last_heard, 1),
            "unanswered": [i.frame["type"] for i in self.unanswered.values()],
            "at": self.point,
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
        item = _Input({**frame, "id": key}, time.monotonic(), owed_since, owed_since)
        self.unanswered[key] = item
        await self._send(item.frame)
        return key

    async def _resend(self, *, overdue: bool) -> None:
        now = time.monotonic()
        for item in list(self.unanswered.values()):
            if overdue and now - item.sent_at < RESEND_S:
                continue
            item.sent_at = now
            if await self._send(item.frame):
                self.resent += 1
