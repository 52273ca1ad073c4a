"""Numbered game frames, so a client that lost its connection gets exactly what it missed.

Each person's view of a game has its own stream: a random id (new whenever the view is built,
so also after a takeover) and `seq`, counting the frames the game sent that view. The game's
owner keeps the last `KEPT` frames of each stream. A client that reconnects (or sees a gap in
`seq`) names the stream and the last `seq` it saw; it gets the frames after it, in order, if
they are still kept, or else a snapshot (which includes everything; after a takeover it is
rebuilt from the store's committed messages). A client drops any frame whose `seq` it already
has, so frames that reach it twice are shown once.

The modes that send a viewer's whole state (frames.WholeState) number it in the same stream:
only the frames from the latest state on are kept, and a client that missed one before it is
sent the state as it is now, marked a snapshot (`Outbox.snapshot`), with `stream`/`seq` as a
"game" snapshot has them.

A stream is per game, never per process: a game played on the process a person is connected
to and one relayed from another process look the same to them.
"""

from __future__ import annotations

import secrets
from collections import deque
from dataclasses import dataclass
from typing import TypeVar

from turinglab.arena.core import frames as F

KEPT = 512  # frames kept per stream; older ones are answered with a snapshot
S = TypeVar("S", bound=F._Sequenced)
W = TypeVar("W", bound=F.WholeState)


@dataclass(frozen=True)
class ResumePoint:
    """Where a client is in a game's stream: the last frame it saw."""

    game: str
    stream: str
    seq: int

    @classmethod
    def from_query(cls, params: dict[str, str]) -> ResumePoint | None:
        """From a reconnecting socket's URL (`/ws?game=…&stream=…&seq=…`), if it says one."""
        game, stream, seq = params.get("game"), params.get("stream"), params.get("seq")
        if not game or not stream or seq is None or not seq.isdigit():
            return None
        return cls(game[:40], stream[:40], int(seq))

    @classmethod
    def of(cls, frame: F.Resume) -> ResumePoint:
        return cls(frame.game, frame.stream, frame.seq)

    def as_dict(self) -> dict[str, str | int]:
        return {"game": self.game, "stream": self.stream, "seq": self.seq}


class Outbox:
    """One view's stream: numbers the frames it sends and keeps the recent ones."""

    def __init__(self, kept: int = KEPT) -> None:
        self.stream = secrets.token_hex(4)
        self.seq = 0  # the last number given
        self._kept: deque[F.ServerFrame] = deque(maxlen=kept)

    def stamp(self, frame: S) -> S:
        self.seq += 1
        numbered = frame.model_copy(update={"seq": self.seq, "stream": self.stream})
        if isinstance(frame, F.WholeState):
            # A whole state supersedes everything before it: a client that missed more than
            # this state and what follows it is sent the state as it is now (a snapshot),
            # which is all it needs; kept frames stay a few, not a game of whole states.
            self._kept.clear()
        self._kept.append(numbered)  # type: ignore[arg-type]  # every _Sequenced is a ServerFrame
        return numbered

    def snapshot(self, state: W) -> W:
        """A whole state sent as a snapshot: it stands for every frame of the stream so far,
        so it says the stream and its last `seq`, and is not numbered itself."""
        return state.model_copy(update={"snapshot": True, "seq": self.seq, "stream": self.stream})

    def after(self, point: ResumePoint) -> list[F.ServerFrame] | None:
        """The frames after `point`, oldest first; None when they cannot all be given (another
        stream, or some are no longer kept): the client then needs a snapshot."""
        if point.stream != self.stream or point.seq > self.seq:
            return None
        missing = self.seq - point.seq
        if missing > len(self._kept):
            return None
        return list(self._kept)[len(self._kept) - missing :] if missing else []
