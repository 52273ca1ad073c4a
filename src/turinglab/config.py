"""Experiment configuration: typed, validated at the edge, with errors that name the field.

A config file has four parts: `agents` (named agent settings), `experiment` (the game and its
design), `runner` (how fast to go: never part of a run's identity) and `store` (where results go).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from pathlib import Path
from types import UnionType
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from yaml.nodes import Node

# Agent settings live next to the agents (agents/config.py); re-exported for config users.
from turinglab.agents.config import (
    EMBEDDED_AGENTS,
    AgentConfig,
    ScriptedAgentConfig,
)
from turinglab.agents.config import TRANSPORT_FIELDS as TRANSPORT_FIELDS
from turinglab.agents.config import ElizaAgentConfig as ElizaAgentConfig
from turinglab.agents.config import LocalAgentConfig as LocalAgentConfig
from turinglab.agents.config import OpenAIAgentConfig as OpenAIAgentConfig
from turinglab.config_yaml import YAMLProblem, explain_at, load_yaml
from turinglab.games.conversation import ConversationExperiment
from turinglab.games.gtt_config import AdaptiveSettings as AdaptiveSettings
from turinglab.games.gtt_config import GTTExperiment
from turinglab.games.gtt_prompts import template_problem
from turinglab.games.itt_response import ITTResponseExperiment
from turinglab.games.live_itt import LiveITTExperiment
from turinglab.games.strong import StrongExperiment
from turinglab.games.three_party import ThreePartyExperiment
from turinglab.games.two_party import TwoPartyExperiment


class ConfigError(ValueError):
    """A config problem, phrased for the person who wrote the file."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# The agent kinds, read off the union: `kind: Literal["..."]` of each agent model.
AGENT_KINDS: tuple[str, ...] = tuple(
    get_args(model.model_fields["kind"].annotation)[0]
    for model in get_args(get_args(AgentConfig)[0])
)


class RunnerSettings(_Strict):
    """How hard to push. None of this changes results, so none of it is in a run's identity."""

    max_trials_in_flight: int = Field(default=16, ge=1)
    max_attempts: int = Field(default=3, ge=1, description="attempts per trial, first included")
    max_calls_per_endpoint: int = Field(default=64, ge=1)
    call_retries: int = Field(default=6, ge=0, description="retries of one API call")
    backoff_base_s: float = Field(default=1.0, gt=0)
    backoff_max_s: float = Field(default=60.0, gt=0)
    # Between attempts of one trial that failed on a transient fault (its call retries spent):
    # exponential with jitter, at least the server's Retry-After, so an outage of tens of
    # seconds does not use up every attempt at once.
    attempt_backoff_base_s: float = Field(default=10.0, ge=0)
    attempt_backoff_max_s: float = Field(default=300.0, ge=0)
    budget_usd: float | None = Field(
        default=None,
        gt=0,
        description="stop starting new trials once the run has spent this much (agents' prices)",
    )


# Every game's experiment model; `experiment.game` picks one. A new game adds its model here.
Experiment = Annotated[
    GTTExperiment
    | ThreePartyExperiment
    | TwoPartyExperiment
    | StrongExperiment
    | ConversationExperiment
    | ITTResponseExperiment
    | LiveITTExperiment,
    Field(discriminator="game"),
]

# The game names, read off the union: `game: Literal["..."]` of each model.
GAMES: tuple[str, ...] = tuple(
    get_args(model.model_fields["game"].annotation)[0]
    for model in get_args(get_args(Experiment)[0])
)


class ExperimentConfig(_Strict):
    name: str = Field(min_length=1)
    description: str = ""
    agents: dict[str, AgentConfig] = Field(default_factory=dict)
    experiment: Experiment
    runner: RunnerSettings = RunnerSettings()
    store: str | None = Field(default=None, description="SQLite path or database URL")
    # `turinglab serve` only: the study's pages and arena settings, checked by the arena
    # (arena/core/modes.py ArenaSettings, arena/core/study_config.py) as the server starts.
    arena: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _agents_known(self) -> ExperimentConfig:
        known = self.all_agents()
        for where, name in _agent_references(self.experiment):
            if name not in known:
                raise ValueError(
                    f"experiment.{where}: unknown agent {name!r} "
                    f"(declared: {sorted(self.agents)}; embedded: {sorted(EMBEDDED_AGENTS)})"
                )
        return self

    def all_agents(self) -> dict[str, AgentConfig]:
        """Embedded agents, overridden or extended by the config's own."""
        return {**EMBEDDED_AGENTS, **self.agents}

    def used_agents(self) -> dict[str, AgentConfig]:
        known = self.all_agents()
        return {name: known[name] for name in self.experiment.agent_names()}


def _agent_references(experiment: BaseModel) -> list[tuple[str, str]]:
    """(field path, agent name) for every agent an experiment seats, in field order: lists of
    names (`universe[1]`) and lists of entries with an `agent` (`ai_witnesses[0].agent`)."""
    refs: list[tuple[str, str]] = []
    for field_name in type(experiment).model_fields:
        value = getattr(experiment, field_name)
        if not isinstance(value, list):
            continue
        for i, item in enumerate(value):
            if isinstance(item, str) and field_name in AGENT_LIST_FIELDS:
                refs.append((f"{field_name}[{i}]", item))
            elif isinstance(item, tuple) and field_name in AGENT_LIST_FIELDS:
                refs += [(f"{field_name}[{i}][{j}]", name) for j, name in enumerate(item)]
            elif isinstance(item, BaseModel) and isinstance(getattr(item, "agent", None), str):
                refs.append((f"{field_name}[{i}].agent", item.agent))  # type: ignore[attr-defined]
    return refs


# The experiment fields, across games, whose strings name agents.
AGENT_LIST_FIELDS = frozenset(
    {
        "universe",
        "distinguishers",
        "interrogators",
        "human_witnesses",
        "stand_ins",
        "investigators",
        "systems",
        "humans",
        "pairs",
        "base_models",
        "responders",
        "ai_agents",
    }
)


def _format_validation_error(err: ValidationError, source: str, root: Node | None = None) -> str:
    lines = [f"config error in {source}:"]
    for e in err.errors():
        msg = e["msg"].removeprefix("Value error, ")
        loc = list(e["loc"])
        # The experiment union puts the chosen game's tag in the path: experiment.gtt.x → x.
        if loc[:1] == ["experiment"] and len(loc) > 1 and loc[1] in GAMES:
            del loc[1]
        if e["type"] in ("union_tag_invalid", "union_tag_not_found"):
            # The union's own discriminator: `game` of the experiment, `kind` of an agent.
            field, choices = _tag_of(e)
            loc.append(field)
            given = (e.get("ctx") or {}).get("tag")
            msg = f"unknown {field} {given!r}" if given is not None else "missing"
            msg += f"; give one of: {', '.join(choices)}"
        # An agent's kind is in the path too: agents.x.scripted.replys → agents.x.replys.
        if loc[:1] == ["agents"] and len(loc) > 2 and loc[2] in AGENT_KINDS:
            del loc[2]
        if e["type"] == "extra_forbidden":
            close = difflib.get_close_matches(str(loc[-1]), _fields_at(e["loc"][:-1]), n=1)
            msg = f"unknown key; did you mean {close[0]!r}?" if close else "unknown key"
        # A YAML 1.1 surprise (`no` read as false) is named, with the quoting that fixes it,
        # where quoting would fix it: a value of the wrong type that text would have been.
        explained = (
            explain_at(root, tuple(loc))
            if root is not None and e["type"] in _QUOTING_HELPS
            else None
        )
        if explained:
            msg = f"{msg}: {explained}"
        # Whole-config checks name their field themselves, so they carry no location.
        where = ".".join(str(p) for p in loc)
        lines.append(f"  {where}: {msg}" if where else f"  {msg}")
    if len(lines) == 2:  # one problem: one line
        return f"{lines[0]} {lines[1].strip()}"
    return "\n".join(lines)


# Errors a quoted (text) value could fix: a YAML 1.1 boolean, number or date where text was
# wanted. A range error (`-3`) or an unknown key is the same error quoted, so it gets no hint.
_QUOTING_HELPS = frozenset(
    {"string_type", "literal_error", "enum", "union_tag_invalid", "union_tag_not_found"}
)


def _tag_of(error: Any) -> tuple[str, tuple[str, ...]]:
    """The discriminator field of a tagged union that refused a value, and its choices."""
    discriminator = str((error.get("ctx") or {}).get("discriminator", "")).strip("'\"")
    if discriminator == "kind":
        return "kind", AGENT_KINDS
    return "game", GAMES


def _fields_at(loc: tuple[int | str, ...]) -> list[str]:
    """The field names of the model at a pydantic error location (for "did you mean")."""
    annotation: Any = ExperimentConfig
    for part in loc:
        annotation = _step(annotation, part)
        if annotation is None:
            return []
    model = _unwrap(annotation)
    if isinstance(model, type) and issubclass(model, BaseModel):
        return list(model.model_fields)
    return []


def _unwrap(annotation: Any) -> Any:
    """Annotated[X, ...] → X; X | None → X."""
    while get_origin(annotation) is Annotated:
        annotation = get_args(annotation)[0]
    args = [a for a in get_args(annotation) if a is not type(None)]
    if get_origin(annotation) in (Union, UnionType) and len(args) == 1:
        return _unwrap(args[0])
    return annotation


def _step(annotation: Any, part: int | str) -> Any:
    """The annotation one location part further in: a field, a union member (pydantic puts the
    member's tag in the location), a dict value or a list item."""
    current = _unwrap(annotation)
    if isinstance(current, type) and issubclass(current, BaseModel):
        field = current.model_fields.get(str(part))
        return None if field is None else field.annotation
    origin = get_origin(current)
    if origin in (Union, UnionType):
        for member in get_args(current):
            member = _unwrap(member)
            if isinstance(member, type) and issubclass(member, BaseModel):
                for name in ("kind", "game"):
                    tag = member.model_fields.get(name)
                    if tag is not None and str(part) in get_args(tag.annotation):
                        return member
        return None
    if origin is dict:
        return get_args(current)[1]
    if origin in (list, tuple):
        return get_args(current)[0]
    return None


def parse_config(
    data: Any,
    source: str = "config",
    base_dir: Path | None = None,
    *,
    _root: Node | None = None,
    check: Callable[[ExperimentConfig], None] | None = None,
) -> ExperimentConfig:
    """The validated config, its files resolved against `base_dir`. `check` (raising
    ConfigError) sees the config before any file it names is opened (the admin's folder rule)."""
    if not isinstance(data, dict):
        raise ConfigError(f"config error in {source}: expected a mapping at the top level")
    try:
        config = ExperimentConfig.model_validate(data)
    except ValidationError as err:
        raise ConfigError(_format_validation_error(err, source, _root)) from None
    if check is not None:
        check(config)
    if base_dir is not None:
        config = _resolve_agent_files(config, base_dir, source)
        config = _resolve_experiment_files(config, base_dir, source)
    if not isinstance(config.experiment, GTTExperiment):
        return config
    # Prompt paths are relative to the config file; check they exist before anything runs.
    prompts = {}
    for role, path in config.experiment.prompts.items():
        full = path if path.is_absolute() or base_dir is None else base_dir / path
        if not full.is_file():
            raise ConfigError(
                f"config error in {source}: experiment.prompts.{role}: no such file: {full}"
            )
        problem = _prompt_problem(role, full)
        if problem:
            raise ConfigError(
                f"config error in {source}: experiment.prompts.{role}: {full}: {problem}"
            )
        prompts[role] = full
    experiment = config.experiment.model_copy(update={"prompts": prompts})
    return config.model_copy(update={"experiment": experiment})


def _resolve_agent_files(config: ExperimentConfig, base_dir: Path, source: str) -> ExperimentConfig:
    """Replay files are relative to the config file and must exist before anything runs."""
    agents: dict[str, AgentConfig] = {}
    for name, agent in config.agents.items():
        if isinstance(agent, ScriptedAgentConfig) and agent.replies_file is not None:
            full = agent.replies_file
            full = full if full.is_absolute() else base_dir / full
            if not full.is_file():
                raise ConfigError(
                    f"config error in {source}: agents.{name}.replies_file: no such file: {full}"
                )
            agent = agent.model_copy(update={"replies_file": full})
        agents[name] = agent
    return config.model_copy(update={"agents": agents})


def _resolve_experiment_files(
    config: ExperimentConfig, base_dir: Path, source: str
) -> ExperimentConfig:
    """Files an experiment names (a game's `with_base_dir`) are relative to the config file
    and checked before anything runs."""
    resolve = getattr(config.experiment, "with_base_dir", None)
    if resolve is None:
        return config
    try:
        experiment = resolve(base_dir)
    except (ValueError, OSError) as err:
        raise ConfigError(f"config error in {source}: experiment: {err}") from None
    return config.model_copy(update={"experiment": experiment})


def _prompt_problem(role: str, path: Path) -> str | None:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        return _not_utf8(err)
    except OSError as err:
        return f"cannot be read ({err.strerror})"
    return template_problem(role, text)


def _not_utf8(err: UnicodeDecodeError) -> str:
    bad = err.object[err.start : err.start + 1].hex()
    return f"not UTF-8 text (byte 0x{bad} at offset {err.start}); save it as UTF-8"


def load_config(
    path: Path, check: Callable[[ExperimentConfig], None] | None = None
) -> ExperimentConfig:
    if path.is_dir():
        raise ConfigError(f"cannot read config {path}: it is a folder; give the YAML file")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise ConfigError(f"cannot read config {path}: {_not_utf8(err)}") from None
    except OSError as err:
        raise ConfigError(f"cannot read config {path}: {err.strerror}") from None
    if "\x00" in text:
        raise ConfigError(f"cannot read config {path}: a binary file, not YAML text")
    try:
        data, root = load_yaml(text)
    except YAMLProblem as err:
        raise ConfigError(f"config error in {path}: {err}") from None
    return parse_config(data, str(path), path.parent, _root=root, check=check)
