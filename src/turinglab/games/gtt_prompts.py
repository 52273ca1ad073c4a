"""The GTT family's role instructions: built-in templates, each overridable by a file.

Two built-in sets (`experiment.prompt_set`):
  paper  the default: each role is told what the GTT paper's Appendix B.1 prompt for it tells,
         no more and no less, in our own words (prompts/paper/). The verbatim text is not
         shipped; a lab that needs it gives it as override files.
  v1     the wording of the first releases (prompts/*.txt): a ½ prior and the turn cap told to
         the distinguisher. Kept so runs made with it keep their run ids.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Literal, get_args

from turinglab.prompts import has_builtin_prompt, load_prompt, placeholders

PromptSet = Literal["paper", "v1"]
DEFAULT_PROMPT_SET: PromptSet = "paper"
# Each set's folder under prompts/ (v1's files lie at the top, where they always were).
_FOLDERS: dict[str, str | None] = {"paper": "paper", "v1": None}

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
    "after_query",  # GTTQ/FDGTTQ: what ends the actor's querying phase (the judge's first message)
]

# Roles a set may lack (v1 has no after_query: its actor was handed the whole actor instruction
# again). A missing role is None, and is left out of the run's identity, so v1's run ids stay.
OPTIONAL_ROLES = frozenset({"after_query"})


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
    after_query: str | None = None

    @classmethod
    def load(
        cls,
        overrides: Mapping[PromptRole, Path] | None = None,
        prompt_set: str = DEFAULT_PROMPT_SET,
    ) -> GTTPrompts:
        if prompt_set not in _FOLDERS:
            raise ValueError(f"unknown prompt set {prompt_set!r} (known: {', '.join(_FOLDERS)})")
        overrides = overrides or {}
        folder = _FOLDERS[prompt_set]
        texts: dict[str, str | None] = {}
        for f in fields(cls):
            override = overrides.get(f.name)  # type: ignore[call-overload]
            name = _file_name(f.name)
            if (
                override is None
                and f.name in OPTIONAL_ROLES
                and not has_builtin_prompt(name, folder)
            ):
                texts[f.name] = None
            else:
                texts[f.name] = load_prompt(name, override, folder)
        return cls(**texts)  # type: ignore[arg-type]

    def identity(self) -> dict[str, str]:
        """The texts that make a run what it is (an absent optional role is not one)."""
        return {
            f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) is not None
        }


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
    "after_query": frozenset({"first_message"}),
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
    "after_query": frozenset({"first_message"}),
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


# The built-in templates of every set pass their own check.
assert all(
    template_problem(role, text) is None
    for s in _FOLDERS
    for role, text in GTTPrompts.load(prompt_set=s).identity().items()
)
