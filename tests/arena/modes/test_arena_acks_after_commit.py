"""An input is acknowledged only once what it did is committed, in the state-frame modes.

A page sends each input with an id and sends it again until it gets `ack` for it; once acked
it never sends it again, so a process that dies right after acking must have committed the
input's effect, for the process taking the game over to find it. One arena on a real store
(SQLite, the event loop real), its writer held inside a transaction (`HeldWriter`) while the
person gives a GTT verdict, an STT preference, an STT respondent's answer (held by the game
until the turn's replies are in) or a message: no ack comes while the writer is held, a
re-send meanwhile gets none either, and the ack that comes after finds the input's control
events (and its message) committed.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from test_arena_gtt import gtt_setup
from test_arena_strong import strong_setup
from test_takeover_keeps_paused_time import HandClock, _landed, _person, _shut_down
from turinglab.arena.core import frames as F
from turinglab.arena.core.hub import Arena
from turinglab.arena.core.live import LiveGame
from turinglab.arena.core.participants import Participant
from turinglab.arena.core.store_bridge import ArenaStore
from turinglab.arena.modes.gtt_mode import DISTINGUISH
from turinglab.games.control_log import Choice, ControlEvent, InputAccepted, VerdictGiven
from turinglab.games.held_message import MessageHeld
from turinglab.store.control_events import load_controls
from turinglab.store.database import Store


class HeldWriter:
    """The store's writer held inside a transaction until `release`: whatever the game queues
    meanwhile is committed only after (a store that stalls, as the game sees it)."""

    def __init__(self, bridge: ArenaStore) -> None:
        self.bridge = bridge
        self.go = threading.Event()
        self.inside = threading.Event()

    def _hold(self, conn: Any) -> None:
        self.inside.set()
        self.go.wait(30)

    async def __aenter__(self) -> HeldWriter:
        self.bridge.writer.submit(self._hold)
        assert await asyncio.to_thread(self.inside.wait, 10)
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.go.set()

    def release(self) -> None:
        self.go.set()


class Acks:
    """The acks a person's page is sent, each with what the store held when it came: the
    game's committed control events, and how far its messages are committed (the gate)."""

    def __init__(self, game: LiveGame, seat: str, bridge: ArenaStore, store_id: int) -> None:
        self.game, self.bridge, self.store_id = game, bridge, store_id
        self.got: dict[str, tuple[list[ControlEvent], int]] = {}
        game.views[seat].outlets.add(self._frame)

    def _frame(self, frame: F.ServerFrame) -> None:
        if not isinstance(frame, F.Ack) or frame.ref is None:
            return
        with self.bridge.store.engine.connect() as conn:
            logged = load_controls(conn, [self.store_id])[self.store_id]
        assert self.game.gate is not None
        self.got[frame.ref] = ([entry.event for entry in logged], self.game.gate.through)

    async def of(self, ref: str) -> tuple[list[ControlEvent], int]:
        for _ in range(1000):
            if ref in self.got:
                return self.got[ref]
            await asyncio.sleep(0.01)
        raise AssertionError(f"no ack for {ref}")


async def _until(game: LiveGame, person: Participant, test: Callable[[Any], bool]) -> Any:
    for _ in range(1000):
        state = game.snapshot(person)
        if test(state):
            return state
        await asyncio.sleep(0.01)
    raise AssertionError(f"not yet: {game.snapshot(person)}")


async def _not_acked_while_held(
    game: LiveGame, person: Participant, frame: F.ClientFrame, acks: Acks, held: HeldWriter
) -> None:
    """`frame` applied while the writer is held: no ack, for it or for its re-send."""
    game.handle(person, frame)
    await asyncio.sleep(0.2)  # the loop runs on: an ack due at once would have come
    game.handle(person, frame)  # the page re-sends it (an ack was due within 5 s)
    await asyncio.sleep(0.1)
    assert acks.got == {}, "acknowledged before it was committed"
    held.release()


def _arena(tmp_path: Path, setup: Any) -> tuple[Arena, ArenaStore]:
    bridge = ArenaStore(Store(str(tmp_path / "arena.db")), setup, worker="first")
    return Arena(setup, clock=HandClock(), store=bridge), bridge


async def _gtt_game(owner: Arena, person: Participant) -> tuple[LiveGame, int]:
    mode = owner.setup.mode(DISTINGUISH)
    assert mode is not None
    owner._start_game(mode, {"distinguisher": person}, {}, seed=3)
    (game,) = owner.games.values()
    gid = await _landed(game, owner)
    await _until(game, person, lambda s: s.phase == "writing" and s.chat == "study")
    return game, gid


async def test_a_gtt_message_is_acknowledged_only_once_committed(tmp_path: Path) -> None:
    owner, bridge = _arena(tmp_path, gtt_setup())
    person = _person("p-judge")
    try:
        game, gid = await _gtt_game(owner, person)
        acks = Acks(game, "distinguisher", bridge, gid)
        ask = F.SendMessage(type="message", id="m1", channel="study", text="Who are you?")
        async with HeldWriter(bridge) as held:
            await _not_acked_while_held(game, person, ask, acks, held)
        _, through = await acks.of("m1")
        asked = next(m for m in game.table.messages if m.text == "Who are you?")
        assert through >= asked.seq  # the game said it after the ack was due; committed first
        assert InputAccepted("distinguisher", "m1") in game.controls.log.events()
    finally:
        await _shut_down([owner], [bridge])


async def test_a_gtt_verdict_is_acknowledged_only_once_committed(tmp_path: Path) -> None:
    owner, bridge = _arena(tmp_path, gtt_setup())
    person = _person("p-judge")
    try:
        game, gid = await _gtt_game(owner, person)
        acks = Acks(game, "distinguisher", bridge, gid)
        game.handle(person, F.SendMessage(type="message", id="m1", channel="study", text="Who?"))
        await _until(game, person, lambda s: s.can_stop)  # the specimen answered
        game.handle(person, F.EndGame(type="end", id="m2"))
        await _until(game, person, lambda s: s.phase == "writing" and s.chat == "test")
        game.handle(person, F.SendMessage(type="message", id="m3", channel="test", text="6x7?"))
        await _until(game, person, lambda s: s.can_decide)
        await acks.of("m3")
        acks.got.clear()

        verdict = F.Verdict(type="verdict", id="v1", choice="imitator", confidence=70)
        async with HeldWriter(bridge) as held:
            await _not_acked_while_held(game, person, verdict, acks, held)
        committed, _ = await acks.of("v1")
        assert any(isinstance(e, VerdictGiven) for e in committed)
        assert InputAccepted("distinguisher", "v1") in committed
    finally:
        await _shut_down([owner], [bridge])


async def _stt_practice(owner: Arena, person: Participant) -> tuple[LiveGame, int]:
    mode = owner.setup.mode("strong-practice")
    assert mode is not None
    owner._start_game(mode, {"investigator": person}, {}, seed=3)
    (game,) = owner.games.values()
    return game, await _landed(game, owner)


async def test_an_stt_question_is_acknowledged_only_once_committed(tmp_path: Path) -> None:
    owner, bridge = _arena(tmp_path, strong_setup())
    person = _person("p-inv")
    try:
        game, gid = await _stt_practice(owner, person)
        acks = Acks(game, "investigator", bridge, gid)
        question = F.SendMessage(type="message", id="q1", channel="A", text="What is rain?")
        async with HeldWriter(bridge) as held:
            await _not_acked_while_held(game, person, question, acks, held)
        _, through = await acks.of("q1")
        asked = next(m for m in game.table.messages if m.text == "What is rain?")
        assert through >= asked.seq
    finally:
        await _shut_down([owner], [bridge])


async def test_an_stt_preference_is_acknowledged_only_once_committed(tmp_path: Path) -> None:
    owner, bridge = _arena(tmp_path, strong_setup())
    person = _person("p-inv")
    try:
        game, gid = await _stt_practice(owner, person)
        acks = Acks(game, "investigator", bridge, gid)
        game.handle(person, F.SendMessage(type="message", id="q1", channel="A", text="Rain?"))
        await _until(game, person, lambda s: s.phase == "choosing")
        await acks.of("q1")
        acks.got.clear()

        choice = F.Preference(type="preference", id="p1", tie=True)
        async with HeldWriter(bridge) as held:
            await _not_acked_while_held(game, person, choice, acks, held)
        committed, _ = await acks.of("p1")
        assert Choice("investigator", 1, "tie") in committed
        assert InputAccepted("investigator", "p1") in committed
    finally:
        await _shut_down([owner], [bridge])


async def test_an_stt_respondent_s_answer_is_acknowledged_once_logged_held(
    tmp_path: Path,
) -> None:
    owner, bridge = _arena(tmp_path, strong_setup())
    inv, resp = _person("p-inv"), _person("p-resp")
    try:
        mode = owner.setup.mode("strong")
        assert mode is not None
        owner._start_game(mode, {"investigator": inv, "human_1": resp}, {}, seed=3)
        (game,) = owner.games.values()
        gid = await _landed(game, owner)
        acks = Acks(game, "human_1", bridge, gid)
        game.handle(inv, F.SendMessage(type="message", id="q1", channel="A", text="Rain?"))
        await _until(game, resp, lambda s: s.phase == "answering")

        answer = F.SendMessage(type="message", id="a1", channel="A", text="Wet, mostly.")
        async with HeldWriter(bridge) as held:
            await _not_acked_while_held(game, resp, answer, acks, held)
        committed, _ = await acks.of("a1")
        assert MessageHeld("human_1", "Wet, mostly.", "turn-1") in committed
        assert InputAccepted("human_1", "a1") in committed
    finally:
        await _shut_down([owner], [bridge])
