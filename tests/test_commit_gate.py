"""The commit gate alone: what a game shows waits, in order, for the commit of the message it
follows; an outage is announced, and ends the game past its bounds; a fenced write stops it."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from turinglab.arena import frames as F
from turinglab.arena.commit_gate import STORE_LOST, CommitGate
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
    assert game.told == ["saving-delayed"] and not game.aborted
    gate.saved(0)  # the store is back: people are told
    assert game.told == ["saving-delayed", "saving-resumed"]
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
