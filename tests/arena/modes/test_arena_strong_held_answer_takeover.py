"""A Strong Turing Test respondent's answer, taken (and acknowledged) while the system is still
answering, survives a takeover: two arenas on one store in one process (the store and the event
loop real, the clock moved by hand), the owner lost while the answer is held, the other
rebuilding the game from the store (arena/core/takeover.py). The answer is in the control log
(MessageHeld), so the new owner says it with the turn's other replies: the respondent is not
asked for it again, their page's re-send is acknowledged and not applied, and it is said once.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from test_arena_strong import SYSTEM_AGENT, strong_setup
from test_itt_live_resume import Held
from test_takeover_keeps_paused_time import HandClock, _landed, _person, _shut_down
from turinglab.arena.core import frames as F
from turinglab.arena.core.hub import Arena
from turinglab.arena.core.store_bridge import ArenaStore
from turinglab.arena.core.takeover import restore
from turinglab.arena.modes.strong_mode import StrongLiveGame
from turinglab.store.database import Store

ANSWER = "Wet, and it smells of earth."


async def test_a_respondent_s_answer_held_at_a_takeover_is_said_once_not_asked_again(
    tmp_path: Path,
) -> None:
    clock = HandClock()
    go = asyncio.Event()
    setup = strong_setup(system=Held(SYSTEM_AGENT, ["Water from the sky.", "Wet."], go))
    first = ArenaStore(Store(str(tmp_path / "arena.db")), setup, worker="first")
    second = ArenaStore(Store(str(tmp_path / "arena.db")), setup, worker="second")
    owner, taker = Arena(setup, clock=clock, store=first), Arena(setup, clock=clock, store=second)
    inv, resp = _person("p-inv"), _person("p-resp")
    by_id = {inv.id: inv, resp.id: resp}
    try:
        mode = setup.mode("strong")
        assert mode is not None
        owner._start_game(mode, {"investigator": inv, "human_1": resp}, {}, seed=3)
        (game,) = owner.games.values()
        assert isinstance(game, StrongLiveGame)
        await _landed(game, owner)
        game.handle(inv, F.SendMessage(type="message", id="q1", channel="A", text="Rain?"))
        for _ in range(500):
            if game.snapshot(resp).phase == "answering":
                break
            await asyncio.sleep(0.01)
        answer = F.SendMessage(type="message", id="a1", channel="A", text=ANSWER)
        acks: list[F.ServerFrame] = []
        game.views["human_1"].outlets.add(acks.append)
        game.handle(resp, answer)
        for _ in range(500):  # acknowledged: the page will not send it again
            if any(isinstance(f, F.Ack) and f.ref == "a1" for f in acks):
                break
            await asyncio.sleep(0.01)
        else:
            raise AssertionError("the answer was never acknowledged")
        assert not any(m.text == ANSWER for m in game.table.messages)  # held, not said yet
        await first.flush()

        (stored,) = second.take_over("first")
        owner.give_up(game)
        taken = restore(taker, stored, lambda pid: by_id[pid])
        assert isinstance(taken, StrongLiveGame)
        assert taken.snapshot(resp).phase == "waiting"  # not asked for it again
        again: list[F.ServerFrame] = []
        taken.views["human_1"].outlets.add(again.append)
        taken.handle(resp, answer)  # a page that had no ack: acknowledged, not applied
        assert [f.ref for f in again if isinstance(f, F.Ack)] == ["a1"]
        go.set()
        for _ in range(500):
            turn = taken.turns.get(1)
            if turn is not None and turn.order:
                break
            await asyncio.sleep(0.01)
        assert turn is not None and turn.replies["human_1"] == ANSWER
        shown = taken.snapshot(inv).history[0]
        assert [r.text for r in shown.replies].count(ANSWER) == 1  # shown once
        await second.flush()
    finally:
        await _shut_down([owner, taker], [first, second])
    kept = ArenaStore(Store(str(tmp_path / "arena.db")), setup)
    try:
        (record,) = kept.records()
        answers = [m["text"] for m in record["messages"] if m["sender"] == "human_1"]
        assert answers == [ANSWER]  # said once, by the new owner
    finally:
        kept.close()
        kept.store.close()
