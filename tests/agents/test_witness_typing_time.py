"""What an interrogator sees of an AI witness's reply follows the delay model, not the model's
generation time (issue 31): the typing onset, the typing frames and the reply's arrival are
drawn from the study's delay model when the question arrives, and the generation runs inside
them. A generation that finishes within the plan changes nothing the interrogator can time; one
that overruns it makes the reply late (shown once ready, after its last few characters are
typed), and the onset is still the model's. Preflight (witness_preflight.py) refuses a witness
for which overrunning is the rule.

The engine's two-party game in a `LiveGame`, on simulated time: ELIZA's replies, generated in
the time each test gives it on the game's clock."""

from __future__ import annotations

import asyncio
from typing import Any

from test_arena_timing_leaks import two_party_mode
from turinglab.agents.base import AgentReply, CallContext, ChatMessage
from turinglab.agents.eliza import ElizaAgent
from turinglab.arena.core import frames as F
from turinglab.arena.core.live import LiveGame
from turinglab.arena.core.participants import Participant
from turinglab.games.clock import SimulatedClock
from turinglab.games.typing_timeline import FINISH_CHARS

QUESTION = "where did you grow up, and do you still live there?"


class GeneratesFor:
    """ELIZA, taking `seconds` of the game's clock to generate each reply."""

    def __init__(self, clock: SimulatedClock, seconds: float) -> None:
        self.name = "eliza"
        self._eliza = ElizaAgent("eliza")
        self._clock = clock
        self._seconds = seconds

    @property
    def endpoint(self) -> str | None:
        return None

    async def reply(self, history: list[ChatMessage], ctx: CallContext) -> AgentReply:
        await self._clock.sleep(self._seconds)
        return await self._eliza.reply(history, ctx)

    async def aclose(self) -> None:
        return None


async def one_reply(generation_s: float, seed: int = 4) -> list[tuple[float, dict[str, Any]]]:
    """The interrogator's frames, timed from their question, until the witness's reply."""
    mode = two_party_mode()
    clock = SimulatedClock()
    judge = Participant("p-judge", "t-judge")
    assert mode.spec_for is not None
    spec = mode.spec_for(seed, {"interrogator": f"person:{judge.id}", "witness": "ELIZA"}, seed)
    agents = {"eliza": GeneratesFor(clock, generation_s)}
    game = LiveGame(mode, spec, {"interrogator": judge}, agents, display_names={}, clock=clock,
                    on_finish=lambda _g: None)  # fmt: skip
    frames: list[tuple[float, dict[str, Any]]] = []
    replied = asyncio.Event()
    asked_at = 0.0

    def to_judge(frame: F.ServerFrame) -> None:
        frames.append((clock.now() - asked_at, F.dump(frame)))
        if isinstance(frame, F.Message) and frame.sender == "them":
            replied.set()

    game.views["interrogator"].outlets.add(to_judge)
    game.start()
    await clock.sleep(1.0)
    frames.clear()
    asked_at = clock.now()
    game.handle(judge, F.SendMessage(type="message", channel="A", text=QUESTION))
    await replied.wait()
    assert game.task is not None
    game.task.cancel()
    # what the interrogator can time (not the frames' stream ids and sequence numbers)
    return [
        (round(at, 6), {k: f.get(k) for k in ("type", "sender", "text")})
        for at, f in frames
        if f["type"] in ("typing", "message")
    ]


def reply_at(frames: list[tuple[float, dict[str, Any]]]) -> tuple[float, str]:
    at, frame = next(
        (at, f) for at, f in frames if f["type"] == "message" and f["sender"] == "them"
    )
    return at, frame["text"]


def typing_at(frames: list[tuple[float, dict[str, Any]]]) -> list[float]:
    return [at for at, f in frames if f["type"] == "typing"]


async def test_a_generation_within_the_plan_changes_nothing_the_interrogator_can_time() -> None:
    instant, slower = await one_reply(0.0), await one_reply(4.0)
    assert instant == slower  # the same frames at the same times: the plan's, not the model's
    at, text = reply_at(instant)
    assert at > 4.0 + 0.3 * FINISH_CHARS and text
    assert typing_at(instant) and typing_at(instant)[0] > 1.0  # a reading pause first


async def test_an_overrunning_generation_comes_late_but_starts_typing_on_time() -> None:
    planned = await one_reply(0.0)
    late = await one_reply(50.0)  # under the 60 s deadline
    planned_at, text = reply_at(planned)
    late_at, late_text = reply_at(late)
    assert late_text == text
    assert planned_at < 50.0
    # shown once ready, after the typing of its last few characters (~0.3 s each)
    assert 50.0 + 0.2 * FINISH_CHARS <= late_at <= 50.0 + 0.4 * FINISH_CHARS
    # the onset is the delay model's, whatever the generation takes
    assert typing_at(late)[0] == typing_at(planned)[0]
