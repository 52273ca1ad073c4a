"""A live game's control events (games/control_log.py): logged, and shown once committed.

A game records a control event with `GameControls.record(event, then)`: the event joins the
game's log, and `then` (its effect on people's pages) runs once the store has committed it,
as a message is shown only once stored (commit_gate.py). Without a store `then` runs at once.
With one (store_bridge.py binds a writer), the event is written through the group-committing
writer, fenced by the game's epoch, after every message queued before it; a refusal (another
process owns the game now) or a failure reaches the game's commit gate, which stops the game
as it stops it for a message. A game rebuilt after a takeover starts from the stored log
(`from_store`), so what it decided before is known, and its numbering goes on without a hole.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from turinglab.games.control_log import ControlEvent, ControlLog, Draws, Logged

Then = Callable[[], None]
Write = Callable[[Logged, Then, bool], None]


def _nothing() -> None:
    return None


class GameControls:
    def __init__(self, log: ControlLog | None = None) -> None:
        self.log = log or ControlLog()
        self.next_seq = 0  # messages said so far: where the next event falls among them
        self._write: Write | None = None

    def bind(self, write: Write) -> None:
        """Write every event from now on through `write` (the game's store recorder)."""
        self._write = write

    def from_store(self, log: ControlLog, said: int) -> None:
        """A rebuilt game: the events its earlier owners committed, after `said` messages."""
        self.log = log
        self.next_seq = said

    def record(
        self, event: ControlEvent, then: Then | None = None, *, vital: bool = True
    ) -> Logged:
        """Log `event`; `then` once it is committed. An event not `vital` (a bookkeeping one,
        such as an input id) that cannot be written is only logged, and `then` runs all the
        same: it never stops the game (it may race the game's end, after which the store
        refuses every write). Events are written in the order recorded, after the messages
        said before them, and committed in that order: `then` of one runs once every event
        recorded before it is committed too (or has failed, which a vital event reports to
        the game's commit gate first)."""
        logged = self.log.add(event, self.next_seq, time.time())
        if self._write is None:
            (then or _nothing)()
        else:
            self._write(logged, then or _nothing, vital)
        return logged

    def draws(self, seed: int, stream: str = "main") -> Draws:
        """The game's random stream `stream`, where its stored log left it (0 when new)."""
        return Draws(seed, stream, self.log.last_draws(stream))
