"""The Generalized Turing Test, GTT(A, B) — Definition 1 of Mitropolsky et al.

A fresh instance of B (the distinguisher) talks with an unknown interlocutor X: a fresh B, or a
fresh A told to imitate B (the actor). The distinguisher ends the game with <answer>1</answer>
("X is my own model type") or <answer>0</answer>. Instructions are ordinary user messages; the
actor's instruction embeds the distinguisher's first message and its first reply answers it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from turinglab.games.table import Table
from turinglab.prompts import load_prompt, render

DISTINGUISHER = "distinguisher"
UNKNOWN = "unknown"

ANSWERED = "answered"
OPENING_ANSWER = "opening-answer"
NO_ANSWER = "no-answer"

TurnCapPolicy = Literal["no-answer", "ask-for-answer"]
PromptRole = Literal["distinguisher", "actor", "control", "final"]

# At the turn cap (ask-for-answer) the verdict is a forced choice between these two replies.
FORCED_CHOICES = ("<answer>0</answer>", "<answer>1</answer>")

_ANSWER = re.compile(r"<answer>\s*(.*?)\s*</answer>", re.IGNORECASE | re.DOTALL)


@dataclass(frozen=True)
class ParsedAnswer:
    found: bool  # an <answer>…</answer> tag is present
    value: int | None  # 0 or 1 when the tag holds exactly that


def parse_answer(text: str) -> ParsedAnswer:
    """The first <answer> tag decides; anything but a bare 0 or 1 inside it is unparseable."""
    match = _ANSWER.search(text)
    if match is None:
        return ParsedAnswer(False, None)
    inner = match.group(1).strip()
    return ParsedAnswer(True, int(inner) if inner in ("0", "1") else None)


@dataclass(frozen=True)
class GTTPrompts:
    distinguisher: str
    actor: str
    control: str
    final: str

    @classmethod
    def load(cls, overrides: Mapping[PromptRole, Path] | None = None) -> GTTPrompts:
        overrides = overrides or {}
        return cls(
            **{
                role: load_prompt(f"gtt_{role}", overrides.get(role))
                for role in ("distinguisher", "actor", "control", "final")
            }
        )


@dataclass
class GameResult:
    """How a trial ended. `verdict` is the parsed answer; `correct` is None when there is none."""

    status: str
    verdict: int | None
    correct: bool | None
    details: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class GTTRules:
    max_distinguisher_turns: int = 40
    on_turn_cap: TurnCapPolicy = "no-answer"


async def play_gtt(
    table: Table, x_is_target: bool, prompts: GTTPrompts, rules: GTTRules
) -> GameResult:
    """Play one trial at a table seated with DISTINGUISHER (B) and UNKNOWN (B, or A acting as B)."""
    table.tell(
        DISTINGUISHER, render(prompts.distinguisher, max_turns=rules.max_distinguisher_turns)
    )
    # The first message reaches X inside X's instruction, so only the distinguisher sees it bare.
    first = await table.speak(DISTINGUISHER, visible_to=(DISTINGUISHER,))
    details: dict[str, Any] = {
        "x_is_target": x_is_target,
        "first_distinguisher_message": first.text,
        "actor_prompt": None,
    }

    def finish(
        status: str, final_text: str, answer: ParsedAnswer, turns: int, **extra: Any
    ) -> GameResult:
        verdict = answer.value
        details.update(
            raw_final_message=final_text,
            distinguisher_turns=turns,
            unknown_turns=sum(1 for m in table.messages if m.sender == UNKNOWN),
            **extra,
        )
        if status == ANSWERED and verdict is None:
            status = NO_ANSWER
            details["no_answer_reason"] = "unparseable"
        correct = None if verdict is None else (verdict == 1) == x_is_target
        return GameResult(status, verdict, correct, details)

    opening = parse_answer(first.text)
    if opening.found:
        return finish(OPENING_ANSWER, first.text, opening, 1)

    template = prompts.control if x_is_target else prompts.actor
    instruction = render(template, first_message=first.text)
    if not x_is_target:
        details["actor_prompt"] = instruction
    table.tell(UNKNOWN, instruction)

    turns = 1
    while True:
        await table.speak(UNKNOWN)
        message = await table.speak(DISTINGUISHER)
        turns += 1
        answer = parse_answer(message.text)
        if answer.found:
            return finish(ANSWERED, message.text, answer, turns)
        if turns >= rules.max_distinguisher_turns:
            break

    if rules.on_turn_cap == "ask-for-answer":
        table.tell(DISTINGUISHER, render(prompts.final))
        message = await table.speak(
            DISTINGUISHER, visible_to=(DISTINGUISHER,), choices=FORCED_CHOICES
        )
        answer = parse_answer(message.text)
        if answer.found:
            return finish(ANSWERED, message.text, answer, turns + 1, asked_for_answer=True)
        return finish(NO_ANSWER, message.text, answer, turns + 1, no_answer_reason="turn-cap")
    return finish(NO_ANSWER, message.text, answer, turns, no_answer_reason="turn-cap")
