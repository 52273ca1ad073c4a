"""A live game's control events are stored in order, fenced by its epoch, and read back by the
process that takes it over; its random stream continues where the stored counter left it.

Real store (a SQLite file and PostgreSQL), real writer and event loop; no game is played: the
events are recorded through the live game's own API (`game.controls.record`).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from sqlalchemy import select

from arena_fixtures import engine_setup
from turinglab.arena.core.hub import Arena
from turinglab.arena.core.live import LiveGame
from turinglab.arena.core.participants import Participant
from turinglab.arena.core.store_bridge import ArenaStore
from turinglab.arena.core.takeover import restore
from turinglab.games.control_log import (
    Away,
    Back,
    Choice,
    ControlLog,
    Draws,
    Ended,
    InputAccepted,
    PhaseChanged,
    event_from,
    event_json,
    interleave,
)
from turinglab.games.table import TranscriptMessage
from turinglab.store.database import Store
from turinglab.store.schema import control_events


def _person(pid: str) -> Participant:
    return Participant(id=pid, token=f"token-{pid}", consented=True)


async def _landed(game: LiveGame, arena: Arena) -> None:
    for _ in range(4000):
        if any(g is game for g in arena.stored_ids().values()):
            return
        await asyncio.sleep(0.005)
    raise AssertionError("the game's row never landed")


async def _committed(shown: list[str], n: int) -> None:
    for _ in range(4000):  # the writer commits within ms; a loaded machine may take longer
        if len(shown) >= n:
            return
        await asyncio.sleep(0.005)
    raise AssertionError(f"only {shown} shown")


async def test_control_events_are_stored_fenced_and_read_back_in_order(
    store_location: str, tmp_path: Path
) -> None:
    setup = engine_setup()
    mode = setup.mode("three-party")
    assert mode is not None
    first = ArenaStore(Store(store_location), setup, worker="first")
    second = ArenaStore(Store(store_location), setup, worker="second")
    owner, taker = Arena(setup, store=first), Arena(setup, store=second)
    people = {"p-judge": _person("p-judge"), "p-witness": _person("p-witness")}
    try:
        owner._start_game(
            mode,
            {"interrogator": people["p-judge"], "witness_a": people["p-witness"]},
            {"witness_b": "ELIZA"},
            seed=5,
        )
        (game,) = owner.games.values()
        await _landed(game, owner)
        shown: list[str] = []
        game.controls.record(InputAccepted("interrogator", "in-1"), lambda: shown.append("a"))
        game.controls.record(Choice("interrogator", 1, "2"), lambda: shown.append("b"))
        await _committed(shown, 2)
        assert shown == ["a", "b"]  # each effect once its event is committed, in order

        (stored,) = second.take_over("first")
        assert stored.controls.events() == [
            InputAccepted("interrogator", "in-1"),
            Choice("interrogator", 1, "2"),
        ]
        # A bookkeeping event the stale owner cannot write never stops its game by itself
        # (it may race a game's end); the writer has settled it once a later op is committed.
        game.controls.record(InputAccepted("interrogator", "late"), vital=False)
        await first.flush()
        for _ in range(20):
            await asyncio.sleep(0.01)
        assert game.gate is not None and game.gate.failed is None
        # The stale owner's next event is refused (its epoch is no longer the game's): its
        # effect is never shown and the game stops there (the gate is told it was fenced).
        game.controls.record(Ended("late"), lambda: shown.append("stale"))
        for _ in range(4000):
            if game.gate is not None and game.gate.failed is not None:
                break
            await asyncio.sleep(0.005)
        assert game.gate is not None and game.gate.failed is not None
        assert "stale" not in shown
        owner.give_up(game)

        taken = restore(taker, stored, lambda pid: people[pid])
        assert taken.controls.log.next_idx == 2  # the numbering goes on without a hole
        taken.controls.record(PhaseChanged("verdict"), lambda: shown.append("c"))
        await _committed(shown, 3)
        with first.store.engine.connect() as conn:
            rows = conn.execute(
                select(control_events.c.idx, control_events.c.kind).order_by(control_events.c.idx)
            ).all()
        assert [tuple(r) for r in rows] == [(0, "input"), (1, "choice"), (2, "phase")]
    finally:
        for arena in (owner, taker):
            for live in arena.games.values():
                if live.task is not None:
                    live.task.cancel()
        await asyncio.sleep(0)
        for bridge in (first, second):
            bridge.close()
            bridge.store.close()


def test_every_kind_round_trips_and_an_unknown_kind_is_refused() -> None:
    for event in (Choice("s", 2, "tie"), Ended("turns", "investigator"), PhaseChanged("p")):
        assert event_from(event.kind, event_json(event)) == event
    with pytest.raises(ValueError):
        event_from("nonsense", {})


def test_a_seat_counts_as_away_from_its_last_away_event_until_it_is_back() -> None:
    log = ControlLog()
    log.add(Away("A"), 0, 10.0)
    log.add(Away("B"), 1, 11.0)
    log.add(Back("A"), 1, 12.0)
    log.add(Away("A"), 2, 15.0)
    log.add(Back("B"), 2, 16.0)
    assert log.away_since() == {"A": 15.0}
    assert event_from("away", event_json(Away("A"))) == Away("A")


def test_a_resumed_random_stream_continues_instead_of_restarting() -> None:
    whole = Draws(7)
    drawn = [whole.next().random() for _ in range(5)]
    log = ControlLog()
    partway = Draws(7)
    for _ in range(3):
        partway.next()
    log.add(partway.marker(), after_seq=0)
    resumed = Draws(7, count=log.last_draws("main"))
    assert [resumed.next().random() for _ in range(2)] == drawn[3:]
    assert Draws(7).next().random() == drawn[0] != drawn[3]


def test_messages_and_events_interleave_in_the_order_they_happened() -> None:
    said = [TranscriptMessage(i, "a", str(i), ("a",), "main", 0.0) for i in range(3)]
    log = ControlLog()
    log.add(Choice("a", 1, "1"), after_seq=2)
    log.add(Ended("x"), after_seq=3)
    order = [
        x.text if isinstance(x, TranscriptMessage) else x.event.kind
        for x in interleave(said, log.entries)
    ]
    assert order == ["0", "1", "choice", "2", "ended"]
