"""The arena page's side of the websocket protocol, for Python clients: static/protocol.js,
rule for rule, so the tests' scripted people and the benchmark's people take, drop and send
exactly what the real page does.

Both pass the same vectors (tests/fixtures/page_protocol/*.json: frames and events in, what is
taken, where the page stands and what it sends out), the JS under Node and this module under
pytest; a client that accepted every snapshot, or dropped a takeover's, fails them. Times are
milliseconds, given by the caller; calls return the frames to send, never send them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

PING_MS = 5000  # a ping this often while open
DEAD_MS = 15000  # a server silent this long (not even a pong) is taken for gone
OPEN_MS = 8000  # a handshake unanswered this long is given up (protocol.js says why)
LATE_MS = 7000  # a server silent this long while an input is held: the page says so
RESEND_MS = 5000  # an input unanswered this long is sent again
ASK_MS = 3000  # a gap (or a frame of another stream) asks for the rest at most this often
MAX_BACKOFF_MS = 5000  # reconnect delays grow to this, inside a game's 12 s grace
MAX_RETRY = 8
SESSION_EXPIRED = 4401  # close code: the page reloads instead of reconnecting
# Views sent whole (the STT, the GTT, the ITT chat): frames of the page's stream like the chat
# games' messages; one marked `snapshot` stands for the stream so far, as a "game" frame does.
WHOLE_VIEWS = ("strong", "gtt", "itt-chat")

Frame = dict[str, Any]
Socket = Literal["open", "connecting", "closed"]


@dataclass
class Held:
    frame: Frame
    sent_at: float  # ms, the caller's clock


@dataclass
class Taken:
    """What the page does with one frame from the server."""

    take: bool  # shown (else dropped)
    sends: list[Frame] = field(default_factory=list)
    answered: list[str] = field(default_factory=list)  # input ids it answered
    notice: str | None = None  # "moved": a takeover's new stream of the same game


@dataclass
class Beat:
    dead: bool
    sends: list[Frame] = field(default_factory=list)
    late: bool = False  # an input held and the server silent past LATE_MS: say so (once)


def is_snapshot(f: Frame) -> bool:
    """A frame that replaces what the page has: a "game" one, or a whole view marked so."""
    return f["type"] == "game" or (f["type"] in WHOLE_VIEWS and f.get("snapshot") is True)


class PageProtocol:
    def __init__(self) -> None:
        self.at: Frame | None = None  # {game, stream, seq}: where the page is in its stream
        self.unanswered: dict[str, Held] = {}  # input id -> held, oldest first
        self.resend_when_caught_up = False  # a socket opened since the last catch-up
        self.asked_at: float | None = None  # when a resume was last asked for after a gap
        self.last_heard = 0.0
        self.told_late = False  # said the server is silent, since it was last heard
        self.retry = 0

    # ---- the socket --------------------------------------------------------------------------

    def query(self) -> Frame | None:
        """Where a (re)connecting socket resumes from (its /ws query), or None."""
        return None if self.at is None else dict(self.at)

    def connecting(self, now: float) -> None:
        self.last_heard = now  # a socket that does not open within OPEN_MS is given up

    def opened(self, now: float) -> None:
        self.retry = 0
        self.last_heard = now
        self.resend_when_caught_up = True

    def closed(self, code: int | None, rand: float) -> dict[str, Any]:
        """{"reload": True}, or {"delay_ms": …} before the next try; `rand` in [0, 1)."""
        if code == SESSION_EXPIRED:
            return {"reload": True}
        self.retry = min(self.retry + 1, MAX_RETRY)
        return {"delay_ms": min(MAX_BACKOFF_MS, 250 * 2**self.retry * (0.5 + rand))}

    def tick(self, now: float, socket: Socket) -> Beat:
        """Every PING_MS: a dead socket is closed by the caller and opened again; `late`: an
        input is held and the server has said nothing (not even a pong) past LATE_MS — a
        paused server; the page says so once, before it gives the socket up."""
        silent = now - self.last_heard > DEAD_MS
        if socket == "connecting":
            return Beat(now - self.last_heard > OPEN_MS)
        if socket != "open":
            return Beat(False)
        if silent:
            return Beat(True)
        late = not self.told_late and bool(self.unanswered) and now - self.last_heard > LATE_MS
        self.told_late = self.told_late or late
        return Beat(False, [{"type": "ping"}, *self._resend(now, overdue_only=True)], late)

    # ---- inputs out --------------------------------------------------------------------------

    def input(self, frame: Frame, now: float, open_: bool) -> list[Frame]:
        """An input the server applies once (`frame` carries its id): kept until answered."""
        self.unanswered[frame["id"]] = Held(frame, now)
        return [frame] if open_ else []

    def sending(self, channel: str) -> bool:
        return any(
            h.frame["type"] == "message" and h.frame.get("channel") == channel
            for h in self.unanswered.values()
        )

    def _resend(self, now: float, *, overdue_only: bool) -> list[Frame]:
        out = []
        for held in self.unanswered.values():
            if overdue_only and now - held.sent_at < RESEND_MS:
                continue
            held.sent_at = now
            out.append(held.frame)
        return out

    def _caught_up(self, now: float) -> list[Frame]:
        if not self.resend_when_caught_up:
            return []
        self.resend_when_caught_up = False
        return self._resend(now, overdue_only=False)

    # ---- frames in ---------------------------------------------------------------------------

    def frame(self, f: Frame, now: float) -> Taken:
        self.last_heard = now
        self.told_late = False
        out = Taken(False)

        def answer(key: str) -> None:
            if self.unanswered.pop(key, None) is not None:
                out.answered.append(key)

        if f.get("ref"):
            answer(f["ref"])  # an answer counts even on a frame dropped as already seen
        out.take, out.sends = self._order(f, now)
        if not out.take:
            return out
        kind = f["type"]
        if kind in ("phase", "reveal", "status"):  # ending and the verdict: the game moved on
            for key, held in list(self.unanswered.items()):
                sent = held.frame["type"]
                if sent == "end" or (sent == "verdict" and kind != "phase") or kind == "status":
                    answer(key)
        if kind == "status":
            self.at = None
        elif is_snapshot(f):
            out.notice = self._snapshot(f, now, out, answer)
        elif kind == "resumed":
            self.at = {"game": f["game"], "stream": f["stream"], "seq": f["seq"]}
            self.asked_at = None
            out.sends += self._caught_up(now)
        return out

    def _order(self, f: Frame, now: float) -> tuple[bool, list[Frame]]:
        at, seq = self.at, f.get("seq")
        if seq is None or at is None or f["type"] == "resumed":
            return True, []
        if is_snapshot(f):  # a new stream's snapshot always; a same-stream one not older
            fresh = f["game"] != at["game"] or f.get("stream") != at["stream"] or seq >= at["seq"]
            return fresh, []
        if "stream" in f and f["stream"] != at["stream"]:
            return False, self._ask(now)
        if seq <= at["seq"]:
            return False, []
        if seq > at["seq"] + 1:
            return False, self._ask(now)
        at["seq"] = seq
        return True, []

    def _ask(self, now: float) -> list[Frame]:
        if self.asked_at is not None and now - self.asked_at <= ASK_MS:
            return []
        self.asked_at = now
        return [{"type": "resume", **(self.query() or {})}]

    def _snapshot(self, f: Frame, now: float, out: Taken, answer: Any) -> str | None:
        before = self.at
        if f.get("stream"):
            self.at = {"game": f["game"], "stream": f["stream"], "seq": f["seq"]}
        self.asked_at = None
        for key, held in list(self.unanswered.items()):
            m = held.frame
            after = m.get("after")
            if (
                m["type"] == "message"
                and f["type"] == "game"
                and any(
                    s["sender"] == "you" and s["channel"] == m["channel"] and s["n"] >= after
                    for s in f["messages"]
                    if after is not None
                )
            ):
                answer(key)
        self.resend_when_caught_up = False
        out.sends += self._resend(now, overdue_only=False)
        moved = (
            before is not None
            and before["game"] == f["game"]
            and bool(f.get("stream"))
            and before["stream"] != f.get("stream")
        )
        return "moved" if moved else None
