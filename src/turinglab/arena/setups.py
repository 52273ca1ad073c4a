"""What `turinglab serve` offers: from a study config, or the zero-setup default.

A study config's experiment (three-party or two-party) becomes the study mode, with a solo
practice mode against the same AI witnesses next to it; its interrogators and human witnesses
are placeholders, since people fill those seats as they arrive. With no config, the embedded
agents serve a curious visitor: ELIZA (instant) and SmolLM2 (a local model) as AI witnesses.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from pydantic import ValidationError

from turinglab.agents.base import Agent
from turinglab.agents.registry import build_agent, display_names
from turinglab.arena.engine_modes import interrogation_mode
from turinglab.arena.matchmaking_wait import MatchDesign
from turinglab.arena.modes import ArenaMode, ArenaSettings, ArenaSetup
from turinglab.config import EMBEDDED_AGENTS, AgentConfig, ExperimentConfig, GTTExperiment
from turinglab.games.conversation import ConversationExperiment
from turinglab.games.interrogation_setup import InterrogationExperiment
from turinglab.games.kinds import kinds
from turinglab.games.live_itt import LiveITTExperiment
from turinglab.games.strong import StrongExperiment
from turinglab.games.three_party import ThreePartyExperiment
from turinglab.games.two_party import TwoPartyExperiment

DEFAULT_WITNESSES = ({"agent": "eliza", "persona": "none"}, {"agent": "smollm2"})
PLACEHOLDER = "person"  # interrogators/human witnesses of an arena experiment are people


def _two_party_like(cfg: InterrogationExperiment) -> TwoPartyExperiment:
    fields: dict[str, Any] = cfg.model_dump(exclude={"game", "human_witnesses", "stand_ins"})
    return TwoPartyExperiment.model_validate({**fields, "game": "two-party"})


def setup_for(
    experiment: InterrogationExperiment,
    agent_configs: dict[str, AgentConfig],
    settings: ArenaSettings | None = None,
) -> ArenaSetup:
    game = getattr(experiment, "game", None)
    if game not in ("three-party", "two-party"):
        raise ValueError(
            f"experiment.game: the arena plays three-party and two-party games, not {game!r}"
        )
    if not experiment.ai_witnesses:
        raise ValueError("experiment.ai_witnesses: the arena needs at least one AI witness")
    title = "Three-party Turing test" if game == "three-party" else "Two-party Turing test"
    modes: list[ArenaMode] = [
        interrogation_mode(game, title, experiment),
        interrogation_mode("practice", "Practice", _two_party_like(experiment), solo=True),
    ]
    used = {w.agent: agent_configs[w.agent] for w in experiment.ai_witnesses}
    agents: dict[str, Agent] = {name: build_agent(name, cfg) for name, cfg in used.items()}
    labels = {w.agent: w.name() for w in experiment.ai_witnesses}
    names = {**display_names(used), **labels}
    # A study's games are matched blind: its wait to a game must not tell who the witness is.
    return ArenaSetup(modes, agents, names, settings or ArenaSettings(design=MatchDesign()))


def setup_from_config(config: ExperimentConfig) -> ArenaSetup:
    setup = replace(_setup_for_game(config), name=config.name)
    # The experiment's seed is the study's, unless the arena section gives its own.
    seed = getattr(config.experiment, "seed", None)
    if isinstance(seed, int) and "seed" not in (config.arena or {}):
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


def _setup_for_game(config: ExperimentConfig) -> ArenaSetup:
    experiment = config.experiment
    if isinstance(experiment, StrongExperiment):
        from turinglab.arena.strong_mode import strong_setup_for

        return strong_setup_for(experiment, config.all_agents())
    if isinstance(experiment, GTTExperiment):
        from turinglab.arena.gtt_mode import gtt_setup_for

        return gtt_setup_for(experiment, config.all_agents())
    if isinstance(experiment, ConversationExperiment):  # people in ITT conversations
        from turinglab.arena.itt_chat_mode import itt_chat_setup_for

        return itt_chat_setup_for(experiment, config.all_agents())
    if isinstance(experiment, LiveITTExperiment):
        from turinglab.arena.live_itt_mode import live_itt_setup_for

        return live_itt_setup_for(experiment, config.all_agents())
    if not isinstance(experiment, InterrogationExperiment):
        served = sorted(name for name, kind in kinds().items() if kind.arena_modes)
        raise ValueError(
            f"experiment.game: the arena plays {', '.join(served)} games, not {experiment.game!r}"
        )
    return setup_for(experiment, config.all_agents())


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
