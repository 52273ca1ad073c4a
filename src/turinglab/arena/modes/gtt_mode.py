"""People in the Generalized Turing Test (GTT paper §3, §4 and §7) in the arena.

The engine's GTT game (games/gtt.py, through the `games.kinds` registry) with a person in one
seat, or with nobody but a spectator. What `turinglab serve <gtt config>` offers, on the
config's universe of agents and its rules (turn caps, on_turn_cap, prompts):

  gtt-distinguish  the person is the fixed distinguisher of GDGTT: they first study the target
                   B (a fresh instance of it), then chat with X — B, or another model of the
                   universe told to imitate B, ½ each — and say which. Needs two agents.
  gtt-act          the person is the actor of GTTQ: they study a fresh B, then answer B's
                   questions as B would; B decides whether they are its own model.
  gtt-watch        an AI-vs-AI game of the config's design (a random ordered pair, GTT or GTTQ
                   as configured), watched live by the person who started it.

Every draw (target, actor, which one X is, the watched variant) comes from the game's seed. The
modes are practice: one person with AI agents, never study data. With a store they are kept in
the arena run's generic games (the person's verdict as a "gtt-verdict" judgement, which the
three-party study export ignores, as it ignores practice games).

A spectator is seated only at a game they started, whose other seats are all AI agents, so no
one can watch a game with a person in it; and no frame lets a client look at another game.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import replace

from turinglab.agents.base import Agent
from turinglab.agents.registry import build_agent, display_names
from turinglab.arena.core.mode_kits import ModeKit, register
from turinglab.arena.core.modes import ArenaMode, ArenaSettings, ArenaSetup, SpecFactory
from turinglab.arena.modes import survey_rewording as rewording
from turinglab.arena.modes.gtt_live import SPECTATOR, GTTArenaMode, GTTLiveGame
from turinglab.config import AgentConfig, GTTExperiment
from turinglab.games.gtt import DISTINGUISHER, UNKNOWN, GTTRules
from turinglab.games.gtt_plan import make_trial
from turinglab.games.kinds import GameContext, game_for
from turinglab.games.spec import TrialSpec
from turinglab.variants import MATRIX_VARIANTS

DISTINGUISH, ACT, WATCH = "gtt-distinguish", "gtt-act", "gtt-watch"
MAX_CHARS = 600  # models write long messages; a person may too, within reason


def _spec_factory(kind: str, universe: Sequence[str], watched: Sequence[str]) -> SpecFactory:
    def spec_for(index: int, assigned: dict[str, str], seed: int) -> TrialSpec:
        rng = random.Random(seed)
        key = f"arena:{kind}#{index}"
        if kind == DISTINGUISH:
            target = rng.choice(universe)
            return make_trial(
                index=index,
                key=key,
                actor=rng.choice([a for a in universe if a != target]),
                distinguisher=assigned[DISTINGUISHER],
                x_is_target=rng.random() < 0.5,
                seed=seed,
                variant="gdgtt",
                target=target,
            )
        if kind == ACT:  # the person is always the actor: X is never the target here
            return make_trial(
                index=index,
                key=key,
                actor=assigned[UNKNOWN],
                distinguisher=rng.choice(universe),
                x_is_target=False,
                seed=seed,
                variant="gttq",
            )
        spec = make_trial(  # watch: an ordered pair (self-pairs too), as a batch run plays it
            index=index,
            key=key,
            actor=rng.choice(universe),
            distinguisher=rng.choice(universe),
            x_is_target=rng.random() < 0.5,
            seed=seed,
            variant=rng.choice(watched),
        )
        return replace(spec, seats={**spec.seats, SPECTATOR: assigned[SPECTATOR]})

    return spec_for


def gtt_modes(experiment: GTTExperiment, context: GameContext) -> list[ArenaMode]:
    """The GTT modes of `experiment`; distinguishing needs two agents in the universe."""
    game = game_for(experiment, context)
    rules = GTTRules(
        experiment.max_distinguisher_turns,
        experiment.on_turn_cap,
        experiment.max_specimen_turns,
    )
    universe = list(experiment.universe)
    watched = [v for v in experiment.variants if v in MATRIX_VARIANTS] or ["gtt"]
    made = {
        DISTINGUISH: (
            "GTT: you are the judge",
            DISTINGUISHER,
            "Study a model, then tell it from another model imitating it.",
        ),
        ACT: (
            "GTT: you imitate a model",
            UNKNOWN,
            "Study a model, then make it believe you are its own kind.",
        ),
        WATCH: (
            "GTT: watch two AIs",
            SPECTATOR,
            "One model judges whether the other is its own kind; watch it live.",
        ),
    }
    kinds = [ACT, WATCH] if len(universe) < 2 else [DISTINGUISH, ACT, WATCH]
    return [
        GTTArenaMode(
            name=kind,
            title=made[kind][0],
            game=game,
            judge=made[kind][1],  # where the lobby seats the person; spec_for keeps them there
            channel_of={},  # no witness seats for the lobby to fill: spec_for draws the agents
            ai_agents=tuple(universe),
            verdict="gtt",
            duration_s=None,
            max_chars=MAX_CHARS,
            solo=True,
            spec_for=_spec_factory(kind, universe, watched),
            about=made[kind][2],
            rules=rules,
        )
        for kind in kinds
    ]


def gtt_setup_for(
    experiment: GTTExperiment,
    agent_configs: Mapping[str, AgentConfig],
    settings: ArenaSettings | None = None,
) -> ArenaSetup:
    """What `turinglab serve` offers for a GTT config: its universe's agents in GTT modes."""
    unknown = sorted(set(experiment.universe) - set(agent_configs))
    if unknown:
        raise ValueError(f"experiment.universe: no agent named {', '.join(unknown)}")
    used = {name: agent_configs[name] for name in experiment.universe}
    agents: dict[str, Agent] = {name: build_agent(name, cfg) for name, cfg in used.items()}
    names = display_names(used)
    modes = gtt_modes(experiment, GameContext(display_names=names))
    return ArenaSetup(modes, agents, names, settings or ArenaSettings(seed=experiment.seed))


register(
    ModeKit[GTTExperiment](
        ("gtt",),
        GTTExperiment,
        gtt_setup_for,
        GTTLiveGame,
        state_frame="gtt",
        survey_rewording=rewording.GTT,
    )
)
