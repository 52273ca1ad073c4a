"""Two-party games: one witness, a human/AI verdict with confidence and reason."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from games_helpers import CONTEXT, play_with_people, table_for
from turinglab.agents.base import AgentReply, CallContext, ChatMessage
from turinglab.agents.eliza import ElizaAgent
from turinglab.agents.human import HumanAgent, HumanInput, say
from turinglab.agents.scripted import ScriptedAgent
from turinglab.games.clock import SimulatedClock
from turinglab.games.events import EventLog, InputRefused, Revealed
from turinglab.games.kinds import game_for
from turinglab.games.spec import FINISHED
from turinglab.games.study_rows import study_rows
from turinglab.games.two_party import TwoPartyExperiment, TwoPartyGame
from turinglab.human.schema import load_study


def make_game(**overrides: object) -> TwoPartyGame:
    cfg = {
        "game": "two-party",
        "interrogators": ["judge"],
        "ai_witnesses": [{"agent": "eliza", "persona": "none"}],
        "human_witnesses": ["person"],
        "stand_ins": ["person"],
        "max_interrogator_messages": 2,
        **overrides,
    }
    game = game_for(TwoPartyExperiment.model_validate(cfg), CONTEXT)
    assert isinstance(game, TwoPartyGame)
    return game


async def test_plan_covers_each_witness_and_batch_games_export(tmp_path: Path) -> None:
    game = make_game(n=2)
    specs = game.plan()
    assert [s.params["witness_type"] for s in specs] == ["ai", "ai", "human", "human"]
    rows = []
    for spec in specs:
        agents = {
            "judge": ScriptedAgent(
                "judge",
                ["hi there", "what is your job", "human", "Confidence: 60\nReason: felt real"],
            ),
            "person": ScriptedAgent("person", ["hey", "i teach"]),
            "eliza": ElizaAgent("eliza"),
        }
        table = table_for(game, spec, agents, SimulatedClock())
        result = await game.play(table, spec)
        assert result.status == FINISHED and result.judgements[0].verdict == "human"
        assert result.verdict == 1 and result.correct is (spec.params["witness_type"] == "human")
        assert result.details["message_counts"]["witness"] == {"interrogator": 2, "witness": 2}
        kinds = {k: s.kind for k, s in table.seats.items()}
        seen = game.study_game(spec, result, seat_kinds=kinds, messages=table.messages)
        rows += study_rows([seen])
    path = tmp_path / "two.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    study = load_study(path)
    assert list(study["format"]) == ["two-party"] * 4
    assert list(study["witness_type"]) == ["ai", "ai", "human", "human"]
    assert study["confidence"].tolist() == [60.0] * 4


async def test_person_interrogator_with_ai_witness_verdict_validation() -> None:
    game = make_game(
        human_witnesses=[], stand_ins=[], ai_witnesses=[{"agent": "bot", "persona": "persona"}]
    )
    spec = game.plan()[0]
    judge = HumanAgent("judge", "p1")
    log = EventLog()
    bot = ScriptedAgent("bot", ["sup", "nm"])
    scripts = {
        "judge": [
            (2, say("hello")),
            (30, HumanInput("verdict", data={"verdict": "robot", "confidence": 5})),
            (
                31,
                HumanInput(
                    "verdict", data={"verdict": "ai", "confidence": 90, "reason": "too chill"}
                ),
            ),
        ],
    }
    agents = {"judge": judge, "bot": bot}
    result, table = await play_with_people(game, spec, agents, scripts, observer=log)
    assert 'say "human" or "ai"' in log.seen_by("interrogator", InputRefused)[0].reason
    assert result.correct is True and result.verdict == 0
    assert result.judgements[0].reason == "too chill"
    assert [m.text for m in table.messages if m.channel == "witness"] == ["hello", "sup"]
    assert log.seen_by("interrogator", Revealed)[0].side("witness").human is False


async def test_eliza_gets_no_prompt_even_under_a_persona_condition() -> None:
    seen: list[list[ChatMessage]] = []

    class RecordingEliza(ElizaAgent):
        async def reply(self, history: list[ChatMessage], ctx: CallContext) -> AgentReply:
            seen.append(list(history))
            return await super().reply(history, ctx)

    game = make_game(ai_witnesses=["eliza"], human_witnesses=[], stand_ins=[])
    spec = game.plan()[0]
    judge = ScriptedAgent("judge", ["i feel sad", "x", "ai", "Confidence: 99"])
    agents = {"judge": judge, "eliza": RecordingEliza("eliza")}
    result = await game.play(table_for(game, spec, agents, SimulatedClock()), spec)
    assert seen[0] == [ChatMessage("user", "i feel sad")] and result.correct is True
