"""The `conversation` game kind: planning, role prompts vs transcript framing, re-sampling of
degenerate replies, and play over a real HTTP server and the embedded models."""

from __future__ import annotations

import asyncio
from collections import Counter

import pytest

from turinglab.agents.base import ChatMessage
from turinglab.agents.openai_compat import OpenAIChatAgent
from turinglab.agents.scripted import ScriptedAgent
from turinglab.games.conversation import (
    TOPICS,
    ConversationExperiment,
    ConversationGame,
    degenerate,
)
from turinglab.games.kinds import GameContext, game_for
from turinglab.itt.generate import conversation_rows, play_conversations
from turinglab.testing.fake_openai import FakeOpenAIServer


def experiment(**kw: object) -> ConversationExperiment:
    base = {
        "game": "conversation",
        "pairs": [["a", "b"]],
        "conversations_per_pair": 3,
        "exchanges": 6,
    }
    return ConversationExperiment.model_validate({**base, **kw})


def test_registered_and_planned_deterministically() -> None:
    game = game_for(experiment())
    assert isinstance(game, ConversationGame)
    plan = game.plan()
    assert [s.key for s in plan] == ["a~b#0", "a~b#1", "a~b#2"]
    assert plan == game_for(experiment()).plan()
    assert all(s.params["topic"] in TOPICS and s.params["exchanges"] == 6 for s in plan)
    assert len({s.seed for s in plan}) == 3
    assert ConversationExperiment.model_fields["exchanges"].default == 24


def test_degenerate_reasons() -> None:
    assert degenerate("  ", [], 0, 24) == "empty"
    assert degenerate("I love jazz.", ["i love  jazz."], 3, 24) == "repeat"
    assert degenerate("ok bye, talk later!", [], 3, 24) == "early-exit"
    assert degenerate("ok bye!", [], 22, 24) is None  # a goodbye at the end is fine
    assert degenerate("What music do you like?", ["Hi!"], 1, 24) is None


def test_views_for_chat_and_transcript_agents() -> None:
    from turinglab.games.table import Table

    game = ConversationGame(experiment(base_models=["b"]), GameContext())
    spec = game.plan()[0]
    agents = {"a": ScriptedAgent("a", ["x"]), "b": ScriptedAgent("b", ["y"])}

    async def caller(agent, history, ctx):  # pragma: no cover - not called here
        raise AssertionError

    table = Table(game.seats(spec, agents), caller, spec.seed)
    table.post("A", "Hi there, seen any good films?", visible_to=("A", "B"))
    chat = game.history_for(table, "A", "movies")
    assert [m.role for m in chat] == ["user", "assistant"]
    assert "movies" in chat[0].content and "You write first" in chat[0].content
    base = game.history_for(table, "B", "movies")
    assert base[0].role == "system" and "never ends" in base[0].content
    assert base[1] == ChatMessage("user", "Hi there, seen any good films?")


async def test_repeats_and_goodbyes_are_resampled_and_recorded() -> None:
    # A says goodbye on its second message and repeats itself on its third; scripted agents
    # answer the same to the same history, so the re-samples fail and the game is flagged.
    agents = {
        "a": ScriptedAgent(
            "a", ["Hi! Do you like jazz?", "gotta go, bye", "Hi! Do you like jazz?"]
        ),
        "b": ScriptedAgent("b", ["Yes, Miles Davis.", "Kind of Blue is great.", "Agreed."]),
    }
    played = await play_conversations(experiment(conversations_per_pair=1, max_resamples=2), agents)
    result = played[0].result
    reasons = Counter((r["turn"], r["reason"]) for r in result.details["resamples"])
    assert reasons == {(2, "early-exit"): 3, (4, "repeat"): 3}
    assert result.details["kept_degenerate_turns"] == [2, 4]
    assert result.flags == ["degenerate-reply-kept"]
    assert conversation_rows(played) == []  # flagged conversations stay out of the dataset


async def test_conversation_over_http_becomes_dataset_rows(fake_server: FakeOpenAIServer) -> None:
    base = fake_server.base_url
    http = OpenAIChatAgent(name="a", base_url=base, model="fake-a")
    agents = {"a": http, "b": ScriptedAgent("b", ["Sure.", "I like rain.", "Maybe paris."])}
    try:
        played = await play_conversations(experiment(conversations_per_pair=2), agents)
    finally:
        await http.aclose()
    assert fake_server.stats()["completions"] == 6
    assert [p.result.flags for p in played] == [[], []]
    rows = conversation_rows(played)
    assert len(rows) == 12
    assert rows[0].text.startswith("Question 1:") and rows[1].text == "Sure."
    assert {r.speaker for r in rows} == {"A", "B"} and all(r.source == "machine" for r in rows)
    assert [r.turn for r in rows[:6]] == list(range(6))


@pytest.mark.slow
def test_embedded_models_converse_with_transcript_framing() -> None:
    from turinglab.itt.demo import demo_agents

    exp = ConversationExperiment(
        game="conversation",
        pairs=[("smollm2", "gemma3-base")],
        conversations_per_pair=1,
        exchanges=4,
        seed=3,
    )
    played = asyncio.run(play_conversations(exp, demo_agents(max_tokens=32)))
    details = played[0].result.details
    assert len(details["transcript"]) == 4
    for m in details["transcript"]:
        # the names are stop sequences: a base model never writes the other side's line
        assert "Person A:" not in m["text"] and "Person B:" not in m["text"]
    assert isinstance(details["resamples"], list)


@pytest.mark.parametrize("name", ["itt-conversations.yaml", "itt-conversations-hosted.yaml"])
def test_shipped_configs_are_valid_conversation_experiments(name: str) -> None:
    from pathlib import Path

    import yaml

    from turinglab.config import EMBEDDED_AGENTS

    data = yaml.safe_load((Path(__file__).parents[2] / "configs" / name).read_text())
    exp = ConversationExperiment.model_validate(data["experiment"])
    known = set(data.get("agents") or {}) | set(EMBEDDED_AGENTS)
    assert set(exp.agent_names()) <= known
    assert len(game_for(exp).plan()) == len(exp.pairs) * exp.conversations_per_pair


async def test_a_person_in_the_seat_is_briefed_sees_messages_and_is_never_resampled() -> None:
    from turinglab.agents.human import MESSAGE, HumanAgent, HumanInput
    from turinglab.agents.retry import Caller, RetryPolicy
    from turinglab.games.events import EventLog
    from turinglab.games.table import Table

    person = HumanAgent("person", "p-1")
    log = EventLog()
    for text in ("hey! love movies", "hey! love movies"):  # people may repeat themselves
        person.push(HumanInput(MESSAGE, text))
    exp = experiment(exchanges=4, conversations_per_pair=1)
    game = ConversationGame(exp, GameContext(agent_kinds={"b": "human"}))
    spec = game.plan()[0]
    agents = {
        "a": ScriptedAgent("a", ["Hi, seen a film lately?", "Which one was best?"]),
        "b": person,
    }
    table = Table(game.seats(spec, agents), Caller(RetryPolicy(), 1), spec.seed, observer=log)
    result = await asyncio.wait_for(game.play(table, spec), timeout=5)
    texts = [m["text"] for m in result.details["transcript"]]
    assert texts == [
        "Hi, seen a film lately?",
        "hey! love movies",
        "Which one was best?",
        "hey! love movies",
    ]
    assert result.details["resamples"] == [] and result.flags == []
    seen = [m.text for m in log.messages_to("B")]
    assert seen[0].startswith("Chat with your partner about " + spec.params["topic"])
    assert "Hi, seen a film lately?" in seen
