"""Nothing a person says is acknowledged before it is stored.

A live game with a store shows people a message (the sender's own echo included), and lets an
AI witness answer it, only once the store has committed it; whatever the game shows after that
message waits behind it, in order. Commits are still grouped (store/writer.py): the wait is the
writer's commit interval plus one transaction.

While the store is unreachable the writer retries and the game waits: after `notice_after_s`
without progress every person in the game is told that saving is delayed, and told again when
it has caught up. The messages said meanwhile are held (the writer's queue and this gate); past
`max_unsaved` of them, or `max_outage_s` without progress, or a write that failed for good, the
game ends flagged with everything committed so far kept. A write refused because another
process owns the game now (store/fencing.py) stops the game here: its people are told to
reconnect, and find it at its new owner.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from typing import Protocol

from turinglab.arena.core import frames as F
from turinglab.games.events import GameEvent, MessageSaid
from turinglab.store.fencing import Fenced

log = logging.getLogger(__name__)

NOTICE_AFTER_S = 1.0
MAX_UNSAVED = 50
SAVING_DELAYED = "Saving is delayed, please wait. Nothing you see is lost."
SAVING_RESUMED = "Saved. The game goes on."
RECONNECT = "This game moved to another server. Please reconnect (reload the page)."
STORE_LOST = "arena: store unreachable"  # the flag of a game ended because saving failed


class GatedGame(Protocol):
    def pause_clock(self) -> None: ...
    def resume_clock(self) -> None: ...
    def show(self, event: GameEvent, to: tuple[str, ...]) -> None: ...
    def tell_everyone(self, frame: F.ServerFrame) -> None: ...
    def abort(self, flag: str) -> None: ...
    def fenced(self) -> None: ...


class CommitGate:
    def __init__(
        self,
        game: GatedGame,
        *,
        saved_through: int = -1,
        max_unsaved: int = MAX_UNSAVED,
        max_outage_s: float = 60.0,
        notice_after_s: float = NOTICE_AFTER_S,
    ) -> None:
        self.game = game
        self.through = saved_through  # every seq up to this one is committed
        self.said = saved_through  # the last seq handed to the writer
        self.max_unsaved = max_unsaved
        self.max_outage_s = max_outage_s
        self.notice_after_s = notice_after_s
        self.held: deque[tuple[GameEvent, tuple[str, ...]]] = deque()
        self.delayed = False  # people were told saving is delayed
        self.failed: BaseException | None = None
        self._waiting_since: float | None = None  # monotonic: last progress while unsaved
        self._timer: asyncio.TimerHandle | None = None
        self._settled: list[tuple[int, asyncio.Future[None]]] = []
        self._controls = 0  # control events handed to the writer, not yet settled

    # ---- what the game shows -----------------------------------------------------------------

    def hold(self, event: GameEvent, to: tuple[str, ...]) -> bool:
        """True when the event must wait (the game shows it later, through `show`)."""
        if self.held or self._unsaved(event):
            self.held.append((event, to))
            return True
        return False

    def _unsaved(self, event: GameEvent) -> bool:
        return isinstance(event, MessageSaid) and event.message.seq > self.through

    def _release(self) -> None:
        while self.held:
            event, to = self.held[0]
            if self._unsaved(event):
                return
            self.held.popleft()
            self.game.show(event, to)

    async def settled(self, seq: int | None = None) -> None:
        """Wait until every message up to `seq` (default: all said so far) is committed;
        raises what made saving fail."""
        target = self.said if seq is None else seq
        if self.failed is not None:
            raise self.failed
        if target <= self.through:
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._settled.append((target, future))
        await future

    # ---- what the store reports (recorder, on the event loop) ---------------------------------

    def writing(self, seq: int) -> None:
        self.said = max(self.said, seq)
        if self._waiting_since is None:
            self._waiting_since = time.monotonic()
            self._watch(self.notice_after_s)
        if self.said - self.through > self.max_unsaved:
            self._fail(RuntimeError(f"{self.said - self.through} messages not saved"))

    def writing_control(self) -> None:
        """A control event (control_recorder.py) is being written: its effect waits for it as
        a message's does, so a stalled store is noticed and told the same way."""
        self._controls += 1
        if self._waiting_since is None:
            self._waiting_since = time.monotonic()
            self._watch(self.notice_after_s)

    def control_settled(self) -> None:
        self._controls -= 1
        self._progress()

    def saved(self, seq: int) -> None:
        self.through = max(self.through, seq)
        self._release()
        for target, future in [w for w in self._settled if w[0] <= self.through]:
            self._settled.remove((target, future))
            if not future.done():
                future.set_result(None)
        self._progress()

    def _progress(self) -> None:
        if self.through >= self.said and self._controls == 0:
            self._waiting_since = None
            if self.delayed:
                self.delayed = False
                self.game.tell_everyone(F.Error(code="saving-resumed", message=SAVING_RESUMED))
                self.game.resume_clock()
        else:
            self._waiting_since = time.monotonic()  # progress: the outage clock starts again

    def save_failed(self, err: BaseException) -> None:
        if self.failed is None:
            self._fail(err)

    def _fail(self, err: BaseException) -> None:
        self.failed = err
        self._stop_watch()
        for _target, future in self._settled:
            if not future.done():
                future.set_exception(err)
        self._settled.clear()
        if isinstance(err, Fenced):
            log.warning("game fenced: %s; stopped here", err)
            self.game.fenced()
        else:
            log.error("game ends flagged: a message could not be saved: %s", err)
            self.game.abort(STORE_LOST)

    # ---- outage clock ------------------------------------------------------------------------

    def _watch(self, after: float) -> None:
        self._stop_watch()
        self._timer = asyncio.get_running_loop().call_later(after, self._check)

    def _stop_watch(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _check(self) -> None:
        self._timer = None
        since = self._waiting_since
        if since is None or self.failed is not None:
            return
        waited = time.monotonic() - since
        if waited >= self.max_outage_s:
            self._fail(TimeoutError(f"nothing saved for {waited:.0f} s"))
            return
        if waited >= self.notice_after_s and not self.delayed:
            self.delayed = True
            log.warning("saving delayed %.1f s; people told to wait; game clock stopped", waited)
            self.game.pause_clock()
            self.game.tell_everyone(F.Error(code="saving-delayed", message=SAVING_DELAYED))
        due = self.max_outage_s if self.delayed else self.notice_after_s
        self._watch(max(0.02, due - waited))
