"""The GTT family's role instructions: built-in templates, each overridable by a file."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Literal, get_args

from turinglab.prompts import load_prompt

PromptRole = Literal[
    "distinguisher",  # GTT: the judge's instruction
    "actor",  # GTT: A imitating B; embeds the judge's first message
    "control",  # GTT: what a fresh B receives (the bare first message by default)
    "final",  # ask-for-answer at the turn cap
    "distinguisher_turns",  # controlled-turn: exactly $budget rounds
    "last_round",  # controlled-turn: the verdict request after the last round
    "actor_query",  # GTTQ: the actor's querying phase with a specimen of B
    "query_rule_stop",  # ... ended by STOP
    "query_rule_budget",  # ... ended after exactly $budget queries
    "fd_distinguisher",  # FD: D judges whether X is $target_name
    "fd_actor",  # FD: A imitating $target_name
    "fd_actor_query",  # FDGTTQ: A's querying phase with a specimen of the target
    "gd_query",  # GDGTT: D's querying round with the target
]


def _file_name(role: str) -> str:
    return role if role.startswith(("fd_", "gd_")) else f"gtt_{role}"


@dataclass(frozen=True)
class GTTPrompts:
    distinguisher: str
    actor: str
    control: str
    final: str
    distinguisher_turns: str
    last_round: str
    actor_query: str
    query_rule_stop: str
    query_rule_budget: str
    fd_distinguisher: str
    fd_actor: str
    fd_actor_query: str
    gd_query: str

    @classmethod
    def load(cls, overrides: Mapping[PromptRole, Path] | None = None) -> GTTPrompts:
        overrides = overrides or {}
        return cls(
            **{
                f.name: load_prompt(_file_name(f.name), overrides.get(f.name))  # type: ignore[call-overload]
                for f in fields(cls)
            }
        )


assert {f.name for f in fields(GTTPrompts)} == set(get_args(PromptRole))
