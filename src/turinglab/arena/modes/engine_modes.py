"""Arena modes for the engine's own interrogation games (games/three_party.py, two_party.py).

A study config names its AI witnesses and rules; the arena fills the people in as they are
matched. Each live game is planned by the game itself from a one-cell copy of the config (this
interrogator, this human witness, this AI witness, n=1, the lobby's seed), so the witness facts,
side labels and params are exactly what a batch run of the same design would have.

Each configured AI witness (agent + persona, named as the study file names it, e.g.
"SMOLLM2-PERSONA") is one group: the lobby seats groups, in each interrogator's own order.

Its kit (mode_kits.py, registered at the end) serves both kinds: the study mode and two-party
practice, played by LiveGame itself, with the AI witnesses timed before serving
(witness_preflight.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from turinglab.agents.base import Agent
from turinglab.agents.registry import build_agent, display_names
from turinglab.arena.core.match_design import MatchDesign
from turinglab.arena.core.mode_kits import ModeKit, register
from turinglab.arena.core.modes import ArenaMode, ArenaSettings, ArenaSetup
from turinglab.arena.core.witness_preflight import measure_witnesses
from turinglab.config import AgentConfig
from turinglab.games.kinds import GameContext, game_for
from turinglab.games.spec import TrialSpec
from turinglab.games.three_party import ThreePartyExperiment
from turinglab.games.two_party import TwoPartyExperiment

# The experiments these modes play: told apart by their typed `game`.
InterrogationConfig = ThreePartyExperiment | TwoPartyExperiment

INTERROGATOR = "interrogator"
THREE_PARTY_SEATS = ("witness_a", "witness_b")
TWO_PARTY_SEAT = "witness"


def interrogation_mode(
    name: str,
    title: str,
    cfg: InterrogationConfig,
    *,
    solo: bool = False,
    context: GameContext | None = None,
) -> ArenaMode:
    """A mode playing `cfg` (a three-party or two-party experiment) with people."""
    three = cfg.game == "three-party"
    seats = THREE_PARTY_SEATS if three else (TWO_PARTY_SEAT,)
    by_group = {w.name(): w for w in cfg.ai_witnesses}
    if len(by_group) < len(cfg.ai_witnesses):
        named = [w.name() for w in cfg.ai_witnesses]
        twice = sorted({n for n in named if named.count(n) > 1})
        raise ValueError(
            f"ai_witnesses: {', '.join(twice)} named twice; give each witness its own label"
        )

    def spec_for(index: int, assigned: dict[str, str], seed: int) -> TrialSpec:
        people = [a for s, a in assigned.items() if s != INTERROGATOR and a not in by_group]
        ais = [by_group[a] for s, a in assigned.items() if s != INTERROGATOR and a in by_group]
        one = cfg.model_copy(
            update={
                "interrogators": [assigned[INTERROGATOR]],
                "human_witnesses": people,
                "ai_witnesses": ais,
                "n": 1,
                "seed": seed,
            }
        )
        (spec,) = game_for(one, context).plan()
        return replace(spec, index=index, key=f"arena:{name}#{index}")

    return ArenaMode(
        name=name,
        title=title,
        game=game_for(cfg, context),
        judge=INTERROGATOR,
        channel_of={s: s for s in seats},
        ai_agents=tuple(by_group),  # the groups; spec_for seats each group's agent
        verdict="which" if three else "human-or-ai",
        duration_s=cfg.time_limit_s,
        max_chars=cfg.max_chars,
        solo=solo,
        spec_for=spec_for,
    )


def _two_party_like(cfg: InterrogationConfig) -> TwoPartyExperiment:
    fields: dict[str, Any] = cfg.model_dump(exclude={"game", "human_witnesses", "stand_ins"})
    return TwoPartyExperiment.model_validate({**fields, "game": "two-party"})


def setup_for(
    experiment: InterrogationConfig,
    agent_configs: Mapping[str, AgentConfig],
    settings: ArenaSettings | None = None,
) -> ArenaSetup:
    """What `turinglab serve` offers for a three- or two-party config: the study mode, and
    solo practice (two-party) against the same AI witnesses."""
    if not experiment.ai_witnesses:
        raise ValueError("experiment.ai_witnesses: the arena needs at least one AI witness")
    game = experiment.game
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


register(
    ModeKit[InterrogationConfig](
        games=("three-party", "two-party"),
        experiment=InterrogationConfig,
        setup=setup_for,
        live_game=None,  # the chat games: LiveGame itself
        measure_witnesses=measure_witnesses,
    )
)
