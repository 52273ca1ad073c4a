"""The commit gate alone: what a game shows waits, in order, for the commit of the message it
follows; an outage is announced, and ends the game past its bounds; a fenced write stops it."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from turinglab.arena.core import frames as F
from turinglab.arena.core.commit_gate import STORE_LOST, CommitGate
from turinglab.games.events import GameEvent, MessageSaid, TalkEnded
from turinglab.games.table import TranscriptMessage
from turinglab.store.fencing import Fenced


class Game:
    def __init__(self) -> None:
        self.shown: list[tuple[str, Any]] = []
        self.told: list[str] = []
        self.aborted: list[str] = []
        self.was_fenced = False

    def show(self, event: GameEvent, to: tuple[str, ...]) -> None:
        (seat,) = to
        self.shown.append((seat, event.message.seq if isinstance(event, MessageSaid) else "end"))

    def tell_everyone(self, frame: F.ServerFrame) -> None:
        assert isinstance(frame, F.Error)
        self.told.append(frame.code)

    def abort(self, flag: str) -> None:
        self.aborted.append(flag)

    def fenced(self) -> None:
        self.was_fenced = True

    def pause_clock(self) -> None:
        self.told.append("clock-paused")

    def resume_clock(self) -> None:
        self.told.append("clock-resumed")


def _message(seq: int) -> MessageSaid:
    return MessageSaid(TranscriptMessage(seq, "j", "hi", ("j", "w"), "main", 0.0))


async def test_events_wait_in_order_for_the_commit_of_the_message_they_follow() -> None:
    game = Game()
    shown = game.shown
    gate = CommitGate(game, notice_after_s=60)
    for seq in (0, 1):
        gate.writing(seq)
    for seat, event in [("j", _message(0)), ("w", _message(0)), ("j", TalkEnded("time")),
                        ("j", _message(1))]:  # fmt: skip
        assert gate.hold(event, (seat,))
    gate.saved(0)
    assert shown == [("j", 0), ("w", 0), ("j", "end")]
    settled = asyncio.ensure_future(gate.settled())
    await asyncio.sleep(0)
    assert not settled.done()
    gate.saved(1)
    await settled
    assert shown[-1] == ("j", 1) and not gate.held
    assert not gate.hold(_message(1), ("j",))  # committed already: shown at once


async def test_an_outage_is_announced_then_ends_the_game_past_its_bound() -> None:
    game = Game()
    gate = CommitGate(game, notice_after_s=0.05, max_outage_s=0.3)
    gate.writing(0)
    for _ in range(200):
        if game.told:
            break
        await asyncio.sleep(0.01)
    # The game's clock stops as people are told; it goes on once saving caught up.
    assert game.told == ["clock-paused", "saving-delayed"] and not game.aborted
    gate.saved(0)  # the store is back: people are told
    assert game.told == ["clock-paused", "saving-delayed", "saving-resumed", "clock-resumed"]
    gate.writing(1)
    for _ in range(300):
        if game.aborted:
            break
        await asyncio.sleep(0.01)
    assert game.aborted == [STORE_LOST]
    with pytest.raises(TimeoutError):
        await gate.settled()


async def test_too_many_unsaved_messages_end_the_game() -> None:
    game = Game()
    gate = CommitGate(game, max_unsaved=3, notice_after_s=60)
    for seq in range(3):
        gate.writing(seq)
    assert not game.aborted
    gate.writing(3)
    assert game.aborted == [STORE_LOST]


async def test_a_fenced_write_stops_the_game_instead_of_flagging_it() -> None:
    game = Game()
    gate = CommitGate(game, notice_after_s=60)
    gate.writing(0)
    waiting = asyncio.ensure_future(gate.settled())
    await asyncio.sleep(0)
    gate.save_failed(Fenced("taken over"))
    assert game.was_fenced and not game.aborted
    with pytest.raises(Fenced):
        await waiting


async def test_a_paused_game_clock_stands_still_and_its_sleepers_wait() -> None:
    """The live game's own time (games/clock.py PausableClock over the real clock): while saving
    is delayed a five-minute game loses nothing, and a timer due meanwhile waits."""
    from turinglab.games.clock import REAL_CLOCK, PausableClock

    clock = PausableClock(REAL_CLOCK)
    start = clock.now()
    timer = asyncio.ensure_future(clock.sleep(0.3))
    await asyncio.sleep(0.1)
    clock.pause()
    stopped_at = clock.now()
    await asyncio.sleep(0.4)  # past the timer's wall-clock due time: paused, it is not due
    assert not timer.done()
    assert clock.now() == stopped_at  # time stood still
    clock.resume()
    assert clock.now() - start < 0.25  # the pause is not counted
    await asyncio.wait_for(timer, 2)  # the rest of its 0.3 s, then it fires
    assert clock.now() - start >= 0.3
