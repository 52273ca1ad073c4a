"""The GTT game with scripted agents: turn order, visibility, parsing and outcomes."""

from __future__ import annotations

import pytest

from turinglab.agents.base import AgentReply, CallContext, ChatMessage
from turinglab.agents.scripted import ScriptedAgent
from turinglab.games.gtt import (
    DISTINGUISHER,
    UNKNOWN,
    GTTRules,
    GTTSetup,
    parse_answer,
    play_gtt,
)
from turinglab.games.gtt_prompts import GTTPrompts
from turinglab.games.table import GAME, Seat, Table


async def direct_call(agent, history: list[ChatMessage], ctx: CallContext) -> AgentReply:
    return await agent.reply(history, ctx)


def make_table(distinguisher: list[str], unknown: list[str]) -> Table:
    return Table(
        seats={
            DISTINGUISHER: Seat(DISTINGUISHER, "B", ScriptedAgent("B", distinguisher)),
            UNKNOWN: Seat(UNKNOWN, "A", ScriptedAgent("A", unknown)),
        },
        caller=direct_call,
        seed=7,
    )


PROMPTS = GTTPrompts.load()


@pytest.mark.parametrize(
    ("text", "found", "value"),
    [
        ("I think <answer>1</answer>", True, 1),
        ("<ANSWER> 0 </ANSWER>", True, 0),
        # Tags that disagree are no verdict (the first tag used to decide).
        ("<answer>\n1\n</answer> and later <answer>0</answer>", True, None),
        ("<answer>1</answer> yes, <answer> 1 </answer>", True, 1),
        ("<answer>maybe</answer>", True, None),
        ("<answer>10</answer>", True, None),
        ("no tag here, answer 1", False, None),
        ("<answer>1", False, None),
    ],
)
def test_parse_answer(text: str, found: bool, value: int | None) -> None:
    parsed = parse_answer(text)
    assert (parsed.found, parsed.value) == (found, value)


async def test_actor_branch_turn_order_and_visibility() -> None:
    table = make_table(
        ["Hello, who are you?", "Tell me a joke.", "Done. <answer>0</answer>"],
        ["I am a model.", "Why did the chicken..."],
    )
    result = await play_gtt(table, GTTSetup(False), prompts=PROMPTS, rules=GTTRules())
    assert result.status == "answered"
    assert result.verdict == 0 and result.correct is True
    senders = [m.sender for m in table.messages]
    assert senders == [GAME, DISTINGUISHER, GAME, UNKNOWN, DISTINGUISHER, UNKNOWN, DISTINGUISHER]
    # The first distinguisher message reaches X only inside X's instruction.
    first = table.messages[1]
    assert first.visible_to == (DISTINGUISHER,)
    actor_instruction = table.messages[2]
    assert actor_instruction.visible_to == (UNKNOWN,)
    assert "Hello, who are you?" in actor_instruction.text
    assert "<answer></answer>" in table.messages[0].text  # the distinguisher is told the format
    # Each participant's own view: its messages as assistant, what it saw as user.
    d_view = table.view(DISTINGUISHER)
    assert [m.role for m in d_view] == [
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
        "assistant",
    ]
    assert d_view[2].content == "I am a model."
    x_view = table.view(UNKNOWN)
    assert x_view[0].role == "user" and "Hello, who are you?" in x_view[0].content
    assert [m.content for m in x_view[1:]] == [
        "I am a model.",
        "Tell me a joke.",
        "Why did the chicken...",
        "Done. <answer>0</answer>",
    ]
    assert result.details["distinguisher_turns"] == 3
    assert result.details["unknown_turns"] == 2
    assert result.details["actor_prompt"] == actor_instruction.text
    assert result.details["raw_final_message"] == "Done. <answer>0</answer>"


async def test_control_branch_gets_the_message_verbatim() -> None:
    table = make_table(["Hi there", "<answer>1</answer>"], ["Hello!"])
    result = await play_gtt(table, GTTSetup(True), prompts=PROMPTS, rules=GTTRules())
    assert table.messages[2].text == "Hi there"  # the default control template is the message
    assert result.details["actor_prompt"] is None
    assert (result.status, result.verdict, result.correct) == ("answered", 1, True)


async def test_wrong_verdict_is_incorrect() -> None:
    table = make_table(["Hi", "<answer>0</answer>"], ["Hello"])
    result = await play_gtt(table, GTTSetup(True), prompts=PROMPTS, rules=GTTRules())
    assert (result.verdict, result.correct) == (0, False)


async def test_opening_answer_is_kept_not_discarded() -> None:
    table = make_table(["<answer>1</answer> hello"], ["never called"])
    result = await play_gtt(table, GTTSetup(False), prompts=PROMPTS, rules=GTTRules())
    assert result.status == "opening-answer"
    assert (result.verdict, result.correct) == (1, False)
    assert all(m.sender != UNKNOWN for m in table.messages)


async def test_turn_cap_gives_no_answer() -> None:
    table = make_table(["question?"], ["reply"])
    result = await play_gtt(
        table, GTTSetup(False), prompts=PROMPTS, rules=GTTRules(max_distinguisher_turns=4)
    )
    assert result.status == "no-answer"
    assert result.verdict is None and result.correct is None
    assert result.details["no_answer_reason"] == "turn-cap"
    assert result.details["distinguisher_turns"] == 4


async def test_turn_cap_can_ask_for_the_answer() -> None:
    table = make_table(["q1", "q2", "<answer>1</answer>"], ["r"])
    rules = GTTRules(max_distinguisher_turns=2, on_turn_cap="ask-for-answer")
    result = await play_gtt(table, GTTSetup(True), prompts=PROMPTS, rules=rules)
    assert result.status == "answered" and result.verdict == 1
    assert result.details["asked_for_answer"] is True
    final_request = table.messages[-2]
    assert final_request.sender == GAME and final_request.visible_to == (DISTINGUISHER,)


async def test_unparseable_answer_is_visible_no_answer() -> None:
    table = make_table(["Hi", "<answer>probably the same</answer>"], ["Hey"])
    result = await play_gtt(table, GTTSetup(True), prompts=PROMPTS, rules=GTTRules())
    assert result.status == "no-answer"
    assert result.details["no_answer_reason"] == "unparseable"


async def test_call_seeds_differ_per_call_and_are_reproducible() -> None:
    seen: list[int] = []

    async def recording_call(agent, history, ctx):
        seen.append(ctx.seed)
        return await agent.reply(history, ctx)

    for _ in range(2):
        table = make_table(["a", "b", "<answer>1</answer>"], ["x"])
        table.caller = recording_call
        await play_gtt(table, GTTSetup(True), prompts=PROMPTS, rules=GTTRules())
    half = len(seen) // 2
    assert seen[:half] == seen[half:]
    assert len(set(seen[:half])) == half


def test_prompt_override_from_file(tmp_path) -> None:
    path = tmp_path / "actor.txt"
    path.write_text("Pretend. First: $first_message")
    prompts = GTTPrompts.load({"actor": path})
    assert prompts.actor.startswith("Pretend.")
    assert prompts.distinguisher == PROMPTS.distinguisher


async def test_final_ask_is_a_forced_choice() -> None:
    contexts: list[CallContext] = []

    async def recording_call(agent, history, ctx):
        contexts.append(ctx)
        return await agent.reply(history, ctx)

    table = make_table(["q1", "q2", "<answer>0</answer>"], ["r"])
    table.caller = recording_call
    rules = GTTRules(max_distinguisher_turns=2, on_turn_cap="ask-for-answer")
    await play_gtt(table, GTTSetup(False), prompts=PROMPTS, rules=rules)
    assert contexts[-1].choices == ("<answer>0</answer>", "<answer>1</answer>")
    assert all(not c.choices for c in contexts[:-1])
