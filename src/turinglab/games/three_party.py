"""The three-party Turing test (Jones & Bergen): an interrogator, one human and one AI witness,
two private channels, five minutes, then "which one is the human?". Rules: interrogation.py.

Design: every interrogator × AI witness × human witness, `n` games each. The human's side (A
or B) is drawn from the trial seed; the AI witness's name, city and languages are sampled from
it as well (at the simulated clock's start time); both are recorded in the trial's params.
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

SEATS = ("witness_a", "witness_b")


class ThreePartyExperiment(InterrogationExperiment):
    game: Literal["three-party"]

    @model_validator(mode="after")
    def _both_sides(self) -> ThreePartyExperiment:
        if not self.ai_witnesses or not self.human_witnesses:
            raise ValueError(
                "three-party needs at least one of each: ai_witnesses, human_witnesses"
            )
        # Otherwise an AI interrogator runs out of messages before END is allowed.
        if 2 * self.min_messages_each > self.max_interrogator_messages:
            raise ValueError(
                f"min_messages_each ({self.min_messages_each}) for both witnesses needs "
                f"max_interrogator_messages >= {2 * self.min_messages_each} "
                f"(it is {self.max_interrogator_messages})"
            )
        return self


class ThreePartyGame(InterrogationGame):
    name = "three-party"
    cfg: ThreePartyExperiment

    def plan(self) -> list[TrialSpec]:
        cfg = self.cfg
        specs: list[TrialSpec] = []
        cells = itertools.product(cfg.interrogators, cfg.ai_witnesses, cfg.human_witnesses)
        for interrogator, ai, human in cells:
            for i in range(cfg.n):
                seed = seed_of(self.name, cfg.seed, interrogator, ai.name(), human, i)
                rng = random.Random(seed)
                human_seat = rng.choice(SEATS)
                ai_seat = SEATS[1 - SEATS.index(human_seat)]
                witnesses = {
                    human_seat: witness_entry(
                        human_seat[-1].upper(),
                        human=True,
                        name="human",
                        persona="",
                        facts=sample_facts(rng.getrandbits(63), SIMULATED_EPOCH),
                    ),
                    ai_seat: witness_entry(
                        ai_seat[-1].upper(),
                        human=False,
                        name=ai.name(),
                        persona=ai.persona,
                        facts=sample_facts(rng.getrandbits(63), SIMULATED_EPOCH),
                    ),
                }
                specs.append(
                    TrialSpec(
                        index=len(specs),
                        key=f"{interrogator}|{ai.name()}~{human}#{i}",
                        game=self.name,
                        seed=seed,
                        seats={"interrogator": interrogator, human_seat: human, ai_seat: ai.agent},
                        params={
                            "human_seat": human_seat,
                            "ai_witness": ai.name(),
                            "witnesses": dict(sorted(witnesses.items())),
                        },
                    )
                )
        return specs


def three_party_game(cfg: ThreePartyExperiment, context: GameContext) -> ThreePartyGame:
    return ThreePartyGame(cfg, context)


KIND = register(
    GameKind(
        "three-party",
        ThreePartyExperiment,
        three_party_game,
        arena_modes=("three-party", "practice"),
        capabilities=frozenset({CHOOSES_CLOCK, RESUMABLE, STUDY_ROWS}),
    )
)
