"""The study's way through the arena (SPEC §2): N rounds per participant, half as interrogator;
never the same two people twice; one AI witness from each group, in each interrogator's own
random order; after N rounds on to the exit survey. The lobby is driven directly here (every
game "starts" at once), and over real websockets for the survey hand-off."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest

from arena_fixtures import ChatGame, Person, make_setup, running_arena
from turinglab.arena.core.lobby import Lobby
from turinglab.arena.core.modes import ArenaMode, ArenaSettings
from turinglab.arena.core.participants import Participant
from turinglab.arena.core.rounds import RoundBook

GROUPS = ("GPT-4.5-PERSONA", "LLAMA-PERSONA", "GPT-4o-NO-PERSONA", "ELIZA")
SEATS = {"seat_left": "ch-left", "seat_right": "ch-right"}


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def now(self) -> float:
        return self.t


def three_party(groups: tuple[str, ...] = GROUPS) -> ArenaMode:
    game = ChatGame("three-party-test", SEATS)
    return ArenaMode("three-party", "Three-party", game, "interrogator", SEATS, groups)


class Study:
    """A lobby whose games start (and, for the test, end) the moment people are seated."""

    def __init__(self, rounds: int = 8, seed: int = 3, max_wait_s: float = 300.0) -> None:
        self.clock = Clock()
        self.games: list[dict[str, Any]] = []
        self.timed_out: list[str] = []
        settings = ArenaSettings(rounds=rounds, seed=seed, max_wait_s=max_wait_s)
        self.lobby = Lobby(settings, self.clock, self._start, self._out)  # type: ignore[arg-type]

    def _start(self, mode: ArenaMode, people: dict[str, Participant], ai: dict, seed: int) -> None:
        roles = {seat: p.id for seat, p in people.items()}
        self.games.append({"judge": roles.pop(mode.judge), "witnesses": roles, "ai": ai})

    def _out(self, person: Participant, waited: float) -> None:
        self.timed_out.append(person.id)


def play_until_stuck(study: Study, people: list[Participant], mode: ArenaMode) -> None:
    """Everybody who has rounds left queues again after each game, until nobody can be matched."""
    while True:
        before = len(study.games)
        for p in people:
            if not study.lobby.rounds.done(p.id) and study.lobby.waited(p) is None:
                study.lobby.join(p, mode)
        if len(study.games) == before:
            return


def test_roles_are_balanced_over_eight_rounds_and_no_pair_meets_twice() -> None:
    study, mode = Study(), three_party()
    people = [Participant(id=f"p-{i:02d}", token=f"t{i}") for i in range(16)]
    play_until_stuck(study, people, mode)

    roles: Counter[tuple[str, str]] = Counter()
    pairs: list[frozenset[str]] = []
    for g in study.games:
        (witness,) = g["witnesses"].values()
        roles[(g["judge"], "interrogator")] += 1
        roles[(witness, "witness")] += 1
        pairs.append(frozenset((g["judge"], witness)))
    assert len(pairs) == len(set(pairs)), "two people were matched twice"
    for p in people:  # nobody over a quota: at most 4 of each role
        assert roles[(p.id, "interrogator")] <= 4 and roles[(p.id, "witness")] <= 4
    finished = [p for p in people if study.lobby.rounds.done(p.id)]
    for p in finished:
        assert (roles[(p.id, "interrogator")], roles[(p.id, "witness")]) == (4, 4)
    # Nobody is left waiting beside a possible partner: whoever is stuck has met, or cannot
    # take a role opposite, everybody else still waiting (the greedy end of a closed group).
    left = [p.id for p in people if not study.lobby.rounds.done(p.id)]
    for a in left:
        for b in left:
            if a < b:
                met = frozenset((a, b)) in study.lobby.met
                assert met or study.lobby.rounds.roles(a, b) is None, (a, b)
    assert len(finished) >= 12, f"only {len(finished)} of 16 played all 8 rounds"
    # Finished people are not matched again: no game beyond 8 per person.
    assert max(study.lobby.rounds.played(p.id) for p in people) == 8


def test_both_roles_open_draws_either_order() -> None:
    firsts = set()
    for seed in range(12):
        book = RoundBook(8, random.Random(seed))
        firsts.add(book.roles("a", "b"))
    assert firsts == {("a", "b"), ("b", "a")}


def test_quota_decides_the_role_when_one_side_is_full() -> None:
    book = RoundBook(8, random.Random(0))
    for _ in range(4):
        book.record("a", "interrogator")
    assert all(book.roles("a", "b") == ("b", "a") for _ in range(20))
    for _ in range(4):
        book.record("b", "interrogator")
    assert book.roles("a", "b") is None  # both may only witness now: no match between them


def test_each_interrogator_meets_every_group_once_in_their_own_order() -> None:
    # 12 rounds: 6 as interrogator, so the groups cycle: 4 in one order, then a fresh order.
    study, mode = Study(rounds=12), three_party()
    people = [Participant(id=f"p-{i:02d}", token=f"t{i}") for i in range(20)]
    play_until_stuck(study, people, mode)
    orders: dict[str, list[str]] = {}
    for g in study.games:
        (group,) = g["ai"].values()  # three-party with a person witness: one AI seat
        orders.setdefault(g["judge"], []).append(group)
    full = {pid: seq for pid, seq in orders.items() if len(seq) == 6}
    assert len(full) >= 15
    for seq in full.values():
        assert sorted(seq[:4]) == sorted(GROUPS)  # each group exactly once
        assert len(set(seq[4:])) == 2 and set(seq[4:]) <= set(GROUPS)  # the next cycle
    assert len({tuple(seq[:4]) for seq in full.values()}) > 5  # orders differ between people


def test_a_lone_person_meets_ai_only_while_they_may_interrogate() -> None:
    game = ChatGame("two-party-test", {"seat_only": "ch-only"})
    mode = ArenaMode("two-party", "Two", game, "interrogator", {"seat_only": "ch-only"}, ("E",))
    study = Study(rounds=2, max_wait_s=60)
    study.lobby.settings = study.lobby.settings.model_copy(update={"ai_after_s": 5.0})
    p = Participant(id="p-alone", token="t")
    study.lobby.join(p, mode)
    study.clock.t = 5.0
    study.lobby.tick()
    assert [g["judge"] for g in study.games] == ["p-alone"]
    study.lobby.join(p, mode)  # interrogator quota (1 of 2 rounds) used: must wait for a person
    study.clock.t = 70.0
    study.lobby.tick()
    assert len(study.games) == 1 and study.timed_out == ["p-alone"]


def test_rounds_setting_is_validated() -> None:
    with pytest.raises(ValueError, match="rounds"):
        ArenaSettings(rounds=0)


async def test_after_the_last_round_the_participant_is_sent_to_the_survey() -> None:
    with running_arena(make_setup(ai_after_s=0, rounds=1)) as (base, _app):
        p = Person(base)
        status = await p.connect()
        assert status["rounds"] == {"played": 0, "total": 1}
        await p.send(type="join", mode="two-party", consent=True)
        snap = await p.until("game")
        assert snap["rounds"] == {"played": 1, "total": 1}  # "round 1 of 1" on the page
        await p.send(type="message", channel="A", text="hello")
        await p.until("message", sender="them")
        await p.send(type="end")  # a verdict only after the end
        await p.send(type="verdict", choice="ai", confidence=80, reason="fast")
        await p.until("reveal")
        await p.send(type="leave")
        assert (await p.until("status"))["state"] == "rounds-done"
        await p.send(type="join", mode="two-party", consent=True)  # no ninth game
        assert (await p.until("status"))["state"] == "rounds-done"
        await p.send(type="join", mode="practice", consent=True)  # practice is still open
        practice = await p.until("game")
        assert practice["practice"] and practice["rounds"] is None
        await p.close()
