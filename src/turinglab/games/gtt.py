"""The Generalized Turing Test family — Mitropolsky et al., Definitions 1 and after.

GTT(A, B): a fresh instance of B (the distinguisher) talks with an unknown interlocutor X: a
fresh B, or a fresh A told to imitate B (the actor). It ends the game with <answer>1</answer>
("X is my own model type") or <answer>0</answer>. Instructions are ordinary user messages; the
actor's instruction embeds the distinguisher's first message and its first reply answers it.

Variants (`GTTSetup.variant`):
  gtt           the plain game
  gttq          the actor first queries a fresh specimen of B (ends with STOP or at the cap)
  gtt-turns     controlled-turn: the distinguisher has exactly `budget` rounds, then answers
  gttq-queries  controlled-query: the actor gets exactly `budget` specimen queries
  fdgtt         a fixed distinguisher D judges whether X is the target B (B, or A acting as B)
  fdgttq        FDGTT where the actor first queries a specimen of B
  gdgtt         FDGTT where D first gets a querying round with B
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from turinglab.games.gtt_prompts import GTTPrompts, PromptRole
from turinglab.games.query_phase import run_query_phase
from turinglab.games.spec import GameResult
from turinglab.games.table import Table
from turinglab.prompts import render
from turinglab.variants import (
    ACTOR_QUERIES,
    FD_VARIANTS,
    VARIANTS,
)

DISTINGUISHER = "distinguisher"
UNKNOWN = "unknown"

ANSWERED = "answered"
OPENING_ANSWER = "opening-answer"
NO_ANSWER = "no-answer"


TurnCapPolicy = Literal["no-answer", "ask-for-answer"]
AmbiguityPolicy = Literal["no-answer", "re-ask"]

# A verdict the game asks for (turn cap, last controlled round) is a forced choice between these.
FORCED_CHOICES = ("<answer>0</answer>", "<answer>1</answer>")

_ANSWER = re.compile(r"<answer>\s*(.*?)\s*</answer>", re.IGNORECASE | re.DOTALL)


# Why a message with <answer> tags gave no verdict (the trial's no_answer_reason).
UNPARSEABLE = "unparseable"  # the tag holds something other than a bare 0 or 1
CONFLICTING = "conflicting-answers"  # tags with different contents
ECHOED = "echoed-example"  # the tags are those of the instruction's own example


@dataclass(frozen=True)
class ParsedAnswer:
    found: bool  # an <answer>…</answer> tag is present
    value: int | None  # 0 or 1 when the tags agree on exactly that
    problem: str | None = None  # why there are tags but no verdict


def answer_tags(text: str) -> tuple[str, ...]:
    """The contents of every <answer>…</answer> tag, in order."""
    return tuple(m.group(1).strip() for m in _ANSWER.finditer(text))


def parse_answer(text: str, example: tuple[str, ...] = ()) -> ParsedAnswer:
    """A verdict only when every tag holds the same bare 0 or 1. Tags that repeat `example`
    (those of the instruction the judge was given), or disagree, give none: a model that
    quotes its instruction has not answered."""
    tags = answer_tags(text)
    if not tags:
        return ParsedAnswer(False, None)
    if example and tags == example:
        return ParsedAnswer(True, None, ECHOED)
    if len(set(tags)) > 1:
        return ParsedAnswer(True, None, CONFLICTING)
    if tags[0] not in ("0", "1"):
        return ParsedAnswer(True, None, UNPARSEABLE)
    return ParsedAnswer(True, int(tags[0]))


@dataclass(frozen=True)
class GTTRules:
    max_distinguisher_turns: int = 40
    on_turn_cap: TurnCapPolicy = "no-answer"
    max_specimen_turns: int = 20
    on_ambiguous_answer: AmbiguityPolicy = "no-answer"


@dataclass(frozen=True)
class GTTSetup:
    """What one trial is: the variant, which branch, and the names the prompts mention."""

    x_is_target: bool
    variant: str = "gtt"
    target_name: str = ""  # how FD prompts name the target
    budget: int | None = None


class _Trial:
    """The state of one trial while it is played (kept off the module to stay re-entrant)."""

    def __init__(self, table: Table, setup: GTTSetup, prompts: GTTPrompts, rules: GTTRules):
        self.table, self.setup, self.prompts, self.rules = table, setup, prompts, rules
        self.details: dict[str, Any] = {
            "variant": setup.variant,
            "x_is_target": setup.x_is_target,
            "budget": setup.budget,
            "actor_prompt": None,
            "phases": {},
        }
        self.example: tuple[str, ...] = ()  # the answer tags of the judge's instruction

    def prompt(self, role: PromptRole, **values: Any) -> str:
        template: str = getattr(self.prompts, role)
        return render(
            template,
            target_name=self.setup.target_name,
            max_turns=self.rules.max_distinguisher_turns,
            budget=self.setup.budget,
            max_queries=self.rules.max_specimen_turns,
            **values,
        )

    def query_rule(self, budget: int | None) -> str:
        return self.prompt("query_rule_budget" if budget else "query_rule_stop")

    async def query(self, querier: str, role: PromptRole, budget: int | None) -> None:
        phase = await run_query_phase(
            self.table,
            querier,
            self.prompt(role, query_rule=self.query_rule(budget)),
            budget=budget,
            cap=self.rules.max_specimen_turns,
        )
        self.details["phases"]["query"] = {
            "querier": querier,
            "queries": phase.queries,
            "ended_by": phase.ended_by,
            "first_seq": phase.first_seq,
            "last_seq": phase.last_seq,
        }
        self.details["specimen_queries"] = phase.queries

    def finish(
        self, status: str, final_text: str, answer: ParsedAnswer, turns: int, **extra: Any
    ) -> GameResult:
        verdict = answer.value
        self.details.update(
            raw_final_message=final_text,
            distinguisher_turns=turns,
            unknown_turns=sum(
                1 for m in self.table.messages if m.sender == UNKNOWN and m.phase == "main"
            ),
            **extra,
        )
        if status == ANSWERED and verdict is None:
            status = NO_ANSWER
            self.details["no_answer_reason"] = answer.problem or UNPARSEABLE
        main = [m.seq for m in self.table.messages if m.phase == "main"]
        self.details["phases"]["main"] = {"first_seq": main[0], "last_seq": main[-1]}
        correct = None if verdict is None else (verdict == 1) == self.setup.x_is_target
        return GameResult(status, verdict, correct, self.details)


async def play_gtt(
    table: Table, setup: GTTSetup, prompts: GTTPrompts, rules: GTTRules
) -> GameResult:
    """Play one trial at a table seated with DISTINGUISHER and UNKNOWN (and SPECIMEN, a fresh
    target instance, for the querying variants)."""
    if setup.variant not in VARIANTS:
        raise ValueError(f"unknown GTT variant {setup.variant!r} (known: {', '.join(VARIANTS)})")
    trial = _Trial(table, setup, prompts, rules)
    # Every history sent alternates user/assistant: the game's notes join the adjacent turn.
    table.alternate_roles = True
    fd = setup.variant in FD_VARIANTS
    pair = (DISTINGUISHER, UNKNOWN)

    if setup.variant == "gdgtt":
        await trial.query(DISTINGUISHER, "gd_query", None)
    if setup.variant == "gtt-turns":
        opening = trial.prompt("distinguisher_turns")
    else:
        opening = trial.prompt("fd_distinguisher" if fd else "distinguisher")
    table.tell(DISTINGUISHER, opening)
    trial.example = answer_tags(opening)
    # The first message reaches X inside X's instruction, so only the distinguisher sees it bare.
    first = await table.speak(DISTINGUISHER, visible_to=(DISTINGUISHER,))
    trial.details["first_distinguisher_message"] = first.text
    answer = parse_answer(first.text, trial.example)
    if answer.value is not None:
        return trial.finish(OPENING_ANSWER, first.text, answer, 1)
    if answer.found:  # tags but no verdict (the format quoted, say): not an answer, play on
        trial.details["opening_tags"] = answer.problem

    if setup.x_is_target:
        instruction = trial.prompt("control", first_message=first.text)
    else:
        if setup.variant in ACTOR_QUERIES:
            budget = setup.budget if setup.variant == "gttq-queries" else None
            await trial.query(UNKNOWN, "fd_actor_query" if fd else "actor_query", budget)
        # After a querying phase the actor, already told its task, gets the judge's first
        # message (a set without that role repeats the whole actor instruction instead).
        role: PromptRole = "fd_actor" if fd else "actor"
        if setup.variant in ACTOR_QUERIES and prompts.after_query is not None:
            role = "after_query"
        instruction = trial.prompt(role, first_message=first.text)
        trial.details["actor_prompt"] = instruction
    table.tell(UNKNOWN, instruction)

    turns = 1
    controlled = setup.variant == "gtt-turns"
    cap = setup.budget if controlled and setup.budget else rules.max_distinguisher_turns
    while True:
        await table.speak(UNKNOWN, visible_to=pair)
        if controlled and turns >= cap:
            break  # the last round is over: the game asks for the verdict
        message = await table.speak(DISTINGUISHER, visible_to=pair)
        turns += 1
        answer = parse_answer(message.text, trial.example)
        if answer.found:
            early = {"early_answer": True} if controlled else {}
            if answer.value is None and rules.on_ambiguous_answer == "re-ask":
                return await _re_ask(trial, message.text, answer, turns, early)
            return trial.finish(ANSWERED, message.text, answer, turns, **early)
        if not controlled and turns >= cap:
            break

    if controlled or rules.on_turn_cap == "ask-for-answer":
        table.tell(DISTINGUISHER, trial.prompt("last_round" if controlled else "final"))
        message = await table.speak(
            DISTINGUISHER, visible_to=(DISTINGUISHER,), choices=FORCED_CHOICES
        )
        answer = parse_answer(message.text, trial.example)
        if answer.found:
            return trial.finish(ANSWERED, message.text, answer, turns + 1, asked_for_answer=True)
        return trial.finish(NO_ANSWER, message.text, answer, turns + 1, no_answer_reason="turn-cap")
    return trial.finish(NO_ANSWER, message.text, answer, turns, no_answer_reason="turn-cap")


async def _re_ask(
    trial: _Trial, said: str, answer: ParsedAnswer, turns: int, extra: dict[str, Any]
) -> GameResult:
    """The final message had tags but no verdict: ask once more, as a forced choice. The first
    reply's problem is kept; a second reply without a verdict is a no-answer."""
    table = trial.table
    table.tell(DISTINGUISHER, trial.prompt("final"))
    message = await table.speak(DISTINGUISHER, visible_to=(DISTINGUISHER,), choices=FORCED_CHOICES)
    again = parse_answer(message.text, trial.example)
    return trial.finish(ANSWERED, message.text, again, turns + 1, re_asked=answer.problem, **extra)
