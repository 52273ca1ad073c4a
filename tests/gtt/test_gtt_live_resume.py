"""A live GTT game taken over from a process that died goes on where it stood, in one process.

Two arenas on one store (the store and the event loop real, the clock moved by hand): the
owner plays a person's GDGTT game through the study and one test message, then is lost; the
other claims the game from the store and rebuilds it (arena/core/takeover.py). The person sees every
line so far, their turns are where they were, the time left is what it was, and the game ends
on their verdict, stored once, with a transcript the engine's own rules accept from start to
end. A game rebuilt past its time ends as out of time (never "server lost"). A watched AI-only
game (gtt-watch), held partway by its models and taken over, is message for message the game
played through without a takeover.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from games_helpers import direct_caller
from test_arena_gtt import gtt_setup
from test_takeover_keeps_paused_time import HandClock, _landed, _person, _shut_down
from turinglab.agents.base import Agent, AgentReply, CallContext, ChatMessage
from turinglab.agents.human import HumanAgent
from turinglab.agents.scripted import ScriptedAgent
from turinglab.arena.core import frames as F
from turinglab.arena.core.hub import Arena
from turinglab.arena.core.live import LiveGame
from turinglab.arena.core.live_reveal import SERVER_LOST
from turinglab.arena.core.participants import Participant
from turinglab.arena.core.store_bridge import ArenaStore
from turinglab.arena.core.takeover import restore
from turinglab.arena.modes.gtt_live import TIME_LIMIT_S, GTTLiveGame
from turinglab.arena.modes.gtt_mode import DISTINGUISH, WATCH
from turinglab.games.kinds import RESUMABLE
from turinglab.games.spec import GameResult
from turinglab.games.table import Table
from turinglab.store import arena_games
from turinglab.store.database import Store


async def _state_until(
    game: LiveGame, test: Callable[[F.GTTState], bool], timeout: float = 10.0
) -> F.GTTState:
    """The person's state once `test` holds of it (the models answer within milliseconds)."""
    assert isinstance(game, GTTLiveGame)
    (view,) = game.views.values()
    for _ in range(int(timeout / 0.01)):
        state = game.snapshot(view.participant)
        if test(state):
            return state
        await asyncio.sleep(0.01)
    raise AssertionError(f"not yet: {game.snapshot(view.participant)}")


def _lines(state: F.GTTState) -> list[tuple[str, str, str]]:
    return [(c.name, line.sender, line.text) for c in state.chats for line in c.lines]


def _arenas(tmp_path: Path, clock: HandClock) -> tuple[Arena, Arena, ArenaStore, ArenaStore]:
    setup = gtt_setup()
    first = ArenaStore(Store(str(tmp_path / "arena.db")), setup, worker="first")
    second = ArenaStore(Store(str(tmp_path / "arena.db")), setup, worker="second")
    return (
        Arena(setup, clock=clock, store=first),
        Arena(setup, clock=clock, store=second),
        first,
        second,
    )


async def _started(owner: Arena) -> GTTLiveGame:
    mode = owner.setup.mode(DISTINGUISH)
    assert mode is not None
    owner._start_game(mode, {"distinguisher": _person("p-judge")}, {}, seed=3)
    (game,) = owner.games.values()
    assert isinstance(game, GTTLiveGame)
    await _landed(game, owner)
    return game


async def test_a_gtt_game_taken_over_goes_on_where_it_stood(tmp_path: Path) -> None:
    clock = HandClock()
    owner, taker, first, second = _arenas(tmp_path, clock)
    person = _person("p-judge")
    try:
        game = await _started(owner)
        await _state_until(game, lambda s: s.phase == "writing" and s.chat == "study")
        game.handle(person, F.SendMessage(type="message", id="i1", channel="study", text="Who?"))
        await _state_until(game, lambda s: len(s.chats[0].lines) == 2)
        game.handle(person, F.EndGame(type="end", id="i2"))  # done studying: the game gets STOP
        await _state_until(game, lambda s: s.phase == "writing" and s.chat == "test")
        said = "What is 6 times 7?"
        game.handle(person, F.SendMessage(type="message", id="i3", channel="test", text=said))
        before = await _state_until(game, lambda s: s.can_decide and s.turns_left == 3)
        clock.advance(100.0)  # the game has been played for 100 s
        assert game.time_left() == TIME_LIMIT_S - 100.0
        await first.flush()

        (stored,) = second.take_over("first")  # the owner is lost; the other claims its game
        clock.advance(2.0)
        owner.give_up(game)
        taken = restore(taker, stored, lambda pid: person)
        assert isinstance(taken, GTTLiveGame) and isinstance(taken.play, functools.partial)
        assert taken.id == game.id and taken.time_left() == TIME_LIMIT_S - 102.0
        again = await _state_until(taken, lambda s: s.can_decide)
        # Everything the person saw, as they saw it, and their turn where it was.
        assert _lines(again) == _lines(before)
        assert again.model_dump(exclude={"chats"}) == before.model_dump(exclude={"chats"})
        with_models = [m for m in taken.table.messages if m.sender == "unknown"]
        assert len(with_models) == 1  # X was not asked again for the reply it had given

        taken.handle(person, F.Verdict(type="verdict", id="i4", choice="imitator", confidence=70))
        end = await _state_until(taken, lambda s: s.reveal is not None)
        assert end.reveal is not None and end.reveal.flagged is None and end.reveal.verdict == 0
        assert taken.result is not None and taken.result.status == "answered"
        await second.flush()
    finally:
        await _shut_down([owner, taker], [first, second])

    kept = ArenaStore(Store(str(tmp_path / "arena.db")), gtt_setup())
    try:
        (record,) = kept.records()  # one game, under its first row
        assert record["game"] == game.id and record["status"] == "answered"
        (verdict,) = record["judgements"]  # counted once
        assert (verdict["kind"], verdict["verdict"], verdict["confidence"]) == (
            "gtt-verdict", "imitator", 70,
        )  # fmt: skip
        assert [m["seq"] for m in record["messages"]] == list(range(len(record["messages"])))
        person_said = [m["text"] for m in record["messages"] if m["sender"] == "distinguisher"]
        assert person_said == ["Who?", "STOP", said, "<answer>0</answer>"]
        # The stored transcript is a game by the engine's rules, start to end: played again
        # over all of it, the game says exactly it and ends as stored.
        found = arena_games.ended_game(kept.store, kept.run_id, game.id)
        assert found is not None
        stored_again, _ = found
        table = Table(seats=taken.table.seats, caller=_no_call, seed=stored_again.spec.seed)
        table.replay(stored_again.messages)
        resumable = RESUMABLE.of(taken.mode.game)
        assert resumable is not None
        result = await resumable.resume(table, stored_again.spec, started_at=0.0)
        assert (result.status, result.verdict) == ("answered", 0) and not table.catching_up
    finally:
        kept.close()
        kept.store.close()


async def _to_the_verdict(game: GTTLiveGame, person: Participant) -> None:
    """Study once, end the study, write once to X: the person may decide now."""
    await _state_until(game, lambda s: s.phase == "writing" and s.chat == "study")
    game.handle(person, F.SendMessage(type="message", id="i1", channel="study", text="Who?"))
    await _state_until(game, lambda s: len(s.chats[0].lines) == 2)
    game.handle(person, F.EndGame(type="end", id="i2"))
    await _state_until(game, lambda s: s.phase == "writing" and s.chat == "test")
    game.handle(person, F.SendMessage(type="message", id="i3", channel="test", text="6 x 7?"))
    await _state_until(game, lambda s: s.can_decide)


VERDICT = F.Verdict(type="verdict", id="v1", choice="imitator", confidence=70, reason="eager")


async def _never(game: LiveGame, result: GameResult) -> None:
    await asyncio.Event().wait()  # the owner dies before its end is saved


@pytest.mark.parametrize("landed", [True, False], ids=["answer-stored", "answer-lost"])
async def test_a_verdict_given_before_a_takeover_is_counted_once(
    tmp_path: Path, landed: bool
) -> None:
    """The person's verdict form (confidence, reason) is no message: it is in the game's
    control log, written before the answer message it becomes. Taken over after the answer
    was stored (and before the end was), or after the form was logged and before the game took
    the answer, the game ends on that verdict with the form, stored once; the page's re-send of
    the verdict is acknowledged, not refused."""
    clock = HandClock()
    owner, taker, first, second = _arenas(tmp_path, clock)
    person = _person("p-judge")
    try:
        game = await _started(owner)
        await _to_the_verdict(game, person)
        game.save_end = _never
        if not landed:  # it dies after logging the form, before the game took the answer
            game._give = lambda view, text: None
        game.handle(person, VERDICT)
        if landed:
            await _state_until(game, lambda s: s.phase == "ended" or s.phase == "waiting")
            for _ in range(1000):
                if any(m.text == "<answer>0</answer>" for m in game.shown):  # committed
                    break
                await asyncio.sleep(0.01)
        await first.flush()
        assert any(m.text == "<answer>0</answer>" for m in game.shown) is landed
        (stored,) = second.take_over("first")
        owner.give_up(game)
        taken = restore(taker, stored, lambda pid: person)
        end = await _state_until(taken, lambda s: s.reveal is not None)  # on its own
        taken.handle(person, VERDICT)  # the page had no ack: acknowledged, not "game over"
        assert end.reveal is not None and end.reveal.flagged is None and end.reveal.verdict == 0
        await second.flush()
    finally:
        await _shut_down([owner, taker], [first, second])
    kept = ArenaStore(Store(str(tmp_path / "arena.db")), gtt_setup())
    try:
        (record,) = kept.records()
        assert record["status"] == "answered"
        (verdict,) = record["judgements"]  # once, with the form
        assert (verdict["verdict"], verdict["confidence"], verdict["reason"]) == (
            "imitator", 70, "eager",
        )  # fmt: skip
        answers = [m for m in record["messages"] if m["text"] == "<answer>0</answer>"]
        assert len(answers) == 1
    finally:
        kept.close()
        kept.store.close()


async def _no_call(agent: Agent, history: list[ChatMessage], ctx: CallContext) -> AgentReply:
    raise AssertionError("every message is stored: no agent is asked")


async def test_a_gtt_game_rebuilt_past_its_time_ends_out_of_time(tmp_path: Path) -> None:
    clock = HandClock()
    owner, taker, first, second = _arenas(tmp_path, clock)
    person = _person("p-judge")
    try:
        game = await _started(owner)
        await _state_until(game, lambda s: s.phase == "writing")
        await first.flush()
        (stored,) = second.take_over("first")
        owner.give_up(game)
        clock.advance(TIME_LIMIT_S + 1.0)  # the takeover came after the game's time
        taken = restore(taker, stored, lambda pid: person)
        end = await _state_until(taken, lambda s: s.reveal is not None)
        assert taken.result is not None and taken.result.flags == [
            "arena: the game ran out of time"
        ]
        assert SERVER_LOST not in taken.result.flags and end.reveal is not None
    finally:
        await _shut_down([owner, taker], [first, second])


WATCHER = "person:p-watch"  # the spectator's seat at the table (gtt_mode.py)


class Gated(ScriptedAgent):
    """A scripted model whose second and later replies wait for `go`: the game stands still
    partway, where the test takes it over."""

    def __init__(self, name: str, replies: list[str], go: asyncio.Event) -> None:
        super().__init__(name, replies)
        self.go = go
        self.held = 0  # calls waiting now

    async def reply(self, history: list[ChatMessage], ctx: CallContext) -> AgentReply:
        if any(m.role == "assistant" for m in history) and not self.go.is_set():
            self.held += 1
            try:
                await self.go.wait()
            finally:
                self.held -= 1
        return await super().reply(history, ctx)


async def test_a_watched_ai_game_taken_over_is_the_game_played_through(tmp_path: Path) -> None:
    """gtt-watch: nobody plays, two models do. Taken over partway, the game the spectator sees
    end is, message for message, the one played through without a takeover."""
    go = asyncio.Event()
    setup = gtt_setup(variants=("gtt", "gttq"), seed=5)
    lines: dict[str, list[str]] = {}
    for name, agent in setup.agents.items():
        assert isinstance(agent, ScriptedAgent)
        lines[name] = list(agent.replies)
    gated = {name: Gated(name, said, go) for name, said in lines.items()}
    setup = replace(setup, agents=dict(gated))
    first = ArenaStore(Store(str(tmp_path / "arena.db")), setup, worker="first")
    second = ArenaStore(Store(str(tmp_path / "arena.db")), setup, worker="second")
    clock = HandClock()
    owner, taker = Arena(setup, clock=clock, store=first), Arena(setup, clock=clock, store=second)
    person = _person("p-watch")
    try:
        mode = setup.mode(WATCH)
        assert mode is not None
        owner._start_game(mode, {"spectator": person}, {}, seed=5)
        (game,) = owner.games.values()
        await _landed(game, owner)
        for _ in range(1000):  # a model's second reply waits: the game stands there
            if any(a.held for a in gated.values()):
                break
            await asyncio.sleep(0.01)
        partway = len(game.table.messages)
        assert partway >= 3 and game.result is None
        await first.flush()
        (stored,) = second.take_over("first")
        owner.give_up(game)
        taken = restore(taker, stored, lambda pid: person)
        assert len(stored.messages) == partway
        go.set()
        await _state_until(taken, lambda s: s.reveal is not None)
        assert taken.result is not None and not taken.result.flags

        # The same trial played through at a plain table, with the same models.
        whole = Table(
            seats=mode.game.seats(
                taken.spec, {**ungated(lines), WATCHER: HumanAgent(WATCHER, "p-watch")}
            ),
            caller=direct_caller,
            seed=taken.spec.seed,
        )
        expected = await mode.game.play(whole, taken.spec)

        def said(table: Table) -> list[tuple[object, ...]]:
            return [(m.sender, m.text, m.visible_to, m.phase) for m in table.messages]

        assert said(taken.table) == said(whole)
        assert (taken.result.status, taken.result.verdict) == (expected.status, expected.verdict)
    finally:
        await _shut_down([owner, taker], [first, second])


def ungated(lines: dict[str, list[str]]) -> dict[str, Agent]:
    return {name: ScriptedAgent(name, said) for name, said in lines.items()}
