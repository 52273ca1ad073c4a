"""Experiment configuration: typed, validated at the edge, with errors that name the field.

A config file has four parts: `agents` (named agent settings), `experiment` (the game and its
design), `runner` (how fast to go: never part of a run's identity) and `store` (where results go).
"""

from __future__ import annotations

import difflib
from pathlib import Path
from types import UnionType
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from yaml.nodes import Node

from turinglab.config_yaml import YAMLProblem, explain_at, load_yaml
from turinglab.games.conversation import ConversationExperiment
from turinglab.games.gtt_prompts import PromptRole, template_problem
from turinglab.games.itt_response import ITTResponseExperiment
from turinglab.games.live_itt import LiveITTExperiment
from turinglab.games.strong import StrongExperiment
from turinglab.games.three_party import ThreePartyExperiment
from turinglab.games.two_party import TwoPartyExperiment
from turinglab.games.variants import BUDGET_VARIANTS, FD_VARIANTS, GTTVariant


class ConfigError(ValueError):
    """A config problem, phrased for the person who wrote the file."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# Fields of an agent that change how fast or through which door we go, not what it says.
TRANSPORT_FIELDS = {"api_key_env", "timeout_s", "max_concurrency", "headers", "threads"}


class OpenAIAgentConfig(_Strict):
    """Any OpenAI-compatible chat-completions endpoint (OpenAI, OpenRouter, vLLM, Ollama, ...)."""

    kind: Literal["openai"]
    model: str
    base_url: str = "https://api.openai.com/v1"
    api_key_env: str | None = Field(
        default=None, description="name of the environment variable holding the API key"
    )
    params: dict[str, Any] = Field(
        default_factory=dict,
        description="request fields sent as given (temperature, max_tokens, ...); "
        "unset ones are left to the provider's defaults",
    )
    headers: dict[str, str] = Field(default_factory=dict)
    display_name: str | None = None
    timeout_s: float = Field(default=480.0, gt=0)
    max_concurrency: int | None = Field(default=None, ge=1)
    sees_images: bool | None = Field(
        default=None,
        description="send attached images as OpenAI-style image parts (unset: yes); false for "
        "a text-only model, which then gets an [image] marker per image",
    )


class _TextOnly(_Strict):
    """An agent kind that is given text only: an image reaches it as an "[image]" marker."""

    @model_validator(mode="before")
    @classmethod
    def _no_images(cls, data: Any) -> Any:
        if isinstance(data, dict) and "sees_images" in data:
            if data["sees_images"] is True:
                raise ValueError(
                    f"sees_images: a {data.get('kind')!r} agent is given text only (each image "
                    "becomes an [image] marker); only kind 'openai' agents can receive images"
                )
            data = {k: v for k, v in data.items() if k != "sees_images"}
        return data


class LocalAgentConfig(_TextOnly):
    """A GGUF model run in-process by llama.cpp: an embedded model name or a file path."""

    kind: Literal["local"]
    model: str = Field(description="'smollm2', 'gemma3-base', or a path to a .gguf file")
    mode: Literal["chat", "completion"] | None = Field(
        default=None, description="chat template, or a dialogue-transcript prompt for base models"
    )
    max_tokens: int = Field(default=96, ge=1)
    temperature: float = Field(default=0.7, ge=0)
    top_p: float = Field(default=0.95, gt=0, le=1)
    n_ctx: int = Field(default=2048, ge=256)
    system_prompt: str | None = None
    threads: int | None = Field(default=None, ge=1)


class ElizaAgentConfig(_TextOnly):
    """Weizenbaum's ELIZA with the DOCTOR script (1966)."""

    kind: Literal["eliza"]
    case: Literal["upper", "sentence"] = "upper"


class ScriptedAgentConfig(_TextOnly):
    """Fixed replies in order (for tests, or to replay a recorded side of a conversation)."""

    kind: Literal["scripted"]
    replies: list[str] = Field(default_factory=list)
    replies_file: Path | None = Field(
        default=None,
        description="replies to replay: a .txt file (one per line) or a .json list of strings "
        "or of {role, content} messages (an exported history; its assistant turns are replayed)",
    )
    cycle: bool = False
    fallback: str = ""

    @model_validator(mode="after")
    def _one_source(self) -> ScriptedAgentConfig:
        if self.replies and self.replies_file:
            raise ValueError("give either replies or replies_file, not both")
        return self


AgentConfig = Annotated[
    OpenAIAgentConfig | LocalAgentConfig | ElizaAgentConfig | ScriptedAgentConfig,
    Field(discriminator="kind"),
]

# Usable in any config without declaring them: nothing to download, no key.
EMBEDDED_AGENTS: dict[str, AgentConfig] = {
    "eliza": ElizaAgentConfig(kind="eliza"),
    "smollm2": LocalAgentConfig(kind="local", model="smollm2", mode="chat"),
    "gemma3-base": LocalAgentConfig(kind="local", model="gemma3-base", mode="completion"),
}


# The agent kinds, read off the union: `kind: Literal["..."]` of each agent model.
AGENT_KINDS: tuple[str, ...] = tuple(
    get_args(model.model_fields["kind"].annotation)[0]
    for model in get_args(get_args(AgentConfig)[0])
)

PLAIN_GTT: tuple[GTTVariant, ...] = ("gtt",)


class AdaptiveSettings(_Strict):
    """Sample GTT/GTTQ cells in batches until each cell's conclusion (d ≤ ε or not) is settled
    by an anytime-valid confidence sequence, or `max_n` is reached (analysis/adaptive.py)."""

    eps: float = Field(default=0.05, ge=0, lt=0.5, description="comparator threshold ε")
    alpha: float = Field(default=0.05, gt=0, lt=1, description="error budget over all cells")
    delta: float = Field(default=0.05, ge=0, lt=0.5, description="indifference zone around ε")
    batch: int = Field(default=4, ge=1)
    min_n: int = Field(default=4, ge=1, description="trials per cell before the first look")
    max_n: int = Field(default=40, ge=1)

    @model_validator(mode="after")
    def _ordered(self) -> AdaptiveSettings:
        if self.max_n < self.min_n:
            raise ValueError(f"max_n ({self.max_n}) is below min_n ({self.min_n})")
        return self


class GTTExperiment(_Strict):
    """The GTT family over every ordered pair of a universe (self-pairs included) or a list.

    FD variants (fdgtt, fdgttq, gdgtt) play, for each fixed distinguisher D, every ordered
    (actor, target) pair of the universe without D. Budget variants (gtt-turns, gttq-queries)
    sweep `budgets` over `budget_pairs` (default: the same pairs as the plain game).
    """

    game: Literal["gtt"]
    variants: list[GTTVariant] = Field(default_factory=lambda: list(PLAIN_GTT), min_length=1)
    universe: list[str] = Field(min_length=1)
    pairs: list[tuple[str, str]] | None = Field(
        default=None, description="explicit [actor, distinguisher] pairs instead of all of them"
    )
    trials_per_pair: int = Field(default=10, ge=1)
    max_distinguisher_turns: int = Field(default=40, ge=1)
    max_specimen_turns: int = Field(default=20, ge=1)
    on_turn_cap: Literal["no-answer", "ask-for-answer"] = "no-answer"
    distinguishers: list[str] = Field(
        default_factory=list, description="fixed distinguishers D of the FD variants"
    )
    budgets: list[int] = Field(
        default_factory=list, description="round or query budgets of the bounded variants"
    )
    budget_pairs: list[tuple[str, str]] | None = None
    adaptive: AdaptiveSettings | None = Field(
        default=None, description="sample GTT/GTTQ cells adaptively instead of a fixed n"
    )
    seed: int = 0
    prompts: dict[PromptRole, Path] = Field(
        default_factory=dict, description="template files that replace the built-in prompts"
    )

    @model_validator(mode="after")
    def _consistent(self) -> GTTExperiment:
        dupes = {a for a in self.universe if self.universe.count(a) > 1}
        if dupes:
            raise ValueError(f"universe lists {sorted(dupes)} more than once")
        for field_name in ("pairs", "budget_pairs"):
            for actor, distinguisher in getattr(self, field_name) or []:
                for name in (actor, distinguisher):
                    if name not in self.universe:
                        raise ValueError(
                            f"{field_name} ({actor}, {distinguisher}): {name!r} is not in universe"
                        )
        if len(set(self.variants)) != len(self.variants):
            raise ValueError("variants lists a variant more than once")
        if set(self.variants) & set(FD_VARIANTS) and not self.distinguishers:
            raise ValueError("the FD variants need `distinguishers` (the fixed judges D)")
        if set(self.variants) & set(BUDGET_VARIANTS) and (
            not self.budgets or min(self.budgets) < 1
        ):
            raise ValueError("gtt-turns and gttq-queries need `budgets` (positive integers)")
        return self

    def agent_names(self) -> list[str]:
        """Every agent the design seats: the universe and the fixed distinguishers."""
        return list(dict.fromkeys([*self.universe, *self.distinguishers]))

    def ordered_pairs(self) -> list[tuple[str, str]]:
        if self.pairs is not None:
            return [tuple(p) for p in self.pairs]  # type: ignore[misc]
        return [(a, b) for a in self.universe for b in self.universe]


class RunnerSettings(_Strict):
    """How hard to push. None of this changes results, so none of it is in a run's identity."""

    max_trials_in_flight: int = Field(default=16, ge=1)
    max_attempts: int = Field(default=3, ge=1, description="attempts per trial, first included")
    max_calls_per_endpoint: int = Field(default=64, ge=1)
    call_retries: int = Field(default=6, ge=0, description="retries of one API call")
    backoff_base_s: float = Field(default=1.0, gt=0)
    backoff_max_s: float = Field(default=60.0, gt=0)


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
    data: Any, source: str = "config", base_dir: Path | None = None, *, _root: Node | None = None
) -> ExperimentConfig:
    if not isinstance(data, dict):
        raise ConfigError(f"config error in {source}: expected a mapping at the top level")
    try:
        config = ExperimentConfig.model_validate(data)
    except ValidationError as err:
        raise ConfigError(_format_validation_error(err, source, _root)) from None
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


def load_config(path: Path) -> ExperimentConfig:
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
    return parse_config(data, str(path), path.parent, _root=root)
