"""What `turinglab serve` offers: from a study config, or the zero-setup default.

A study config's experiment becomes the modes its kind's kit makes (mode_kits.py; for a
three-party or two-party one, engine_modes.py: the study mode, with a solo practice mode against
the same AI witnesses next to it; its interrogators and human witnesses are placeholders, since
people fill those seats as they arrive). With no config, the embedded
agents serve a curious visitor: ELIZA (instant) and SmolLM2 (a local model) as AI witnesses.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from pydantic import ValidationError

from turinglab.arena.core.match_design import MatchDesign
from turinglab.arena.core.mode_kits import kit_for
from turinglab.arena.core.modes import ArenaSettings, ArenaSetup
from turinglab.arena.modes.engine_modes import setup_for
from turinglab.config import EMBEDDED_AGENTS, ExperimentConfig
from turinglab.games.three_party import ThreePartyExperiment

__all__ = ["default_setup", "setup_for", "setup_from_config", "with_arena_section"]

DEFAULT_WITNESSES = ({"agent": "eliza", "persona": "none"}, {"agent": "smollm2"})
PLACEHOLDER = "person"  # interrogators/human witnesses of an arena experiment are people


def setup_from_config(config: ExperimentConfig) -> ArenaSetup:
    # Its kind's kit (mode_kits.py) makes the modes: this module names none of them.
    kit = kit_for(config.experiment.game)
    setup = replace(kit.setup_for(config.experiment, config.all_agents()), name=config.name)
    # The experiment's seed is the study's, unless the arena section gives its own.
    if "seed" not in (config.arena or {}):
        seed = config.experiment.seed
        setup = replace(setup, settings=setup.settings.model_copy(update={"seed": seed}))
    if not config.arena:
        return setup
    return replace(setup, settings=with_arena_section(setup.settings, config.arena))


def with_arena_section(settings: ArenaSettings, section: dict[str, Any]) -> ArenaSettings:
    """`settings` with what a config's `arena:` section sets (rounds, design, rate limits,
    takeover delay, the study's pages); ValueError naming the field if it is wrong."""
    try:
        given = ArenaSettings.model_validate(section)
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ValueError(f"arena.{where}: {first['msg']}") from None
    return settings.model_copy(update={k: getattr(given, k) for k in given.model_fields_set})


def default_setup(seed: int = 0) -> ArenaSetup:
    """Embedded agents only: a three-party study mode and solo practice."""
    experiment = ThreePartyExperiment.model_validate(
        {
            "game": "three-party",
            "interrogators": [PLACEHOLDER],
            "human_witnesses": [PLACEHOLDER],
            "ai_witnesses": list(DEFAULT_WITNESSES),
            "seed": seed,
        }
    )
    settings = ArenaSettings(seed=seed, design=MatchDesign())
    return setup_for(experiment, dict(EMBEDDED_AGENTS), settings)
