"""What an interrogator can time of a reply — message → first typing frame, message → reply —
is distributed alike for AI and human witnesses under every arrival process (KS, α = 0.01,
n ≥ 1,000 games each): the games that the real lobby and blind matcher start for steady,
bursty and trickling arrivals and for the study's end (bench/witness_supply.py) are played
on one simulated clock, so they overlap as they would. AI witnesses reply through the real
delay code (`TypingPlan`, `ShownTyping`: typing shown on a person's timeline, the generation
inside it) from one shared model server with a few slots, which queues generations when many
AI games run at once; people read, think and type key by key (the browser's frame rule).

A server too small for the load (one slot, slow generations) is told apart under bursts:
the AI's replies then come late, after the queue, which is what the test is there to catch."""

from __future__ import annotations

import asyncio
import math
import random
from dataclasses import dataclass, field

import pytest
from scipy.stats import ks_2samp

from test_arena_blind_arrivals import ALPHA
from turinglab.bench.witness_supply import Interrogation, simulate
from turinglab.games.clock import SimulatedClock
from turinglab.games.typing_delay import TypingDelay
from turinglab.games.typing_timeline import ShownTyping, TypingPlan, Typist, throttled

QUESTIONS = ["hi", "where are you from?", "what did you have for breakfast today?",
             "be honest, are you a bot or a person typing this?",
             "tell me about the last film you watched and whether you liked it"]  # fmt: skip
REPLIES = ["hey there, how are you doing", "leeds, and you? never been anywhere else really",
           "toast and coffee as usual lol", "a person obviously, why would you even ask that",
           "rainy and grey, as it always is here"]  # fmt: skip
EXCHANGES = 2  # an interrogator's messages timed per game (more cost time, not power)
N_GAMES = 1000
pytestmark = pytest.mark.slow  # about a minute in all on a busy 2-core machine
SIZES = {"steady": (340, 1), "bursts": (340, 1), "trickle": (340, 1), "end": (24, 30)}


@dataclass
class ModelServer:
    """One model server for every AI game: `slots` generations at once, each taking a
    log-normal time (median `median_s`); the rest queue."""

    clock: SimulatedClock
    slots: int
    median_s: float
    rng: random.Random
    _free: asyncio.Semaphore = field(init=False)

    def __post_init__(self) -> None:
        self._free = asyncio.Semaphore(self.slots)

    async def generate(self) -> None:
        async with self._free:
            await self.clock.sleep(self.rng.lognormvariate(math.log(self.median_s), 0.5))


@dataclass
class Timed:
    first: dict[bool, list[float]] = field(default_factory=lambda: {True: [], False: []})
    reply: dict[bool, list[float]] = field(default_factory=lambda: {True: [], False: []})

    def p(self, which: str) -> tuple[float, int, int]:
        got = self.first if which == "first" else self.reply
        return float(ks_2samp(got[True], got[False]).pvalue), len(got[True]), len(got[False])


async def ai_replies(clock: SimulatedClock, server: ModelServer, question: str, reply: str,
                     rng: random.Random) -> tuple[float, float]:  # fmt: skip
    """As `_ai_witness_reply` does (games/interrogation.py): a plan drawn as the message
    arrives, typing shown while the model generates, the message once typed."""
    start, shown_at = clock.now(), []
    plan = TypingPlan.draw(TypingDelay(), len(question), rng)
    shown = ShownTyping(plan, clock, lambda: shown_at.append(clock.now()))
    try:
        await server.generate()
        await shown.finish(len(reply))
    finally:
        shown.stop()
    return shown_at[0] - start, clock.now() - start


def person_replies(question: str, reply: str, rng: random.Random) -> tuple[float, float]:
    """A person: reads and thinks, then types key by key (bursts, pauses); the browser sends a
    typing frame on a key at most every 2 s, the message when it is typed."""
    reading = 1.0 + rng.gauss(0.03, 0.003) * len(question) + rng.gammavariate(2.5, 0.25)
    done = reading + rng.gauss(0.3, 0.03) * len(reply)
    keys = Typist().keystrokes(rng, reading)
    first = next(throttled(keys))
    return first, done


async def play(clock: SimulatedClock, server: ModelServer, game: Interrogation, seed: int,
               into: Timed) -> None:  # fmt: skip
    rng = random.Random(seed)
    await clock.sleep(game.started - clock.now())
    for n in range(EXCHANGES):
        await clock.sleep(rng.uniform(10, 80))  # reads the last reply, types the next question
        question, reply = QUESTIONS[(seed + n) % len(QUESTIONS)], rng.choice(REPLIES)
        if game.person:
            first, took = person_replies(question, reply, rng)
            await clock.sleep(took)
        else:
            first, took = await ai_replies(clock, server, question, reply, rng)
        into.first[game.person].append(first)
        into.reply[game.person].append(took)


async def timed(
    arrivals: str, slots: int, median_s: float, people_seeds: tuple[int, int] | None = None
) -> tuple[Timed, int]:
    people, seeds = people_seeds or SIZES[arrivals]
    out, games = Timed(), 0
    for seed in range(seeds):
        run = simulate(people, 4, seed, arrivals=arrivals)
        found = run.games_after_last() if arrivals == "end" else run.games
        clock = SimulatedClock(start=0.0)
        server = ModelServer(clock, slots, median_s, random.Random(seed))
        await asyncio.gather(
            *(play(clock, server, g, 10_000 * seed + i, out) for i, g in enumerate(found))
        )
        games += len(found)
    return out, games


@pytest.mark.parametrize("arrivals", sorted(SIZES))
async def test_reply_timing_says_nothing_about_the_witness(arrivals: str) -> None:
    got, games = await timed(arrivals, slots=4, median_s=1.5)
    assert games >= N_GAMES, games
    for which in ("first", "reply"):
        p, person, ai = got.p(which)
        assert person >= 100 and ai >= 100, (which, person, ai)
        assert p > ALPHA, f"{arrivals}: {which} differs by witness kind, KS p = {p:.3g}"


async def test_a_model_server_too_small_for_bursts_is_told_apart() -> None:
    got, _ = await timed("bursts", slots=1, median_s=4.0, people_seeds=(80, 1))
    p = got.p("reply")[0]
    assert p < 1e-6, f"a queued model was expected to be told apart: KS p = {p:.3g}"
