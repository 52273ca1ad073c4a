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


def plan_game(game: Game, limit: int | None = None) -> list[TrialSpec]:
    """Every trial of the game's design, after checking the design's size without making it."""
    limit = plan_limit() if limit is None else limit
    sized = PLANNED_COUNT.of(game)
    if sized is not None:
        n = sized.planned_count()
        if n > limit:
            raise PlanTooLarge(
                f"{sized.size_field}: the design plans {n:,} trials, more than the limit of "
                f"{limit:,} (lower it, or set TURINGLAB_MAX_PLANNED_TRIALS to allow more)"
            )
    return game.plan()


def plan_trials(config: ExperimentConfig) -> list[TrialSpec]:
    return plan_game(game_of(config))


def identity_document(config: ExperimentConfig, game: Game | None = None) -> dict[str, Any]:
    """What determines a run's results: agents as they answer, the design, and what the game
    adds (GTT: its prompt texts)."""
    agents = {}
    for name, agent in sorted(config.used_agents().items()):
        doc = agent.model_dump(mode="json", exclude=TRANSPORT_FIELDS)
        if doc.get("sees_images") is None:  # unset: the default, as before the field existed
            doc.pop("sees_images", None)
        if isinstance(agent, ScriptedAgentConfig) and agent.replies_file is not None:
            # What is replayed matters, not where the file happens to lie.
            doc["replies_file"] = hashlib.sha256(agent.replies_file.read_bytes()).hexdigest()
        agents[name] = doc
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
