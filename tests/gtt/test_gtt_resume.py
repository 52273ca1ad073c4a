"""A GTT game resumed from any prefix of its stored messages is the game it would have been.

The property a takeover relies on (arena/core/takeover.py): the game is a fold over its messages.
Each variant is played once whole; then, for every point k, a fresh table is given the first k
messages (as the store gives them to the process taking over) and the kind's `resume` plays
on. The transcript, the result and the seed of every call made after the catch-up are those of
the whole game, and no agent is asked again for a message already stored.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from games_helpers import direct_caller
from turinglab.agents.base import AgentReply, CallContext, ChatMessage, Route
from turinglab.agents.scripted import ScriptedAgent
from turinglab.config import GTTExperiment
from turinglab.games.gtt_plan import make_trial
from turinglab.games.kinds import RESUMABLE, game_for
from turinglab.games.spec import GameResult, TrialSpec
from turinglab.games.table import Diverged, Table, TranscriptMessage

JUDGE = [
    "Hello. Which number comes after 41?",
    "STOP",
    "Name a colour.",
    "Why?",
    "<answer>1</answer>",
]


class SeedEcho:
    """Answers with the seed of its call: a call made with another seed than in the whole game
    (the call count not carried through the catch-up) changes the transcript."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.calls = 0

    @property
    def endpoint(self) -> str | None:
        return None

    async def reply(self, history: list[ChatMessage], ctx: CallContext) -> AgentReply:
        self.calls += 1
        said = sum(1 for m in history if m.role == "assistant")
        if said == 1 and ctx.participant != "specimen":
            return AgentReply("STOP", Route("scripted", self.name))  # ends an actor's study
        return AgentReply(f"{self.name} says {ctx.seed}", Route("scripted", self.name))

    async def aclose(self) -> None:
        return None


def _experiment() -> GTTExperiment:
    return GTTExperiment.model_validate(
        {
            "game": "gtt",
            "universe": ["judge", "other"],
            "variants": ["gtt"],
            "max_distinguisher_turns": 3,
            "max_specimen_turns": 2,
            "on_turn_cap": "ask-for-answer",
        }
    )


def _agents() -> dict[str, Any]:
    return {"judge": ScriptedAgent("judge", JUDGE), "other": SeedEcho("other")}


def _spec(variant: str, x_is_target: bool) -> TrialSpec:
    return make_trial(
        index=0,
        key=f"{variant}#0",
        actor="other",
        distinguisher="judge",
        target="other" if variant in ("fdgtt", "gdgtt") else "",
        x_is_target=x_is_target,
        seed=1234,
        variant=variant,
        budget=2 if variant == "gtt-turns" else None,
    )


def _table(spec: TrialSpec, agents: dict[str, Any]) -> Table:
    game = game_for(_experiment())
    return Table(seats=game.seats(spec, agents), caller=direct_caller, seed=spec.seed)


def _said(table: Table) -> list[tuple[Any, ...]]:
    return [(m.seq, m.sender, m.text, m.visible_to, m.phase, m.channel) for m in table.messages]


def _outcome(result: GameResult) -> tuple[Any, ...]:
    return (result.status, result.verdict, result.correct, result.details)


CASES = [
    ("gtt", False),
    ("gtt", True),
    ("gttq", False),  # the actor studies a specimen first
    ("gdgtt", True),  # the distinguisher studies the target first
    ("gtt-turns", False),  # controlled rounds, then the game asks for the verdict
    ("fdgtt", False),
]


@pytest.mark.parametrize(("variant", "x_is_target"), CASES)
async def test_resumed_from_any_point_it_is_the_same_game(variant: str, x_is_target: bool) -> None:
    spec = _spec(variant, x_is_target)
    game = game_for(_experiment())
    resumable = RESUMABLE.of(game)
    assert resumable is not None
    whole = _table(spec, _agents())
    expected = await game.play(whole, spec)
    said = _said(whole)
    assert len(said) >= 6
    for k in range(1, len(said) + 1):
        agents = _agents()
        table = _table(spec, agents)
        table.replay([dataclasses.replace(m) for m in whole.messages[:k]])
        result = await resumable.resume(table, spec, started_at=0.0)
        assert _said(table) == said, f"resumed after {k} messages"
        assert _outcome(result) == _outcome(expected)
        assert table.calls == whole.calls
        # Only what was not stored yet was asked for: one call per later message of that agent.
        later = [m for m in whole.messages[k:] if m.sender in spec.seats and m.sender != "game"]
        asked = sum(1 for m in later if spec.seats[m.sender] == "other")
        assert agents["other"].calls == asked


async def test_a_history_that_is_not_the_game_s_own_is_refused() -> None:
    """A stored message the game would not say there (another prompt, another turn order)
    stops the resume instead of playing a game no rule describes."""
    spec = _spec("gtt", False)
    game = game_for(_experiment())
    whole = _table(spec, _agents())
    await game.play(whole, spec)
    resumable = RESUMABLE.of(game)
    assert resumable is not None
    changed: list[TranscriptMessage] = [dataclasses.replace(m) for m in whole.messages[:4]]
    changed[0].text = "an instruction from another prompt set"
    table = _table(spec, _agents())
    table.replay(changed)
    with pytest.raises(Diverged, match="message 0"):
        await resumable.resume(table, spec, started_at=0.0)
    swapped = [dataclasses.replace(m) for m in whole.messages[:4]]
    swapped[3].sender = "distinguisher"  # X's reply stored as the judge's
    table = _table(spec, _agents())
    table.replay(swapped)
    with pytest.raises(Diverged, match="message 3"):
        await resumable.resume(table, spec, started_at=0.0)
    longer = [dataclasses.replace(m) for m in whole.messages]
    longer.append(dataclasses.replace(whole.messages[-1], seq=len(longer)))
    table = _table(spec, _agents())
    table.replay(longer)
    with pytest.raises(Diverged, match="before the history"):
        await resumable.resume(table, spec, started_at=0.0)
