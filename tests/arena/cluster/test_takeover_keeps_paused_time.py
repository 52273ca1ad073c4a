"""A game taken over keeps the time its clock stood still while saving was delayed.

The live game's clock stops while its messages cannot be saved (PausableClock, driven by the
commit gate), so a store outage does not eat the people's five minutes. Those seconds are kept
with the game (`games.paused_s`) and restored by the process that takes it over: the people
have exactly the time left they had. Time here is a clock the test moves by hand, so the check
is exact whatever the machine's speed; only the store and the event loop are real.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from arena_fixtures import RULES, engine_setup
from turinglab.arena.core.hub import Arena
from turinglab.arena.core.live import LiveGame
from turinglab.arena.core.participants import Participant
from turinglab.arena.core.store_bridge import ArenaStore
from turinglab.arena.core.takeover import restore
from turinglab.store.database import Store

START = 1_800_000_000.0
TIME_LIMIT_S = float(RULES["time_limit_s"])


class HandClock:
    """Time that moves only when the test says (`advance`); sleepers wake when it is due."""

    def __init__(self) -> None:
        self.t = START
        self._moved: asyncio.Event | None = None

    def now(self) -> float:
        return self.t

    def _event(self) -> asyncio.Event:
        if self._moved is None:
            self._moved = asyncio.Event()
        return self._moved

    async def sleep(self, seconds: float) -> None:
        due = self.t + max(0.0, seconds)
        while self.t < due:
            await self._event().wait()

    def advance(self, seconds: float) -> None:
        self.t += seconds
        moved, self._moved = self._event(), None
        moved.set()

    @asynccontextmanager
    async def hold(self) -> AsyncIterator[None]:
        yield


def _person(pid: str) -> Participant:
    return Participant(id=pid, token=f"token-{pid}", consented=True)


async def _landed(game: LiveGame, arena: Arena) -> int:
    """The store id of `game` once its row has landed (the writer commits within ms)."""
    for _ in range(2000):
        ids = {id(g): gid for gid, g in arena.stored_ids().items()}
        if id(game) in ids:
            return ids[id(game)]
        await asyncio.sleep(0.005)
    raise AssertionError("the game's row never landed")


def _left(game: LiveGame) -> float:
    assert game.deadline is not None
    return game.deadline - game.clock.now()


async def test_a_taken_over_game_keeps_the_seconds_its_clock_stood_still(tmp_path: Path) -> None:
    clock = HandClock()
    setup = engine_setup()
    mode = setup.mode("three-party")
    assert mode is not None and mode.duration_s == TIME_LIMIT_S
    first = ArenaStore(Store(str(tmp_path / "arena.db")), setup, worker="first")
    second = ArenaStore(Store(str(tmp_path / "arena.db")), setup, worker="second")
    owner = Arena(setup, clock=clock, store=first)
    taker = Arena(setup, clock=clock, store=second)
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
        clock.advance(30.0)  # half a minute of play
        # Saving is delayed: a message is handed to the writer and not committed. The commit
        # gate stops the game's clock (at once here, not after its usual second).
        gate = game.gate
        assert gate is not None
        gate.notice_after_s = 0.0
        gate.writing(0)
        for _ in range(1000):  # the gate's check runs on a coming turn of the event loop
            if game.clock.paused:
                break
            await asyncio.sleep(0)
        assert game.clock.paused
        clock.advance(40.0)  # the outage: the game's time stands still
        assert _left(game) == TIME_LIMIT_S - 30.0
        gate.saved(0)  # saving caught up: the clock goes on; the 40 s are kept with the game
        assert not game.clock.paused
        clock.advance(5.0)
        left = _left(game)
        assert left == TIME_LIMIT_S - 35.0
        await first.flush()

        # The owner is lost; another process claims its game and plays it on.
        (stored,) = second.take_over("first")
        assert stored.paused_s == 40.0
        clock.advance(2.0)  # the takeover's own delay counts, as it would have at the owner
        owner.give_up(game)
        taken = restore(taker, stored, lambda pid: people[pid])
        assert taken.id == game.id and taken.started_at == game.started_at
        assert taken.clock.stopped_for == 40.0
        # Exactly the time the people had, less the 2 s the takeover took; without the
        # restored pause it would be 40 s less.
        assert abs(_left(taken) - (left - 2.0)) < 1e-6
        assert isinstance(taken.play, functools.partial)  # it resumes, not ends "server lost"
    finally:
        await _shut_down([owner, taker], [first, second])


async def test_a_game_never_paused_is_taken_over_with_nothing_to_restore(tmp_path: Path) -> None:
    """The column's default: a game (or one of a store from before it) that never stood still."""
    clock = HandClock()
    setup = engine_setup()
    mode = setup.mode("three-party")
    assert mode is not None
    first = ArenaStore(Store(str(tmp_path / "arena.db")), setup, worker="first")
    second = ArenaStore(Store(str(tmp_path / "arena.db")), setup, worker="second")
    owner = Arena(setup, clock=clock, store=first)
    try:
        owner._start_game(
            mode,
            {"interrogator": _person("p-1"), "witness_a": _person("p-2")},
            {"witness_b": "ELIZA"},
            seed=5,
        )
        (game,) = owner.games.values()
        await _landed(game, owner)
        await first.flush()
        (stored,) = second.take_over("first")
        assert stored.paused_s == 0.0
    finally:
        await _shut_down([owner], [first, second])


async def _shut_down(arenas: list[Arena], stores: list[ArenaStore]) -> None:
    for arena in arenas:
        for live in arena.games.values():
            if live.task is not None:
                live.task.cancel()
    await asyncio.sleep(0)
    for bridge in stores:
        bridge.close()
        bridge.store.close()
