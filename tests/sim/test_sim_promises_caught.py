"""The checks of sim/promises.py see real bugs: each is put into the arena with monkeypatch and
a seeded schedule that keeps every promise on main (test_sim_arena.py, the seeds there) then
reports it:

* departures: the arena counting a person gone 30 s later than its grace says;
* rounds: an abandoned game's rounds not given back (the books say more than the store counts)
  and the store's recount before "rounds-done", which would mend it, skipped;
* the reveal: a game's snapshot titled with the AI witness's name;
* a dead process's sockets forgotten only by the survivor that unlists it (three processes,
  people giving up on broken pages): a partner told late;
* a stale owner: a process woken from SIGSTOP that neither gives up the games taken from it
  nor is fenced by the store writes rows to them (with the store's fencing alone it writes
  nothing: that schedule keeps the promise).
"""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import Connection, select

from turinglab.arena.cluster.cluster_presence import ClusterPresence
from turinglab.arena.cluster.cluster_routes import ClusterRoutes
from turinglab.arena.cluster.shared_rounds import SharedRounds
from turinglab.arena.core import hub
from turinglab.arena.core.abandon import AbandonWatch
from turinglab.arena.core.live import LiveGame
from turinglab.sim.run import schedule
from turinglab.store import control_events, fencing
from turinglab.store.schema import games

pytestmark = pytest.mark.slow

CRASHES, PAUSES = frozenset({"crash"}), frozenset({"pause"})
DEPARTURE = 5  # someone abandons a game (crash schedule); told 12.4 s later on main
TAKEN_FROM_A_PAUSED_OWNER = 27  # pause schedule: the owner sleeps through its takeover


def _found(seed: int, faults: frozenset[str]) -> set[str]:
    return {v["invariant"] for v in schedule(seed, 2, faults)["violations"]}


def test_a_departure_counted_late_is_told_late(monkeypatch: pytest.MonkeyPatch) -> None:
    init = AbandonWatch.__init__

    def slow(self: AbandonWatch, grace_s: float, **kw: Any) -> None:
        init(self, grace_s + 30.0, **kw)

    monkeypatch.setattr(AbandonWatch, "__init__", slow)
    assert "departure-told-late" in _found(DEPARTURE, CRASHES)


def test_rounds_not_given_back_are_miscounted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hub, "give_rounds_back", lambda game, book: False)
    # and the store's recount before a "rounds-done" (which mends exactly that) skipped

    async def no_recount(self: SharedRounds, run: str, pid: str, book: Any) -> bool:
        return False

    monkeypatch.setattr(SharedRounds, "recount", no_recount)
    assert "rounds-miscounted" in _found(DEPARTURE, CRASHES)


def test_the_ai_named_before_the_reveal_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    snapshot = LiveGame.snapshot

    def titled(self: LiveGame, participant: Any) -> Any:
        return snapshot(self, participant).model_copy(update={"title": "BOT (scripted)"})

    monkeypatch.setattr(LiveGame, "snapshot", titled)
    assert "kind-shown-before-reveal" in _found(3, CRASHES)


def test_a_woken_owner_that_is_not_fenced_writes_and_is_found(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def keeps_playing(self: ClusterRoutes, *_: object) -> None:
        return None

    # Neither at its next registration nor on the new owner's frames or its people's inputs.
    monkeypatch.setattr(ClusterRoutes, "_give_up_taken", keeps_playing)
    monkeypatch.setattr(ClusterRoutes, "_give_up_if_taken", keeps_playing)
    assert "stale-owner-wrote" not in _found(TAKEN_FROM_A_PAUSED_OWNER, PAUSES)  # fenced
    held = fencing.held_games

    def any_epoch(conn: Connection, epochs: dict[int, int]) -> dict[int, int]:
        now = dict(conn.execute(select(games.c.id, games.c.owner_epoch)).all())
        return held(conn, {g: now.get(g, e) for g, e in epochs.items()})

    monkeypatch.setattr(fencing, "held_games", any_epoch)
    monkeypatch.setattr(control_events, "held_games", any_epoch)
    assert "stale-owner-wrote" in _found(TAKEN_FROM_A_PAUSED_OWNER, PAUSES)


def test_a_killed_process_s_sockets_forgotten_only_by_its_claimer_is_found(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Bug 1 of benchmarks/sim_bugs (07796f9 reverted): with three processes, only the survivor
    that unlists a dead process forgets the sockets it held; the game's owner, another one,
    counts a person who gave up there as present, and their partner is told late. Seed 59 of
    the give-up schedules keeps every promise on main (tests/sim/test_sim_sweep.py)."""

    async def remembers(self: ClusterPresence) -> None:
        return None

    monkeypatch.setattr(ClusterPresence, "_forget_dead_holders", remembers)
    found = schedule(59, 3, frozenset({"crash", "redis-restart"}), {"give_up_p": 0.5})
    assert "departure-told-late" in {v["invariant"] for v in found["violations"]}
