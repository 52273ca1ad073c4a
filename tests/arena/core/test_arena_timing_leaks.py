"""Timing must not give the witness away: over many scripted games, what an interrogator can
time — the wait to a game, and a witness's typing frames — is distributed alike for AI and
human witnesses (two-sample Kolmogorov–Smirnov, p > 0.01), while the arena's old behaviour, at
the same sample size, is told apart at p < 1e-6.

Everything runs on simulated time and fixed seeds, so the p values are the same on every run.
Waits: 1,200 arrivals through the lobby (the first 120 games of each kind compared; every
arrival process a study meets: test_arena_blind_arrivals.py). Typing: 60
two-party games per witness kind through `LiveGame` and the engine's game, an interrogator's
frames timed as sent; the scripted people read, think and type key by key (`person_types`).
"""

from __future__ import annotations

import asyncio
import itertools
import math
import random
import time
from dataclasses import dataclass, field

import aiohttp
from scipy.stats import ks_2samp

from arena_fixtures import Person, make_setup, running_arena
from turinglab.agents.eliza import ElizaAgent
from turinglab.arena.core import frames as F
from turinglab.arena.core.live import LiveGame
from turinglab.arena.core.lobby import Lobby
from turinglab.arena.core.matchmaking_wait import MatchDesign
from turinglab.arena.core.modes import ArenaMode, ArenaSettings
from turinglab.arena.core.participants import Participant
from turinglab.arena.modes.engine_modes import interrogation_mode
from turinglab.games.clock import Clock, SimulatedClock
from turinglab.games.two_party import TwoPartyExperiment
from turinglab.games.typing_timeline import FINISH_CHARS, ShownTyping, TypingPlan

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
    witness: list[float] = field(default_factory=list)  # witnesses' waits, for the record
    fallbacks: int = 0
    timed_out: int = 0

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
        waits.witness += [clock.t - joined[p.id] for s, p in seats.items() if s != mode.judge]

    def timed_out(_p: Participant, _w: float) -> None:
        waits.timed_out += 1

    lobby = Lobby(settings, clock, start, timed_out)  # type: ignore[arg-type]
    if lobby.blind is not None:
        lobby.blind.secret = f"sim:{seed}"  # the same draws on every run
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
    """(Every arrival process a study meets, with repeat rounds: test_arena_blind_arrivals.py.)
    A 10 s match window: people arriving within it of each other may be paired."""
    design = MatchDesign(human_witness_share=0.5, wait_min_s=10, wait_max_s=30)
    waits = simulate_waits(ArenaSettings(design=design, seed=1), arrivals=1200, seed=7)
    p = waits.ks()
    assert p > SAME, f"waits differ by witness kind: KS p = {p:.3g}"
    # Every interrogator waits within the design's bounds, whoever the witness.
    assert all(10 <= w <= 30.25 for w in waits.ai + waits.person)


def test_open_matching_gives_the_witness_away_at_that_sample_size() -> None:
    """Matched at once → a person; alone for ai_after_s → an AI (the arena before designs)."""
    waits = simulate_waits(ArenaSettings(ai_after_s=20, seed=1), arrivals=1200, seed=7)
    p = waits.ks()
    assert p < APART, f"open matching was expected to leak: KS p = {p:.3g}"


def test_the_design_decides_the_witness_and_nobody_waits_past_their_draw() -> None:
    """A drawn "person" takes a witness waiting within their match window, or offers
    themselves as one; whoever is alone when the window ends meets an AI (a fallback when
    drawn "person"); no interrogator waits longer than the longest wait, no witness longer
    than that after the window in which they were taken."""
    design = MatchDesign(human_witness_share=0.5, wait_min_s=10, wait_max_s=30)
    waits = simulate_waits(ArenaSettings(design=design, seed=2), arrivals=1200, seed=3)
    games = len(waits.person) + len(waits.ai)
    witnesses = len(waits.person)  # each person game took one drawn "person" as its witness
    drawn = (len(waits.person) + waits.fallbacks + witnesses) / (games + witnesses)
    assert 0.45 < drawn < 0.55, drawn
    assert len(waits.person) > 0.1 * games  # people do meet people
    assert max(waits.ai + waits.person) <= 30.25 and waits.timed_out == 0
    assert max(waits.witness) <= 10 + 30.25


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


# ---- (b) typing frames -------------------------------------------------------------------------

QUESTIONS = [
    "hi",
    "where are you from?",
    "what did you have for breakfast today?",
    "be honest, are you a bot or a person typing this?",
    "what's the weather like where you are right now?",
    "tell me about the last film you watched and whether you liked it",
]
REPLIES = [
    "hey there, how are you doing",
    "leeds, and you? never been anywhere else really",
    "toast and coffee as usual lol",
    "a person obviously, why would you even ask that",
    "rainy and grey, as it always is here",
]
EXCHANGES = 4  # interrogator messages per game
TYPING_N = 200  # message→first-typing delays compared per witness kind
GAPS_N = 400  # typing-frame intervals compared per witness kind


def two_party_mode() -> ArenaMode:
    """The engine's two-party game with ELIZA, AI typing shown as in a live study."""
    cfg = TwoPartyExperiment.model_validate(
        {"game": "two-party", "interrogators": ["x"], "typing_delay": True,
         "ai_witnesses": [{"agent": "eliza", "persona": "none"}], "time_limit_s": 600}
    )  # fmt: skip
    return interrogation_mode("two-party", "Two-party", cfg)


async def person_types(
    game: LiveGame, witness: Participant, question: str, rng: random.Random, clock: Clock
) -> None:
    """A person answering: reads and thinks (the paper's reading + thinking time), then types
    key by key — bursts with pauses — while the browser sends a typing frame on a key at most
    every 2 s (arena.js), then sends their reply, typed at about 0.3 s per character."""
    reading = 1.0 + rng.gauss(0.03, 0.003) * len(question) + rng.gammavariate(2.5, 0.25)
    reply = rng.choice(REPLIES)
    start = clock.now() + reading
    end = start + rng.gauss(0.3, 0.03) * len(reply)
    key, last_frame = start, -1e9
    while key < end:
        await clock.sleep(key - clock.now())
        if key - last_frame > 2.0:
            game.handle(witness, F.Typing(type="typing", channel="A"))
            last_frame = key
        key += rng.lognormvariate(math.log(0.16), 0.45)
        if rng.random() < 0.05:  # stops to think
            key += rng.lognormvariate(math.log(1.2), 0.8)
    await clock.sleep(end - clock.now())
    game.handle(witness, F.SendMessage(type="message", channel="A", text=reply))


@dataclass
class Typings:
    """What an interrogator can time: message → first typing frame, and frame to frame."""

    first: list[float] = field(default_factory=list)
    gaps: list[float] = field(default_factory=list)

    def add(self, frames: list[tuple[float, dict[str, str]]]) -> None:
        sent, last = None, None
        for at, frame in frames:
            if frame["type"] == "message" and frame["sender"] == "you":
                sent, last = at, None
            elif frame["type"] == "message" and frame["sender"] == "them":
                sent = last = None
            elif frame["type"] == "typing" and sent is not None:
                if last is None:
                    self.first.append(at - sent)
                else:
                    self.gaps.append(at - last)
                last = at


async def play_typing_game(mode: ArenaMode, human: bool, seed: int, into: Typings) -> None:
    """One two-party game on simulated time: a scripted interrogator sends EXCHANGES messages,
    each after the witness's reply and a pause; every frame it is sent is timed."""
    clock = SimulatedClock()
    rng = random.Random(seed)
    judge, person = Participant("p-judge", "t-judge"), Participant("p-witness", "t-witness")
    seats = {"interrogator": f"person:{judge.id}"}
    seats["witness"] = f"person:{person.id}" if human else mode.ai_agents[0]
    assert mode.spec_for is not None
    spec = mode.spec_for(seed, seats, seed)
    people = {"interrogator": judge} | ({"witness": person} if human else {})
    ended = asyncio.Event()
    game = LiveGame(mode, spec, people, {"eliza": ElizaAgent("eliza")}, display_names={},
                    clock=clock, on_finish=lambda _g: ended.set())  # fmt: skip
    frames: list[tuple[float, dict[str, str]]] = []
    replied = asyncio.Event()
    typists: set[asyncio.Task[None]] = set()

    def to_judge(frame: F.ServerFrame) -> None:
        frames.append((clock.now(), F.dump(frame)))
        if isinstance(frame, F.Message) and frame.sender == "them":
            replied.set()

    def to_witness(frame: F.ServerFrame) -> None:
        if isinstance(frame, F.Message) and frame.sender == "them":
            typists.add(asyncio.ensure_future(person_types(game, person, frame.text, rng, clock)))

    game.views["interrogator"].outlets.add(to_judge)
    if human:
        game.views["witness"].outlets.add(to_witness)
    game.start()
    for n in range(EXCHANGES):
        replied.clear()
        text = QUESTIONS[(seed + n) % len(QUESTIONS)]
        game.handle(judge, F.SendMessage(type="message", channel="A", text=text))
        await replied.wait()
        await clock.sleep(rng.uniform(3, 12))  # reads the reply, types the next question
    game.handle(judge, F.EndGame(type="end"))
    game.handle(judge, F.Verdict(type="verdict", choice="ai", confidence=50))
    await ended.wait()
    into.add(frames)


async def typings(human: bool, games: int) -> Typings:
    mode, out = two_party_mode(), Typings()
    for seed in range(games):
        await play_typing_game(mode, human, 1000 * human + seed, out)
    return out


async def test_ai_typing_frames_are_timed_like_a_persons() -> None:
    """Measured with this harness against the arena before AI typing timelines (commit
    1242a0a: typing shown once the reply existed, then pulsed): ELIZA's first frame came 0.0 s
    after the message every time, its frames exactly 2.00 s apart — KS p = 1.9e-119 (first
    frame, n = 200) and p = 1.1e-239 (intervals, n = 400) against people. Now: p = 0.87 and
    0.28 (seeded: the same on every run; 0.96 and 0.58 before each reply's typing was drawn
    from its own keyed generator, games/typing_delay.py `reply_draw`)."""
    ai, person = await typings(False, 60), await typings(True, 60)
    for got in (ai, person):
        assert len(got.first) >= TYPING_N and len(got.gaps) >= GAPS_N, (
            len(got.first), len(got.gaps))  # fmt: skip
    p_first = ks_2samp(ai.first[:TYPING_N], person.first[:TYPING_N]).pvalue
    p_gaps = ks_2samp(ai.gaps[:GAPS_N], person.gaps[:GAPS_N]).pvalue
    assert p_first > SAME, f"message→first typing frame differs: KS p = {p_first:.3g}"
    assert p_gaps > SAME, f"typing-frame intervals differ: KS p = {p_gaps:.3g}"
    # Nothing machine-like: the first frame comes after a reading pause; intervals vary.
    assert min(ai.first) > 1.0 and len({round(g, 3) for g in ai.gaps}) > GAPS_N // 2
    # The same test tells the old timeline (as measured above) apart at these sample sizes.
    old_first, old_gaps = [0.0] * TYPING_N, [2.0] * GAPS_N
    assert ks_2samp(old_first, person.first[:TYPING_N]).pvalue < APART
    assert ks_2samp(old_gaps, person.gaps[:GAPS_N]).pvalue < APART


async def test_a_slow_model_keeps_typing_until_its_reply_is_ready() -> None:
    """Generation slower than the planned typing: the indicator goes on, in bursts, until the
    reply is done and its last characters are typed; nothing is shown while reading."""
    clock = SimulatedClock()
    shown: list[float] = []
    plan = TypingPlan(reading_s=3.0, per_char_s=0.3, seed=5)
    typing = ShownTyping(plan, clock, lambda: shown.append(clock.now() - start))
    start = typing.started
    await clock.sleep(45.0)  # the model takes 45 s; the plan had 3 s + 20 chars · 0.3 s
    await typing.finish(20)
    typing.stop()
    done = clock.now() - start
    assert done >= 45.0 + 0.3 * FINISH_CHARS  # a few characters after the model is done
    assert shown[0] >= 3.0 and shown[-1] <= done
    gaps = [b - a for a, b in itertools.pairwise(shown)]
    assert all(g > 2.0 for g in gaps) and len(shown) > 10 and len(set(gaps)) > 5
