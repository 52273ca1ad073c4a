"""The GTT variants with scripted agents: querying phases, budgets, fixed distinguishers."""

from __future__ import annotations

from collections import Counter

import pytest

from turinglab.agents.scripted import ScriptedAgent
from turinglab.config import ConfigError, parse_config
from turinglab.games.gtt import (
    DISTINGUISHER,
    FORCED_CHOICES,
    UNKNOWN,
    GTTRules,
    GTTSetup,
    play_gtt,
)
from turinglab.games.gtt_prompts import GTTPrompts
from turinglab.games.query_phase import SPECIMEN, is_stop
from turinglab.games.table import GAME, Seat, Table
from turinglab.runner.execute import run_experiment
from turinglab.runner.plan import plan_trials
from turinglab.store.database import Store

PROMPTS = GTTPrompts.load()


async def direct(agent, history, ctx):
    return await agent.reply(history, ctx)


def table(judge: list[str], unknown: list[str], specimen: list[str] | None = None) -> Table:
    seats = {
        DISTINGUISHER: Seat(DISTINGUISHER, "B", ScriptedAgent("B", judge)),
        UNKNOWN: Seat(UNKNOWN, "A", ScriptedAgent("A", unknown)),
    }
    if specimen is not None:
        seats[SPECIMEN] = Seat(SPECIMEN, "B", ScriptedAgent("B*", specimen))
    return Table(seats=seats, caller=direct, seed=1)


@pytest.mark.parametrize(
    ("text", "stop"), [("STOP", True), ("stop.", True), (" Stop! ", True), ("Don't stop", False)]
)
def test_is_stop(text: str, stop: bool) -> None:
    assert is_stop(text) is stop


async def test_gttq_actor_studies_a_specimen_the_judge_never_sees() -> None:
    t = table(
        ["Hi, what are you?", "<answer>0</answer>"],
        ["What is your favourite colour?", "STOP", "I am a helpful assistant."],
        ["Blue, I suppose."],
    )
    result = await play_gtt(t, GTTSetup(False, "gttq"), PROMPTS, GTTRules())
    query = result.details["phases"]["query"]
    assert (query["queries"], query["ended_by"], query["querier"]) == (1, "stop", UNKNOWN)
    q_msgs = [m for m in t.messages if m.phase == "query"]
    assert [m.sender for m in q_msgs] == [GAME, UNKNOWN, SPECIMEN, UNKNOWN]
    assert all(DISTINGUISHER not in m.visible_to for m in q_msgs)
    assert q_msgs[-1].visible_to == (UNKNOWN,)  # STOP is not sent to the specimen
    # The specimen's first message is the actor's first reply to its instruction.
    assert t.view(SPECIMEN)[0].content == "What is your favourite colour?"
    # The specimen transcript stays in the actor's history, before the main instruction.
    actor_view = [m.content for m in t.view(UNKNOWN)]
    assert actor_view.index("Blue, I suppose.") < next(
        i for i, c in enumerate(actor_view) if "Hi, what are you?" in c
    )
    assert result.details["actor_prompt"] is not None
    assert "query" not in {m.phase for m in t.messages if DISTINGUISHER in m.visible_to}
    assert result.details["unknown_turns"] == 1  # main-phase replies only


async def test_gttq_control_branch_has_no_query_phase() -> None:
    t = table(["Hi", "<answer>1</answer>"], ["Hello"], ["unused"])
    result = await play_gtt(t, GTTSetup(True, "gttq"), PROMPTS, GTTRules())
    assert "query" not in result.details["phases"]
    assert not any(m.sender == SPECIMEN for m in t.messages)


async def test_query_cap_and_controlled_query_budget() -> None:
    t = table(["Hi", "<answer>0</answer>"], ["ask"], ["answer"])
    capped = await play_gtt(t, GTTSetup(False, "gttq"), PROMPTS, GTTRules(max_specimen_turns=3))
    assert capped.details["phases"]["query"]["queries"] == 3
    assert capped.details["phases"]["query"]["ended_by"] == "cap"

    t = table(["Hi", "<answer>0</answer>"], ["q1", "STOP", "q3", "main"], ["a"])
    budget = await play_gtt(t, GTTSetup(False, "gttq-queries", budget=2), PROMPTS, GTTRules())
    phase = budget.details["phases"]["query"]
    assert (phase["queries"], phase["ended_by"]) == (2, "budget")  # STOP is just a word here
    instruction = next(m for m in t.messages if m.phase == "query" and m.sender == GAME)
    assert "exactly 2 queries" in instruction.text


async def test_controlled_turn_asks_after_exactly_n_rounds() -> None:
    contexts = []

    async def recording(agent, history, ctx):
        contexts.append(ctx)
        return await agent.reply(history, ctx)

    t = table(["q1", "q2", "<answer>1</answer>"], ["r1", "r2", "r3"])
    t.caller = recording
    result = await play_gtt(t, GTTSetup(True, "gtt-turns", budget=2), PROMPTS, GTTRules())
    assert "exactly 2 rounds" in t.messages[0].text
    senders = [m.sender for m in t.messages]
    assert senders == [
        GAME,
        DISTINGUISHER,
        GAME,
        UNKNOWN,
        DISTINGUISHER,
        UNKNOWN,
        GAME,
        DISTINGUISHER,
    ]
    assert result.status == "answered" and result.verdict == 1
    assert contexts[-1].choices == FORCED_CHOICES
    assert result.details["asked_for_answer"] is True


async def test_controlled_turn_early_answer_is_kept_and_marked() -> None:
    t = table(["q1", "<answer>0</answer>"], ["r1"])
    result = await play_gtt(t, GTTSetup(False, "gtt-turns", budget=5), PROMPTS, GTTRules())
    assert result.status == "answered" and result.details["early_answer"] is True


async def test_fixed_distinguisher_is_told_the_target_name() -> None:
    t = table(["Hi", "<answer>1</answer>"], ["Hello"])
    setup = GTTSetup(False, "fdgtt", target_name="Model-B")
    result = await play_gtt(t, setup, PROMPTS, GTTRules())
    assert "Model-B" in t.messages[0].text
    assert "Model-B" in result.details["actor_prompt"]
    assert result.verdict == 1 and result.correct is False  # fooled: X was the actor


async def test_gdgtt_distinguisher_queries_the_target_first() -> None:
    t = table(
        ["Tell me about yourself", "STOP", "Hi there", "<answer>1</answer>"], ["Hello"], ["I am B."]
    )
    result = await play_gtt(t, GTTSetup(True, "gdgtt", target_name="B"), PROMPTS, GTTRules())
    assert result.details["phases"]["query"]["querier"] == DISTINGUISHER
    assert result.details["first_distinguisher_message"] == "Hi there"
    judge_view = [m.content for m in t.view(DISTINGUISHER)]
    assert "I am B." in judge_view  # its specimen study stays in its history
    assert all("I am B." not in m.content for m in t.view(UNKNOWN))
    assert result.correct is True


def config(**experiment) -> dict:
    return {
        "name": "variants",
        "agents": {
            "a": {"kind": "scripted", "replies": ["Hi?", "STOP", "Sure. <answer>1</answer>"]},
            "b": {"kind": "scripted", "replies": ["Hello", "STOP", "<answer>0</answer>"]},
            "d": {"kind": "scripted", "replies": ["Who?", "STOP", "<answer>1</answer>"]},
        },
        "experiment": {
            "game": "gtt",
            "universe": ["a", "b", "d"],
            "trials_per_pair": 2,
            **experiment,
        },
    }


def test_plan_cells_for_every_variant() -> None:
    cfg = parse_config(
        config(
            variants=["gtt", "gttq", "gtt-turns", "fdgtt"],
            distinguishers=["d"],
            budgets=[1, 3],
            budget_pairs=[["a", "b"]],
        )
    )
    specs = plan_trials(cfg)
    by_variant = Counter(s.variant for s in specs)
    assert by_variant == {"gtt": 18, "gttq": 18, "gtt-turns": 4, "fdgtt": 8}
    fd = [s for s in specs if s.variant == "fdgtt"]
    assert {s.distinguisher for s in fd} == {"d"}
    assert {(s.actor, s.target) for s in fd} == {("a", "a"), ("a", "b"), ("b", "a"), ("b", "b")}
    assert {s.budget for s in specs if s.variant == "gtt-turns"} == {1, 3}
    assert len({s.key for s in specs}) == len(specs)
    assert len({s.seed for s in specs}) == len(specs)
    fd_actor = next(s for s in fd if not s.x_is_target and s.actor != s.target)
    assert fd_actor.unknown == fd_actor.actor
    fd_self = next(s for s in fd if s.x_is_target)
    assert fd_self.unknown == fd_self.target


@pytest.mark.parametrize(
    ("experiment", "needle"),
    [
        ({"variants": ["fdgtt"]}, "need `distinguishers`"),
        ({"variants": ["gtt-turns"]}, "need `budgets`"),
        ({"variants": ["gtt", "gtt"]}, "more than once"),
        ({"variants": ["gttx"]}, "experiment.variants.0"),
        (
            {"variants": ["fdgtt"], "distinguishers": ["zz"]},
            "experiment.distinguishers[0]: unknown agent",
        ),
    ],
)
def test_variant_config_errors(experiment: dict, needle: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_config(config(**experiment))
    assert needle in str(err.value)


async def test_every_variant_runs_end_to_end(tmp_path) -> None:
    cfg = parse_config(
        config(
            variants=["gtt", "gttq", "gtt-turns", "gttq-queries", "fdgtt", "fdgttq", "gdgtt"],
            distinguishers=["d"],
            budgets=[1, 2],
            budget_pairs=[["a", "b"]],
        )
    )
    store = Store(str(tmp_path / "v.db"))
    summary = await run_experiment(cfg, store, say=lambda m: None)
    assert summary.status == "finished", store.failed_attempts(summary.run_id)
    rows = store.results(summary.run_id)
    assert len(rows) == len(plan_trials(cfg))
    assert {r.params["variant"] for r in rows} == {
        "gtt",
        "gttq",
        "gtt-turns",
        "gttq-queries",
        "fdgtt",
        "fdgttq",
        "gdgtt",
    }
    by_variant = {v: [r for r in rows if r.params["variant"] == v] for v in ("gttq", "fdgtt")}
    queried = [r for r in by_variant["gttq"] if not r.params["x_is_target"]]
    assert queried and all("specimen" in r.histories for r in queried)
    assert all(r.details["phases"]["query"]["ended_by"] == "stop" for r in queried)
    budgeted = [
        r for r in rows if r.params["variant"] == "gttq-queries" and not r.params["x_is_target"]
    ]
    assert {r.details["phases"]["query"]["queries"] for r in budgeted} == {1, 2}
    assert {r.params["target"] for r in by_variant["fdgtt"]} == {"a", "b"}
    store.close()
