"""Generic planning: the game a config plays, its trial specs, and the run identity that makes
re-running a config resume it. Each game plans its own design (GTT: games/gtt_plan.py)."""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any

from turinglab.config import TRANSPORT_FIELDS, ExperimentConfig, ScriptedAgentConfig
from turinglab.games.kinds import PLANNED_COUNT, Game, GameContext, game_for
from turinglab.games.spec import TrialSpec

# Planning materialises every spec; refuse designs that would take gigabytes before anything
# runs. Raise it with TURINGLAB_MAX_PLANNED_TRIALS if you really mean it.
MAX_PLANNED_TRIALS = 2_000_000


class PlanTooLarge(ValueError):
    """The design plans more trials than the limit (one clear line naming the field)."""


def game_of(config: ExperimentConfig, context: GameContext | None = None) -> Game:
    return game_for(config.experiment, context)


def plan_limit() -> int:
    raw = os.environ.get("TURINGLAB_MAX_PLANNED_TRIALS")
    return int(raw) if raw else MAX_PLANNED_TRIALS


def check_plan_size(game: Game, limit: int | None = None) -> None:
    """Raise PlanTooLarge when the design plans more trials than the limit, without making
    them (`run` asks before it creates a store: a refused design leaves none)."""
    limit = plan_limit() if limit is None else limit
    sized = PLANNED_COUNT.of(game)
    if sized is not None:
        n = sized.planned_count()
        if n > limit:
            raise PlanTooLarge(
                f"{sized.size_field}: the design plans {n:,} trials, more than the limit of "
                f"{limit:,} (lower it, or set TURINGLAB_MAX_PLANNED_TRIALS to allow more)"
            )


def plan_game(game: Game, limit: int | None = None) -> list[TrialSpec]:
    """Every trial of the game's design, after checking the design's size without making it."""
    check_plan_size(game, limit)
    return game.plan()


def plan_trials(config: ExperimentConfig) -> list[TrialSpec]:
    return plan_game(game_of(config))


def agent_documents(config: ExperimentConfig) -> dict[str, dict[str, Any]]:
    """Each agent as it answers: its config without the fields of how we reach it."""
    agents = {}
    for name, agent in sorted(config.used_agents().items()):
        doc = agent.model_dump(mode="json", exclude=TRANSPORT_FIELDS)
        if doc.get("sees_images") is None:  # unset: the default, as before the field existed
            doc.pop("sees_images", None)
        if isinstance(agent, ScriptedAgentConfig) and agent.replies_file is not None:
            # What is replayed matters, not where the file happens to lie.
            doc["replies_file"] = hashlib.sha256(agent.replies_file.read_bytes()).hexdigest()
        agents[name] = doc
    return agents


def identity_document(config: ExperimentConfig, game: Game | None = None) -> dict[str, Any]:
    """What determines a run's results: agents as they answer, the design, and what the game
    adds (GTT: its prompt texts)."""
    agents = agent_documents(config)
    game = game or game_of(config)
    # GTT's prompt texts are in game.identity(); the name of their set adds nothing.
    experiment = config.experiment.model_dump(mode="json", exclude={"prompts", "prompt_set"})
    # Rules added later, left at their defaults: the same run ids as before they existed.
    rules = (("min_messages_each", 0), ("addressing", "free"), ("on_ambiguous_answer", "no-answer"))
    for rule, default in rules:
        if experiment.get(rule) == default:
            experiment.pop(rule)
    return {"agents": agents, "experiment": experiment, **game.identity()}


def run_id(config: ExperimentConfig, game: Game | None = None) -> str:
    canonical = json.dumps(identity_document(config, game), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


class TrialHasher:
    """Content hashes of a config's trials (stored as `trials.content_hash`): a trial is the
    same trial in another run when its game, key, seed, seats and design facts are, the
    agents it names answer the same (their configs, transport left out), the rules are, and
    the game's own identity is (GTT: every prompt template's text; rendered prompts are those
    templates filled with the trial's facts and the agents' names, so they are covered).
    The plan index is not in it: a grown design renumbers its trials; the key carries the
    trial's number within its cell."""

    def __init__(self, config: ExperimentConfig, game: Game) -> None:
        self.agents = agent_documents(config)
        # Fields that only choose which trials a design has (an experiment model's
        # DESIGN_ONLY_FIELDS) are left out; every other field is part of each trial.
        design_only: frozenset[str] = getattr(
            type(config.experiment), "DESIGN_ONLY_FIELDS", frozenset()
        )
        experiment = config.experiment.model_dump(mode="json", exclude={"prompts", *design_only})
        self._shared = json.dumps(
            {"experiment": experiment, "game": game.identity()},
            sort_keys=True,
            separators=(",", ":"),
        )

    def __call__(self, spec: TrialSpec) -> str:
        named = set(spec.seats.values()) | {
            v for v in spec.params.values() if isinstance(v, str) and v in self.agents
        }
        doc = {
            "shared": self._shared,
            "trial": {k: v for k, v in spec.to_json().items() if k != "index"},
            "agents": {name: self.agents[name] for name in sorted(named) if name in self.agents},
        }
        canonical = json.dumps(doc, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode()).hexdigest()

    def many(self, specs: list[TrialSpec]) -> list[str]:
        return [self(s) for s in specs]
