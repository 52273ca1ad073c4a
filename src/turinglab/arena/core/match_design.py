"""A study's matchmaking design: how long each person waits and what kind of witness they get.

The settings and their draws only; the matching they drive, and why it keeps the wait from
telling an interrogator anything, is in matchmaking_wait.py. Its own module so that the mode
settings (modes.py) can hold a design without importing the lobby's matcher.
"""

from __future__ import annotations

import random
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

Kind = Literal["ai", "person", "witness"]
WITNESS_DRAW = 0.5  # the share of joining people drawn to witness (two-party)


class MatchDesign(BaseModel):
    """How games are formed without a timing side channel (study settings)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # Two-party: the share of study interrogations whose witness is a person.
    human_witness_share: float = Field(default=0.5, ge=0, le=1)
    wait_min_s: float = Field(default=5.0, ge=0)
    wait_max_s: float = Field(default=60.0, ge=0)
    # Roles are decided within this many seconds of joining (default: wait_min_s).
    match_window_s: float | None = Field(default=None, ge=0)
    # Someone who may only witness and whom no interrogator takes within `witness_wait_s`
    # does not time out: "finish" excuses those rounds (their study is complete, with the
    # reason kept). (An AI-only interrogation instead would start after a wait no drawn wait
    # has, and so tell its interrogator the witness kind: not offered.)
    witness_wait_s: float = Field(default=90.0, ge=0)
    short_of_witnesses: Literal["finish"] = "finish"

    @model_validator(mode="after")
    def _ordered(self) -> MatchDesign:
        if self.wait_max_s < self.wait_min_s:
            raise ValueError(
                f"wait_max_s ({self.wait_max_s}) is below wait_min_s ({self.wait_min_s})"
            )
        if self.match_window_s is not None and self.match_window_s > self.wait_min_s:
            raise ValueError(
                f"match_window_s ({self.match_window_s}) is above wait_min_s"
                f" ({self.wait_min_s}): a game would start before its witness is decided"
            )
        return self

    @property
    def window_s(self) -> float:
        return self.wait_min_s if self.match_window_s is None else self.match_window_s

    def witness_rounds(self, rounds: int) -> int:
        """Of `rounds` per person, the witness rounds the design can supply (two-party)."""
        s = self.human_witness_share
        return min(rounds // 2, round(rounds * s / (1 + s)))

    def draw_wait(self, rng: random.Random) -> float:
        return rng.uniform(self.wait_min_s, self.wait_max_s)

    def draw_kind(self, rng: random.Random) -> Kind:
        """A joining person's part (see the module docstring)."""
        if rng.random() < WITNESS_DRAW:
            return "witness"
        return self.draw_interrogation(rng)

    def draw_interrogation(self, rng: random.Random) -> Kind:
        """An interrogator's witness kind."""
        return "person" if rng.random() < self.human_witness_share else "ai"

    def draw_for(self, key: str) -> tuple[float, Kind]:
        """One person's wait and witness kind for one round, `key` naming the study, the person
        and the round: the same wherever and however often it is drawn, so a page that joins
        again, or reconnects to another process (shared_blind.py), keeps its draw. (Random's
        string seeds are hashed with SHA-512, the same in every process.)"""
        rng = random.Random(key)
        return self.draw_wait(rng), self.draw_interrogation(rng)
