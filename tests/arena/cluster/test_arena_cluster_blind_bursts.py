"""Blind matching across processes under bursty arrivals (arena/cluster/shared_blind.py), on a real
Redis: two SharedBlind processes on one namespace and one simulated clock, people arriving in
bursts of 2–10 within seconds (bench/witness_supply.py's `bursts`), each joining on either
process for every round (four each), some closing their page while waiting and joining again
on the other process.

* The join-to-game wait is independent of the witness kind (two-sample KS, α = 0.01, at least
  1,000 interrogations), nobody times out, and every game seats each person once.
* Whoever joins again (here, on the other process, or after Redis forgot them) keeps their
  draw for the round: the same wait and witness kind. Two people who both drew "person" and
  join within the window meet each other, whichever process each joins or rejoins on — never
  two interrogators left to meet AIs while the other waited.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import pytest
import redis.asyncio as aioredis
from scipy.stats import ks_2samp

from test_arena_cluster_blind import mode_named
from test_arena_multiprocess import alive_namespace
from test_arena_timing_leaks import ManualClock
from turinglab.arena.cluster.shared_blind import SharedBlind, draw_key
from turinglab.arena.cluster.shared_rounds import SharedRounds
from turinglab.arena.core.match_design import MatchDesign
from turinglab.arena.core.modes import ArenaMode, ArenaSettings
from turinglab.arena.core.rounds import RoundBook
from turinglab.bench.witness_supply import bursts

RUN = "run-b"
ALPHA = 0.01
STEP_S = 0.5  # the arena's tick
DESIGN = MatchDesign(human_witness_share=0.5, wait_min_s=5, wait_max_s=45)


@pytest.fixture
async def namespace() -> AsyncIterator[tuple[aioredis.Redis, str]]:
    async with alive_namespace("P0", "P1") as made:
        yield made


@dataclass
class Game:
    wait_s: float  # the interrogator's, from their last join
    person: bool  # a person witness


@dataclass
class Study:
    """Two processes P0 and P1 blind-matching one study's people on a simulated clock."""

    client: object
    prefix: str
    rounds: int = 4
    clock: ManualClock = field(default_factory=ManualClock)
    games: list[Game] = field(default_factory=list)
    seated: list[list[str]] = field(default_factory=list)
    timed_out: int = 0
    excused: int = 0
    joined: dict[str, float] = field(default_factory=dict)
    playing_until: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.books = SharedRounds(self.client, self.prefix, met_ttl_s=3600)  # type: ignore[arg-type]
        quota = DESIGN.witness_rounds(self.rounds)
        self.rounds_of = [RoundBook(self.rounds, random.Random(i), quota) for i in (0, 1)]
        self.procs = [
            SharedBlind(
                self.client,  # type: ignore[arg-type]
                self.books,
                f"P{i}",
                self.clock,
                random.Random(i),
                self._seat,
                self._timed_out,
                self._short,
            )
            for i in (0, 1)
        ]

    async def _seat(self, _mode: ArenaMode, pids: list[str]) -> None:
        assert not any(p in self.playing_until for p in pids), pids  # nobody seated twice
        self.seated.append(pids)
        self.games.append(Game(self.clock.t - self.joined[pids[0]], len(pids) == 2))
        for p in pids:
            self.playing_until[p] = self.clock.t + 240.0

    def _timed_out(self, _pid: str, _waited: float) -> None:
        self.timed_out += 1

    def _short(self, _pid: str, _n: int) -> None:
        self.excused += 1

    async def join(self, pid: str, i: int, settings: ArenaSettings) -> bool:
        self.joined[pid] = self.clock.t
        return await self.procs[i].join(
            RUN, pid, mode_named("two-party"), settings, self.rounds_of[i]
        )

    async def tick(self) -> None:
        for proc, book in zip(self.procs, self.rounds_of, strict=True):
            await proc.tick(RUN, book)

    def waiting(self) -> bool:
        return any(p.waiting for p in self.procs)


async def run_study(
    client: object, prefix: str, people: int, seed: int, *, until_due: bool = False
) -> Study:
    """`people` arrive in bursts and play four rounds each, joining again after each game on
    a process drawn at random; one join in ten is followed, 1–3 s later, by the page closing
    and joining again on the other process."""
    rng = random.Random(seed)
    settings = ArenaSettings(design=DESIGN, rounds=4, max_wait_s=300, seed=seed)
    study = Study(client, prefix)
    if until_due:
        for proc in study.procs:
            _look_until_due(proc)
    arrivals = [(t, f"s{seed}-p{k}") for k, t in enumerate(bursts(people, rng))]
    rejoins: list[tuple[float, str]] = []
    where: dict[str, int] = {}
    while arrivals or rejoins or study.waiting() or study.playing_until:
        study.clock.t += STEP_S
        now = study.clock.t
        due = [pid for t, pid in arrivals if t <= now]
        arrivals = [(t, pid) for t, pid in arrivals if t > now]
        for pid, until in list(study.playing_until.items()):
            if until <= now:
                del study.playing_until[pid]
                due.append(pid)
        for pid in due:
            where[pid] = rng.randrange(2)
            if await study.join(pid, where[pid], settings) and rng.random() < 0.1:
                rejoins.append((now + rng.uniform(1, 3), pid))
        for t, pid in [r for r in rejoins if r[0] <= now]:
            rejoins.remove((t, pid))
            # Still waiting (not seated meanwhile by another process, which their own
            # learns only later: a page in a game is refused a join, cluster.py): closed, then
            # joined again.
            if pid in study.procs[where[pid]].waiting and pid not in study.playing_until:
                await study.procs[where[pid]].leave(pid)
                where[pid] = 1 - where[pid]
                await study.join(pid, where[pid], settings)
        await study.tick()
        assert now < 100_000, "the study did not settle"
    return study


def _ks(games: list[Game]) -> tuple[float, int, int]:
    person = [g.wait_s for g in games if g.person]
    ai = [g.wait_s for g in games if not g.person]
    return float(ks_2samp(person, ai).pvalue), len(person), len(ai)


async def test_bursts_across_processes_say_nothing_about_the_witness(namespace: tuple) -> None:
    games: list[Game] = []
    for seed in (1, 2, 3):
        study = await run_study(*namespace, people=150, seed=seed)
        assert study.timed_out == 0
        games += study.games
        await _everyone_done(study, *namespace)
    p, person, ai = _ks(games)
    assert len(games) >= 1000 and person >= 100 and ai >= 100, (person, ai)
    # Seeds 1-3: p = 0.53 over 439 person and 911 AI witnesses.
    assert p > ALPHA, f"waits differ by witness kind across processes: KS p = {p:.3g}"
    assert all(5 <= g.wait_s <= 45 + STEP_S for g in games)  # the drawn range, either kind


def _look_until_due(proc: SharedBlind) -> None:
    """The earlier design: an interrogator looks for a witness until their own due time."""
    draw = proc._draw

    def late(*args: Any) -> Any:
        waiting = draw(*args)
        waiting.plan.window_end = waiting.plan.due
        return waiting

    proc._draw = late  # type: ignore[method-assign]


async def test_looking_until_the_due_time_is_told_apart(namespace: tuple) -> None:
    """The same harness is not blind to a leak: the earlier rule's waits differ by kind."""
    games: list[Game] = []
    for seed in (1, 2, 3):
        games += (await run_study(*namespace, people=150, seed=seed, until_due=True)).games
    p, person, ai = _ks(games)
    assert person >= 100 and ai >= 100
    assert p < ALPHA / 10, f"expected a leak: KS p = {p:.3g}"  # 2e-4 (seeds 1-3)


async def _everyone_done(study: Study, client: aioredis.Redis, prefix: str) -> None:
    """Each person's four rounds: seated in one game per round played, the rest excused."""
    games = Counter(p for game in study.seated for p in game)
    for pid in study.joined:
        book = await client.hgetall(f"{prefix}book:{RUN}:{pid}")
        i, w, x = (int(book.get(k, 0)) for k in "iwx")
        assert (i + w, i + w + x) == (games[pid], 4), (pid, book, games[pid])


async def test_who_joins_again_keeps_their_draw(namespace: tuple) -> None:
    """Closed and joined again on the other process, joined on another process while still
    waiting on the first, or a join sent twice: the same wait and witness kind for the round;
    a new round, a new draw."""
    client, prefix = namespace
    study = Study(client, prefix)
    settings = ArenaSettings(design=DESIGN, rounds=4, seed=3)
    draws = []
    for i in (0, 1, 1, 0):
        await study.join("r", i, settings)
        waiting = study.procs[i].waiting["r"]
        draws.append((round(waiting.plan.due - waiting.since, 9), waiting.plan.wants))
        study.clock.t += 2.0
        if i == 1:
            continue  # sent twice on P1: kept as it is
        await study.procs[i].leave("r")
    assert len(set(draws)) == 1, draws
    book = study.rounds_of[0]
    key = draw_key("", settings, RUN, "r", book)
    assert DESIGN.draw_for(key) == (pytest.approx(draws[0][0]), draws[0][1])
    # Another secret, another draw: nobody works their draw out from their id.
    assert DESIGN.draw_for(draw_key("other", settings, RUN, "r", book)) != DESIGN.draw_for(key)
    book.progress("r").interrogated += 1  # the next round: drawn anew
    assert DESIGN.draw_for(draw_key("", settings, RUN, "r", book)) != DESIGN.draw_for(key)


async def test_two_who_drew_a_person_meet_whoever_rejoins_where(namespace: tuple) -> None:
    """Both drew "person" (share 1): within the window one offers themselves, the other takes
    them, though the first closed and joined again on the other process meanwhile."""
    client, prefix = namespace
    design = MatchDesign(human_witness_share=1.0, wait_min_s=5, wait_max_s=20)
    settings = ArenaSettings(design=design, rounds=4, seed=5)
    for k in range(20):  # pairs with every kind of draw of the wait
        study = Study(client, prefix)
        a, b = f"a{k}", f"b{k}"
        await study.join(a, 0, settings)
        await study.tick()  # a: offered on P0
        study.clock.t += 0.5
        await study.procs[0].leave(a)  # a's page closed ...
        await study.join(a, 1, settings)  # ... and joined again, on P1
        await study.join(b, k % 2, settings)
        while study.waiting():
            await study.tick()
            study.clock.t += STEP_S
        assert sorted(map(sorted, study.seated)) == [sorted([a, b])], study.seated
