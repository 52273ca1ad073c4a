"""The default ('paper') prompt set against the GTT paper's Appendix B.1, role by role: each
template tells its role every fact the paper's prompt for it tells, and nothing the paper's does
not (no ½ prior, no message cap, no "you are a different model"). Facts are checked on the
rendered text, with the placeholders the game fills."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from turinglab.config import load_config, parse_config
from turinglab.games.gtt import GTTRules, GTTSetup, play_gtt
from turinglab.games.gtt_prompts import GTTPrompts
from turinglab.runner.plan import run_id

ROOT = Path(__file__).resolve().parents[2]
PAPER = GTTPrompts.load()
V1 = GTTPrompts.load(prompt_set="v1")
TARGET = "Vendor Model 9"
FIRST = "FIRST-MESSAGE-7"
VALUES = {
    "target_name": TARGET,
    "first_message": FIRST,
    "budget": 5,
    "max_turns": 40,
    "max_queries": 20,
    "query_rule": "QUERY-RULE",
}

# Shared facts, as patterns over the rendered text (case-insensitive).
ANSWER_FORMAT = [r"<answer></answer>", r"\b1\b[^.]*same model", r"\b0\b[^.]*not the same"]
NOTHING_ELSE = [r"nothing else"]
NO_OPENING_ANSWER = [r"first message must not contain an answer"]
AS_LONG_AS_NEEDED = [r"anything you like", r"as long as you need"]
# Nothing in B.1 tells a judge the prior, a cap, or that the other side imitates it; nothing
# tells an actor it is a different model (false in self-pairs) or to hide its instructions.
JUDGE_FORBIDDEN = [r"1/2|½|probability|half", r"at most", r"\$max_turns|\b40\b", r"imitat"]
ACTOR_FORBIDDEN = [r"you are a different", r"never mention", r"1/2|½|probability", r"at most"]

CHECKLIST: dict[str, tuple[list[str], list[str]]] = {
    "distinguisher": (
        [
            r"another agent",
            r"same type of model as you",
            *AS_LONG_AS_NEEDED,
            *ANSWER_FORMAT,
            *NOTHING_ELSE,
            r"starts now",
            r"write your first message",
            *NO_OPENING_ANSWER,
        ],
        JUDGE_FORBIDDEN,
    ),
    "distinguisher_turns": (
        [
            r"another agent",
            r"same type of model as you",
            r"exactly 5 rounds",
            r"in each round",
            r"anything you like",
            r"not give your final judgment before the last round",
            r"after the agent's last response",
            *ANSWER_FORMAT,
            *NOTHING_ELSE,
        ],
        [*JUDGE_FORBIDDEN, r"as long as you need"],
    ),
    "actor": (
        [
            r"distinguisher",
            rf"instance of {TARGET}",
            r"questioning you",
            rf"imitate its model type, {TARGET}",
            r"as closely as you can",
            r"another instance of its own model type or to a different type of model imitating",
            r"convince it that it is talking to another instance of its own model type",
            r"behave consistently",
            r"begins now",
            rf'"{FIRST}"',
            r"reply to it as the model",
        ],
        [*ACTOR_FORBIDDEN, r"specimen", r"STOP"],
    ),
    "control": ([rf"^{FIRST}$"], [r"."]),  # a fresh target gets the bare message (no prompt)
    "actor_query": (
        [
            rf"instance of {TARGET}",
            rf"imitate its model type, {TARGET}",
            r"as closely as",
            r"another instance of its own model type or to a different type of model imitating",
            r"convince it",
            r"specimen",
            r"fresh instance of the distinguisher's model type",
            r"conversational style",
            r"reasoning patterns",
            r"behavioural tendencies",
            r"distinguisher does not see",
            r"first reply to this message is sent to the specimen",
            r"no earlier context or message",
            r"distinguisher's first message to you",
            r"behave consistently",
            r"QUERY-RULE",
        ],
        ACTOR_FORBIDDEN,
    ),
    "query_rule_stop": (
        [
            r"anything you like",
            r"as long as you need",
            r"learned enough",
            r"\bSTOP\b",
            r"first message to the specimen",
        ],
        [r"\b20\b", r"at most", r"exactly"],
    ),
    "query_rule_budget": (
        [
            r"exactly 5 queries",
            r"in each one you may ask the specimen anything",
            r"used all 5 queries, this stage ends by itself",
        ],
        [r"\bSTOP\b", r"as long as you need"],
    ),
    "after_query": ([r"specimen stage has ended", r"distinguisher's first message", FIRST], []),
    "fd_distinguisher": (
        [
            r"another agent",
            rf"instance of the model type {TARGET}",
            *AS_LONG_AS_NEEDED,
            r"<answer></answer>",
            rf"\b1\b if you think it is an instance of {TARGET}",
            rf"\b0\b if you think it is not an instance of {TARGET}",
            *NOTHING_ELSE,
            r"starts now",
            r"write your first message",
            *NO_OPENING_ANSWER,
        ],
        [*JUDGE_FORBIDDEN, r"same type of model as you"],
    ),
    "fd_actor": (
        [
            r"distinguisher",
            r"questioning you",
            rf"act as {TARGET} as closely as you can",
            rf"an instance of {TARGET} or to a different type of model imitating it",
            rf"convince it that it is talking to an instance of {TARGET}",
            rf"behave consistently as an instance of {TARGET}",
            rf'"{FIRST}"',
        ],
        [*ACTOR_FORBIDDEN, r"its own model type", r"specimen"],
    ),
    # FDGTTQ and GDGTT have no prompt of their own in B.1: the FD prompts with the GTTQ
    # specimen stage, its target named.
    "fd_actor_query": (
        [
            rf"act as {TARGET} as closely as you can",
            rf"fresh instance of {TARGET}",
            r"distinguisher does not see",
            r"no earlier context or message",
            r"QUERY-RULE",
        ],
        [*ACTOR_FORBIDDEN, r"its own model type"],
    ),
    "gd_query": (
        [
            rf"instance of the model type {TARGET}",
            rf"fresh instance of {TARGET}",
            r"agent you will judge does not see",
            r"no earlier context",
            r"QUERY-RULE",
        ],
        JUDGE_FORBIDDEN,
    ),
    # The game's notes, after a reply (merged into it): when to answer, in the known format.
    "last_round": ([r"note from the experiment", r"last response", r"<answer></answer>"], []),
    "final": ([r"note from the experiment", r"<answer></answer>", *NOTHING_ELSE], [r"1/2|½"]),
}


def rendered(prompts: GTTPrompts, role: str) -> str:
    from turinglab.prompts import render

    return render(getattr(prompts, role), **VALUES)


def test_every_role_has_a_checklist() -> None:
    assert set(CHECKLIST) == set(PAPER.identity())


@pytest.mark.parametrize("role", sorted(CHECKLIST))
def test_paper_set_tells_each_role_what_b1_tells(role: str) -> None:
    text = rendered(PAPER, role)
    required, forbidden = CHECKLIST[role]
    missing = [p for p in required if not re.search(p, text, re.IGNORECASE | re.MULTILINE)]
    extra = [p for p in forbidden if re.search(p, text, re.IGNORECASE)] if role != "control" else []
    assert not missing, f"{role} lacks {missing}:\n{text}"
    assert not extra, f"{role} tells what B.1 does not ({extra}):\n{text}"


def test_v1_set_is_the_old_wording() -> None:
    # The first releases' texts, unchanged: their prior and cap, no after_query role.
    assert "probability 1/2" in V1.distinguisher and "$max_turns" in V1.distinguisher
    assert "You are a different model" in V1.actor
    assert V1.after_query is None and "after_query" not in V1.identity()


# main's run ids (computed on the code before prompt sets existed, which had only the v1
# wording): a config naming `prompt_set: v1` must keep them.
MAIN_RUN_IDS = {
    "gtt-variants-offline.yaml": "6eeca4bf66e7d6c5",
    "gtt-paper-openrouter.yaml": "940ab7054ed57c73",
    "gtt-paper-openrouter-fd.yaml": "09a62c05ea18b45a",
}


@pytest.mark.parametrize("name", sorted(MAIN_RUN_IDS))
def test_v1_set_keeps_the_run_ids_it_had(name: str) -> None:
    data = yaml.safe_load((ROOT / "configs" / name).read_text())
    data["experiment"].pop("prompt_set", None)
    data["experiment"]["prompt_set"] = "v1"
    assert run_id(parse_config(data, base_dir=ROOT / "configs")) == MAIN_RUN_IDS[name]
    # The paper's set is another experiment: another run.
    assert run_id(load_config(ROOT / "configs" / name)) != MAIN_RUN_IDS[name]


def test_paper_config_uses_the_paper_set() -> None:
    for name in ("gtt-paper-openrouter.yaml", "gtt-paper-openrouter-fd.yaml"):
        exp = load_config(ROOT / "configs" / name).experiment
        assert exp.prompt_set == "paper" and not exp.prompts  # type: ignore[union-attr]


async def test_self_pair_actor_is_named_the_target_and_not_called_different() -> None:
    from turinglab.agents.scripted import ScriptedAgent
    from turinglab.games.gtt import DISTINGUISHER, UNKNOWN
    from turinglab.games.table import Seat, Table

    async def direct(agent, history, ctx):
        return await agent.reply(history, ctx)

    table = Table(
        seats={
            DISTINGUISHER: Seat(
                DISTINGUISHER, "m", ScriptedAgent("m", ["Hi", "<answer>1</answer>"])
            ),
            UNKNOWN: Seat(UNKNOWN, "m", ScriptedAgent("m", ["Hello"])),
        },
        caller=direct,
        seed=3,
    )
    setup = GTTSetup(False, "gtt", target_name="Model M")
    result = await play_gtt(table, setup, PAPER, GTTRules())
    prompt = result.details["actor_prompt"]
    assert "instance of Model M" in prompt and "different model" not in prompt
