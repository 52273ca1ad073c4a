"""The GTT family's role instructions: built-in templates, each overridable by a file."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Literal, get_args

from turinglab.prompts import load_prompt, placeholders

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


# Placeholders GTTTrial.prompt fills for every role (games/gtt.py), and the extra ones some
# roles get; a template may use these and no others.
COMMON_PLACEHOLDERS = frozenset({"target_name", "max_turns", "budget", "max_queries"})
EXTRA_PLACEHOLDERS: dict[str, frozenset[str]] = {
    "actor": frozenset({"first_message"}),
    "control": frozenset({"first_message"}),
    "fd_actor": frozenset({"first_message"}),
    "actor_query": frozenset({"query_rule"}),
    "fd_actor_query": frozenset({"query_rule"}),
    "gd_query": frozenset({"query_rule"}),
}
# What a role cannot work without: the actor must see the judge's first message, a querying
# phase its rule, a budgeted rule its budget, an FD role the target it is about.
REQUIRED_PLACEHOLDERS: dict[str, frozenset[str]] = {
    "actor": frozenset({"first_message"}),
    "control": frozenset({"first_message"}),
    "fd_actor": frozenset({"first_message", "target_name"}),
    "actor_query": frozenset({"query_rule"}),
    "fd_actor_query": frozenset({"query_rule", "target_name"}),
    "gd_query": frozenset({"query_rule", "target_name"}),
    "query_rule_budget": frozenset({"budget"}),
    "distinguisher_turns": frozenset({"budget"}),
    "fd_distinguisher": frozenset({"target_name"}),
}


def template_problem(role: str, text: str) -> str | None:
    """Why `text` cannot serve as the `role` template (missing or unknown placeholders)."""
    allowed = COMMON_PLACEHOLDERS | EXTRA_PLACEHOLDERS.get(role, frozenset())
    used = placeholders(text)
    unknown = sorted(used - allowed)
    missing = sorted(REQUIRED_PLACEHOLDERS.get(role, frozenset()) - used)
    if unknown:
        return (
            f"unknown placeholder(s) {', '.join('$' + n for n in unknown)}; this role knows "
            f"{', '.join('$' + n for n in sorted(allowed))} (write $$ for a literal $)"
        )
    if missing:
        return (
            f"missing placeholder(s) {', '.join('$' + n for n in missing)}, which this role "
            "needs (the built-in template shows where they go)"
        )
    return None


# The built-in templates pass their own check.
assert all(
    template_problem(f.name, load_prompt(_file_name(f.name))) is None for f in fields(GTTPrompts)
)
