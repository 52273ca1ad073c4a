"""An AI witness's typing time is drawn from a generator keyed by what the stored messages fix
(the game's seed, the witness's seat, how many replies it has said on its channel), never from
one stream the whole game shares: so a game rebuilt from any prefix of its messages (a takeover)
draws the delays the uninterrupted game drew, and one witness's delays do not depend on when
another one answered."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

import pytest

from games_helpers import CONTEXT, table_for
from turinglab.agents.base import Agent
from turinglab.agents.human import HumanAgent, HumanInput, say
from turinglab.agents.scripted import ScriptedAgent
from turinglab.games.clock import SIMULATED_EPOCH, SimulatedClock
from turinglab.games.interrogation_setup import InterrogationGame
from turinglab.games.interrogation_text import INTERROGATOR
from turinglab.games.spec import FINISHED, TrialSpec
from turinglab.games.table import Table, TranscriptMessage
from turinglab.games.three_party import ThreePartyExperiment, ThreePartyGame
from turinglab.games.two_party import SEAT, TwoPartyExperiment, TwoPartyGame

REPLIES = ["hey", "not much, just got home", "ohio, near columbus", "lol why", "ok sure thing"]
QUESTIONS = ["hi", "what are you up to today?", "where do you live", "really?", "say something"]
Steps = Sequence[tuple[float, HumanInput]]  # (seconds after the game's start, input)


def _delays(table: Table, seat: str) -> list[float]:
    """Each of `seat`'s replies: seconds from the interrogator's message it answers."""
    out, asked = [], 0.0
    for m in table.messages:
        if m.channel == seat and m.sender == INTERROGATOR:
            asked = m.created_at
        elif m.channel == seat and m.sender == seat:
            out.append(m.created_at - asked)
    return out


async def _played(
    game: InterrogationGame,
    spec: TrialSpec,
    agents: dict[str, Agent],
    steps: Steps,
    said: list[TranscriptMessage] | None = None,
) -> Table:
    """The game played in one go (`said` None), or resumed over the messages `said` with the
    clock where the last of them left it (as a takeover finds it); a person interrogator makes
    the inputs of `steps` not yet in `said`, at their times."""
    prefix = said or []
    clock = SimulatedClock(prefix[-1].created_at if prefix else SIMULATED_EPOCH)
    table = table_for(game, spec, agents, clock)
    judge = agents["judge"]
    done = sum(1 for m in prefix if m.sender == INTERROGATOR)
    messages = [s for s in steps if s[1].kind == "message"]
    left = messages[done:] + [s for s in steps if s[1].kind != "message"]

    async def person() -> None:
        for at, item in left:
            await clock.sleep(max(0.0, SIMULATED_EPOCH + at - clock.now()))
            assert isinstance(judge, HumanAgent)
            judge.push(item)

    typing = asyncio.ensure_future(person())
    try:
        if said is None:
            result = await game.play(table, spec)
        else:
            table.replay(prefix)
            result = await game.resume(table, spec, started_at=SIMULATED_EPOCH)
    finally:
        typing.cancel()
    assert result.status == FINISHED, result
    return table


def _interrogation(by: str) -> tuple[TwoPartyGame, Steps, Callable[[], dict[str, Agent]]]:
    """A two-party game with a scripted AI witness, interrogated by a person (typing shown on
    their timeline: TypingPlan) or by a scripted AI (the delay as game time)."""
    cfg: dict[str, object] = {"game": "two-party", "interrogators": ["judge"]}
    cfg |= {"ai_witnesses": ["bot"], "typing_delay": True, "max_interrogator_messages": 5}
    game = TwoPartyGame(TwoPartyExperiment.model_validate(cfg), CONTEXT)
    verdict = HumanInput("verdict", data={"verdict": "ai", "confidence": 70, "reason": "-"})
    steps = [(10.0 + 30 * i, say(q, SEAT)) for i, q in enumerate(QUESTIONS)] + [(170.0, verdict)]

    def agents() -> dict[str, Agent]:
        said = [*QUESTIONS, "ai", "Confidence: 50\nReason: fast"]
        judge = HumanAgent("judge", "p1") if by == "person" else ScriptedAgent("judge", said)
        return {"judge": judge, "bot": ScriptedAgent("bot", REPLIES)}

    return game, steps if by == "person" else [], agents


@pytest.mark.parametrize("by", ["person", "AI"])
async def test_a_game_resumed_from_any_prefix_draws_the_typing_delays_it_would_have_drawn(
    by: str,
) -> None:
    game, steps, agents = _interrogation(by)
    spec = game.plan()[0]
    whole = await _played(game, spec, agents(), steps)
    delays = _delays(whole, SEAT)
    assert len(delays) == len(REPLIES) and len(set(delays)) == len(delays)
    # Every prefix of the talk (the verdict exchange after it draws nothing).
    talk = [m for m in whole.messages if m.phase != "verdict"]
    for cut in range(len(talk) + 1):
        resumed = await _played(game, spec, agents(), steps, whole.messages[:cut])
        assert [m.text for m in resumed.messages] == [m.text for m in whole.messages], cut
        assert _delays(resumed, SEAT) == pytest.approx(delays, abs=1e-9), cut


def _two_ai_witnesses() -> tuple[ThreePartyGame, TrialSpec]:
    cfg = {
        "game": "three-party",
        "interrogators": ["judge"],
        "ai_witnesses": ["bot"],
        "human_witnesses": ["stand-in"],
        "stand_ins": ["stand-in"],
    }
    game = ThreePartyGame(ThreePartyExperiment.model_validate(cfg), CONTEXT)
    return game, game.plan()[0]


async def _delays_asking(asked: Sequence[str]) -> dict[str, list[float]]:
    """Each witness's delays when the interrogator writes to the witnesses `asked`, witness_b
    always 5 s before witness_a (so its typing is drawn first)."""
    game, spec = _two_ai_witnesses()
    offset = {"witness_b": 5.0, "witness_a": 10.0}
    steps = [(offset[s] + 30 * i, say(q, s)) for i, q in enumerate(QUESTIONS[:3]) for s in asked]
    steps.sort(key=lambda step: step[0])
    verdict = HumanInput("verdict", data={"human": "witness_a", "confidence": 60, "reason": "-"})
    agents: dict[str, Agent] = {
        "judge": HumanAgent("judge", "p1"),
        "bot": ScriptedAgent("bot", REPLIES),
        "stand-in": ScriptedAgent("stand-in", REPLIES[::-1]),
    }
    table = await _played(game, spec, agents, [*steps, (120.0, verdict)])
    return {seat: _delays(table, seat) for seat in asked}


async def test_a_witness_draws_the_same_typing_whether_or_not_the_other_answered_first() -> None:
    both = await _delays_asking(["witness_a", "witness_b"])
    a_alone = await _delays_asking(["witness_a"])
    b_alone = await _delays_asking(["witness_b"])
    assert len(a_alone["witness_a"]) == 3 and len(b_alone["witness_b"]) == 3
    assert both["witness_a"] == pytest.approx(a_alone["witness_a"], abs=1e-9)
    assert both["witness_b"] == pytest.approx(b_alone["witness_b"], abs=1e-9)
