"""The ITT kinds' live games taken over in one process: two arenas on one store (the store and
the event loop real, the clock moved by hand), the owner lost partway, the other rebuilding
the game from the store (arena/core/takeover.py).

The time limit counts from the stored start: after 100 s of play and a 2 s takeover, the game
has the limit less 102 s, and one rebuilt past it ends out of time, never "server lost". A live
ITT verdict given before the takeover (logged, the end not yet saved) is the game's end on the
other process, with its form and time, stored once; the page's re-send of it is acknowledged.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from test_arena_takeover_itt import AI, PARTNER, PRACTICE, STUDY, itt_takeover_setup
from test_takeover_keeps_paused_time import HandClock, _landed, _person, _shut_down
from turinglab.agents.base import AgentReply, CallContext, ChatMessage
from turinglab.agents.scripted import ScriptedAgent
from turinglab.arena.core import frames as F
from turinglab.arena.core.hub import Arena
from turinglab.arena.core.live import LiveGame
from turinglab.arena.core.live_reveal import SERVER_LOST
from turinglab.arena.core.store_bridge import ArenaStore
from turinglab.arena.core.takeover import restore
from turinglab.arena.modes.itt_chat_mode import MODE as CHAT
from turinglab.arena.modes.itt_chat_mode import ITTChatLiveGame
from turinglab.arena.modes.live_itt_mode import LiveITTLiveGame
from turinglab.games.spec import GameResult
from turinglab.store.database import Store


def _arenas(tmp_path: Path, clock: HandClock) -> tuple[Arena, Arena, ArenaStore, ArenaStore]:
    setup = itt_takeover_setup()
    first = ArenaStore(Store(str(tmp_path / "arena.db")), setup, worker="first")
    second = ArenaStore(Store(str(tmp_path / "arena.db")), setup, worker="second")
    return (
        Arena(setup, clock=clock, store=first),
        Arena(setup, clock=clock, store=second),
        first,
        second,
    )


async def _started(
    owner: Arena, mode_name: str, seat: str, ai: dict[str, str] | None = None
) -> LiveGame:
    mode = owner.setup.mode(mode_name)
    assert mode is not None
    owner._start_game(mode, {seat: _person("p-1")}, ai or {}, seed=3)
    (game,) = owner.games.values()
    await _landed(game, owner)
    return game


async def _until(game: LiveGame, test: Callable[[Any], bool], timeout: float = 10.0) -> Any:
    (view,) = game.views.values()
    for _ in range(int(timeout / 0.01)):
        state = game.snapshot(view.participant)
        if test(state):
            return state
        await asyncio.sleep(0.01)
    raise AssertionError(f"not yet: {game.snapshot(view.participant)}")


def _whole(game: LiveGame) -> float:
    """The game's whole time limit, as counted from its start (a fresh game's `_time_limit`)."""
    if isinstance(game, LiveITTLiveGame):
        return game.cfg.input_timeout_s * 2 * (int(game.spec.params["exchanges"]) + 1) + 60.0
    assert isinstance(game, ITTChatLiveGame)
    return game.chat_mode.reply_timeout_s * game.exchanges + 60.0


async def _ask(game: LiveGame, person: Any, n: int) -> Any:
    text = f"question {n}?"
    game.handle(person, F.SendMessage(type="message", id=f"q{n}", channel="A", text=text))
    return await _until(game, lambda s: len(s.history) == n and bool(s.history[-1].replies))


async def _never(game: LiveGame, result: GameResult) -> None:
    await asyncio.Event().wait()  # the owner dies before its end is saved


async def test_a_live_itt_session_keeps_its_time_and_its_verdict(tmp_path: Path) -> None:
    clock = HandClock()
    owner, taker, first, second = _arenas(tmp_path, clock)
    person = _person("p-1")
    try:
        game = await _started(owner, PRACTICE, "judge")
        assert isinstance(game, LiveITTLiveGame)
        for n in range(1, 6):
            state = await _ask(game, person, n)
        assert state.phase == "verdict"
        clock.advance(100.0)  # the session has been played for 100 s
        game.save_end = _never
        verdict = F.Verdict(type="verdict", id="v1", choice="B", confidence=65, reason="slow")
        game.handle(person, verdict)
        given_at = game.clock.now()
        await first.flush()

        (stored,) = second.take_over("first")
        clock.advance(2.0)
        owner.give_up(game)
        taken = restore(taker, stored, lambda pid: person)
        assert isinstance(taken, LiveITTLiveGame) and taken.id == game.id
        assert taken._time_limit() == _whole(taken) - 102.0
        end = await _until(taken, lambda s: s.phase == "ended")  # on its own, on the verdict
        assert end.flagged is None and end.outcome is not None
        acks: list[Any] = []
        taken.views["judge"].outlets.add(acks.append)
        taken.handle(person, verdict)  # the page had no ack: acknowledged, not "game over"
        assert [f.ref for f in acks if isinstance(f, F.Ack)] == ["v1"]
        await second.flush()
    finally:
        await _shut_down([owner, taker], [first, second])

    kept = ArenaStore(Store(str(tmp_path / "arena.db")), itt_takeover_setup())
    try:
        (record,) = kept.records()
        assert record["status"] == "finished"
        (judged,) = record["judgements"]  # counted once, with its form and its time
        assert (judged["verdict"], judged["confidence"], judged["reason"]) == (
            "agent_b",
            65,
            "slow",
        )
        assert judged["created_at"] == given_at
        questions = [m["text"] for m in record["messages"] if m["sender"] == "judge"]
        assert questions == [f"question {n}?" for n in range(1, 6)]  # each once
    finally:
        kept.close()
        kept.store.close()


async def test_a_conversation_rebuilt_past_its_time_ends_out_of_time(tmp_path: Path) -> None:
    """Its time limit (a backstop; each turn is timed on its own) counts from the stored start:
    counted from the takeover, the rebuilt conversation would play on."""
    clock = HandClock()
    owner, taker, first, second = _arenas(tmp_path, clock)
    person = _person("p-1")
    try:
        game = await _started(owner, CHAT, "A", {"B": PARTNER})
        assert isinstance(game, ITTChatLiveGame)
        await first.flush()
        (stored,) = second.take_over("first")
        owner.give_up(game)
        clock.advance(_whole(game) + 1.0)  # the takeover came after the conversation's time
        taken = restore(taker, stored, lambda pid: person)
        end = await _until(taken, lambda s: s.phase == "ended")
        assert taken.result is not None
        assert taken.result.flags == ["arena: the conversation ran out of time"]
        assert SERVER_LOST not in taken.result.flags and end.flagged is not None
    finally:
        await _shut_down([owner, taker], [first, second])


class Held(ScriptedAgent):
    """A scripted AI whose replies wait for `go`: the human agent's answer is taken while the
    AI's is not in yet, where the test takes the game over."""

    def __init__(self, name: str, replies: list[str], go: asyncio.Event) -> None:
        super().__init__(name, replies)
        self.go = go

    async def reply(self, history: list[ChatMessage], ctx: CallContext) -> AgentReply:
        await self.go.wait()
        return await super().reply(history, ctx)


async def test_a_human_agent_s_answer_taken_before_a_takeover_is_said_once(
    tmp_path: Path,
) -> None:
    """The human agent's answer is taken (acknowledged) while the AI is still answering, and
    said only with the AI's: it is in the control log, so the process taking the game over says
    it, and the person is not asked for it again."""
    clock = HandClock()
    go = asyncio.Event()
    setup = itt_takeover_setup()
    setup = replace(setup, agents={**setup.agents, AI: Held(AI, ["pasta", "rain"], go)})
    first = ArenaStore(Store(str(tmp_path / "arena.db")), setup, worker="first")
    second = ArenaStore(Store(str(tmp_path / "arena.db")), setup, worker="second")
    owner, taker = Arena(setup, clock=clock, store=first), Arena(setup, clock=clock, store=second)
    judge, human = _person("p-j"), _person("p-h")
    by_id = {judge.id: judge, human.id: human}
    try:
        mode = setup.mode(STUDY)
        assert mode is not None
        owner._start_game(mode, {"judge": judge, "agent_a": human}, {}, seed=3)
        (game,) = owner.games.values()
        assert isinstance(game, LiveITTLiveGame)
        await _landed(game, owner)
        ask = F.SendMessage(type="message", id="q1", channel="A", text="Where are you?")
        game.handle(judge, ask)
        seat = game.spec.params["human_seat"]
        for _ in range(500):
            if game.snapshot(human).phase == "answering":
                break
            await asyncio.sleep(0.01)
        answer = F.SendMessage(type="message", id="a1", channel="A", text="At home, cold.")
        game.handle(human, answer)
        assert game.snapshot(human).phase == "waiting"
        await first.flush()
        (stored,) = second.take_over("first")
        owner.give_up(game)
        taken = restore(taker, stored, lambda pid: by_id[pid])
        assert isinstance(taken, LiveITTLiveGame)
        assert taken.snapshot(human).phase == "waiting"  # not asked for it again
        go.set()
        for _ in range(500):
            turn = taken.turns.get(1)
            if turn is not None and turn.order:
                break
            await asyncio.sleep(0.01)
        assert turn is not None and turn.replies[seat] == "At home, cold."
        assert turn.replies[game.spec.params["ai_seat"]] == "pasta"
        await second.flush()
    finally:
        await _shut_down([owner, taker], [first, second])
    kept = ArenaStore(Store(str(tmp_path / "arena.db")), setup)
    try:
        (record,) = kept.records()
        answers = [m["text"] for m in record["messages"] if m["sender"] == seat]
        assert answers == ["At home, cold."]  # said once, by the new owner
    finally:
        kept.close()
        kept.store.close()
