"""Arena modes for the engine's own interrogation games (games/three_party.py, two_party.py).

A study config names its AI witnesses and rules; the arena fills the people in as they are
matched. Each live game is planned by the game itself from a one-cell copy of the config (this
interrogator, this human witness, this AI witness, n=1, the lobby's seed), so the witness facts,
side labels and params are exactly what a batch run of the same design would have.

Each configured AI witness (agent + persona, named as the study file names it, e.g.
"SMOLLM2-PERSONA") is one group: the lobby seats groups, in each interrogator's own order.
"""

from __future__ import annotations

from dataclasses import replace

from turinglab.arena.modes import ArenaMode
from turinglab.games.interrogation_setup import InterrogationExperiment
from turinglab.games.kinds import GameContext, game_for
from turinglab.games.spec import TrialSpec

INTERROGATOR = "interrogator"
THREE_PARTY_SEATS = ("witness_a", "witness_b")
TWO_PARTY_SEAT = "witness"


def interrogation_mode(
    name: str,
    title: str,
    cfg: InterrogationExperiment,
    *,
    solo: bool = False,
    context: GameContext | None = None,
) -> ArenaMode:
    """A mode playing `cfg` (a three-party or two-party experiment) with people."""
    game_name = getattr(cfg, "game", None)
    if game_name not in ("three-party", "two-party"):
        raise ValueError(f"{name}: an interrogation game is needed, not {game_name!r}")
    three = game_name == "three-party"
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
