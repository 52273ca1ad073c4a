"""Timing must not give the witness away: over many scripted games, what an interrogator can
time — the wait to a game, and a witness's typing frames — is distributed alike for AI and
human witnesses (two-sample Kolmogorov–Smirnov, p > 0.01), while the arena's old behaviour, at
the same sample size, is told apart at p < 1e-6.

Everything runs on simulated time and fixed seeds, so the p values are the same on every run.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field

import aiohttp
from scipy.stats import ks_2samp

from arena_fixtures import Person, make_setup, running_arena
from turinglab.arena.lobby import Lobby
from turinglab.arena.matchmaking_wait import MatchDesign
from turinglab.arena.modes import ArenaMode, ArenaSettings
from turinglab.arena.sessions import Participant

N = 120  # games per witness kind compared
SAME = 0.01  # above this the two distributions are not told apart
APART = 1e-6  # the old behaviour must be told apart at least this clearly


# ---- (a) wait to a game -----------------------------------------------------------------------


class ManualClock:
    def __init__(self) -> None:
        self.t = 0.0

    def now(self) -> float:
        return self.t


@dataclass
class Waits:
    """Interrogators' waits from joining to their game, by witness kind."""

    ai: list[float] = field(default_factory=list)
    person: list[float] = field(default_factory=list)
    fallbacks: int = 0

    def ks(self) -> float:
        """KS p value of the first N waits of each kind."""
        assert len(self.ai) >= N and len(self.person) >= N, (len(self.ai), len(self.person))
        return float(ks_2samp(self.ai[:N], self.person[:N]).pvalue)


def simulate_waits(settings: ArenaSettings, arrivals: int, seed: int) -> Waits:
    """People arrive at random (mean gap 12 s) to play one two-party game each; the lobby
    ticks every 0.25 s of simulated time, as the server's ticker does."""
    mode: ArenaMode = next(m for m in make_setup().modes if m.name == "two-party")
    clock = ManualClock()
    joined: dict[str, float] = {}
    waits = Waits()

    def start(
        _mode: ArenaMode, seats: dict[str, Participant], _ai: dict[str, str], _s: int
    ) -> None:
        judge = seats[mode.judge]
        wait = clock.t - joined[judge.id]
        (waits.person if len(seats) == 2 else waits.ai).append(wait)

    lobby = Lobby(settings, clock, start, lambda _p, _w: None)  # type: ignore[arg-type]
    rng = random.Random(seed)
    next_arrival, n = rng.expovariate(1 / 12), 0
    while n < arrivals or lobby.waiting:
        while n < arrivals and next_arrival <= clock.t:
            person = Participant(id=f"p-{n}", token=f"t-{n}")
            joined[person.id] = clock.t
            lobby.join(person, mode)
            n += 1
            next_arrival += rng.expovariate(1 / 12)
        lobby.tick()
        clock.t += 0.25
    if lobby.blind is not None:
        waits.fallbacks = lobby.blind.fallbacks
    return waits


def test_the_wait_to_a_game_says_nothing_about_the_witness() -> None:
    design = MatchDesign(human_witness_share=0.5, wait_min_s=5, wait_max_s=30)
    waits = simulate_waits(ArenaSettings(design=design, seed=1), arrivals=1200, seed=7)
    p = waits.ks()
    assert p > SAME, f"waits differ by witness kind: KS p = {p:.3g}"
    # Every interrogator waits within the design's bounds, whoever the witness.
    assert all(5 <= w <= 30.25 for w in waits.ai + waits.person)


def test_open_matching_gives_the_witness_away_at_that_sample_size() -> None:
    """Matched at once → a person; alone for ai_after_s → an AI (the arena before designs)."""
    waits = simulate_waits(ArenaSettings(ai_after_s=20, seed=1), arrivals=1200, seed=7)
    p = waits.ks()
    assert p < APART, f"open matching was expected to leak: KS p = {p:.3g}"


def test_the_design_share_of_human_witnesses_holds() -> None:
    """Half of the interrogations were drawn to have a person as witness; those who found no
    witness waiting at their time met an AI and are counted as fallbacks."""
    design = MatchDesign(human_witness_share=0.5, wait_min_s=5, wait_max_s=30)
    waits = simulate_waits(ArenaSettings(design=design, seed=2), arrivals=1200, seed=3)
    games = len(waits.person) + len(waits.ai)
    drawn = (len(waits.person) + waits.fallbacks) / games
    assert 0.45 < drawn < 0.55, drawn
    assert waits.fallbacks < 0.25 * games, (waits.fallbacks, games)


async def test_people_who_join_together_are_held_for_their_drawn_wait() -> None:
    """Over real websockets: a design with a fixed 1 s wait; two people who join at once each
    get their game no sooner than that, whoever they meet, and the waiting page counts nothing."""
    design = MatchDesign(human_witness_share=1.0, wait_min_s=1.0, wait_max_s=1.0)
    with running_arena(make_setup(design=design, seed=4)) as (base, _app):
        async with aiohttp.ClientSession() as http, http.get(base + "/") as r:
            page = await r.text()
        assert 'id="waited"' not in page  # no seconds counter on the waiting screen
        people = [Person(base), Person(base)]
        for p in people:
            await p.connect()
        joined = time.monotonic()
        for p in people:
            await p.send(type="join", mode="two-party", consent=True)
        for p in people:
            await p.until("game", timeout=15)
            assert time.monotonic() - joined >= 0.9  # the server's clock, give or take a tick
        for p in people:
            await p.close()
