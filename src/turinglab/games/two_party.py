"""The two-party Turing test: an interrogator talks to one witness, human or AI, and decides
whether it is human (Giunti's "more common format"). Rules: interrogation.py.

Design: every interrogator × witness (each AI witness and each human witness), `n` games each.
"""

from __future__ import annotations

import itertools
import random
from typing import Literal

from pydantic import model_validator

from turinglab.games.clock import SIMULATED_EPOCH
from turinglab.games.interrogation_setup import (
    InterrogationExperiment,
    InterrogationGame,
    seed_of,
    witness_entry,
)
from turinglab.games.kinds import (
    CHOOSES_CLOCK,
    RESUMABLE,
    STUDY_ROWS,
    GameContext,
    GameKind,
    register,
)
from turinglab.games.spec import TrialSpec
from turinglab.games.witness import sample_facts

SEAT = "witness"


class TwoPartyExperiment(InterrogationExperiment):
    game: Literal["two-party"]

    @model_validator(mode="after")
    def _some_witness(self) -> TwoPartyExperiment:
        if not self.ai_witnesses and not self.human_witnesses:
            raise ValueError("two-party needs ai_witnesses or human_witnesses")
        return self


class TwoPartyGame(InterrogationGame):
    name = "two-party"
    cfg: TwoPartyExperiment

    def plan(self) -> list[TrialSpec]:
        cfg = self.cfg
        witnesses: list[tuple[str, str, str, bool]] = [
            (w.agent, w.name(), w.persona, False) for w in cfg.ai_witnesses
        ] + [(h, "human", "", True) for h in cfg.human_witnesses]
        specs: list[TrialSpec] = []
        for interrogator, (agent, name, persona, human) in itertools.product(
            cfg.interrogators, witnesses
        ):
            for i in range(cfg.n):
                seed = seed_of(self.name, cfg.seed, interrogator, name, agent, i)
                facts = sample_facts(random.Random(seed).getrandbits(63), SIMULATED_EPOCH)
                entry = witness_entry("", human=human, name=name, persona=persona, facts=facts)
                specs.append(
                    TrialSpec(
                        index=len(specs),
                        key=f"{interrogator}|{name if not human else agent}#{i}",
                        game=self.name,
                        seed=seed,
                        seats={"interrogator": interrogator, SEAT: agent},
                        params={
                            "witness_type": "human" if human else "ai",
                            "witnesses": {SEAT: entry},
                        },
                    )
                )
        return specs


def two_party_game(cfg: TwoPartyExperiment, context: GameContext) -> TwoPartyGame:
    return TwoPartyGame(cfg, context)


KIND = register(
    GameKind(
        "two-party",
        TwoPartyExperiment,
        two_party_game,
        arena_modes=("two-party", "practice"),
        capabilities=frozenset({CHOOSES_CLOCK, RESUMABLE, STUDY_ROWS}),
    )
)
