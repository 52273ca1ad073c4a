"""Simulated GTT outcomes for universes with known parameters (evidence for the analyses).

A `GttUniverse` fixes s_B (B says 1 when X is B) and s_{B,A} (B says 0 when X is A imitating B)
for every cell, so d(A, B) = ½ s_B + ½ s_{B,A} − ½ is known. `AbilityTruth` generates the same
kind of universe from the ability model of `turinglab.analysis.ability`. Rows follow the shared
GTT row contract (the keys the analysis reads), with X's identity balanced inside each cell the
way the runner plans trials: trials alternate X = target, X = actor. Pure functions; every draw
comes from `numpy.random.default_rng(seed)`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from turinglab.analysis.adaptive import AdaptivePlan, CellStatus, cell_status, next_batch

Cell = tuple[str, str]  # (actor, distinguisher)


@dataclass(frozen=True)
class GttUniverse:
    """Known success probabilities; `s_actor[(A, B)]` is s_{B,A} (B catches A imitating B)."""

    s_self: Mapping[str, float]
    s_actor: Mapping[Cell, float]
    no_answer_rate: float = 0.0  # chance a trial ends without a verdict, either branch

    def __post_init__(self) -> None:
        for name, value in [*self.s_self.items(), *self.s_actor.items()]:
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"probability for {name} must lie in [0, 1], got {value}")
        for _, distinguisher in self.s_actor:
            if distinguisher not in self.s_self:
                raise ValueError(f"no s_self for distinguisher {distinguisher!r}")
        if not 0.0 <= self.no_answer_rate < 1.0:
            raise ValueError(f"no_answer_rate must lie in [0, 1), got {self.no_answer_rate}")

    @property
    def cells(self) -> list[Cell]:
        return sorted(self.s_actor)

    def p(self, cell: Cell) -> float:
        """p(A, B) without missing verdicts: ½ s_B + ½ s_{B,A}."""
        return 0.5 * self.s_self[cell[1]] + 0.5 * self.s_actor[cell]

    def d(self, cell: Cell) -> float:
        return self.p(cell) - 0.5


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


@dataclass(frozen=True)
class AbilityTruth:
    """Ability-model parameters (see `turinglab.analysis.ability` for the model)."""

    theta: Mapping[str, float]  # imitation skill
    phi: Mapping[str, float]  # discrimination skill
    bias: Mapping[str, float]  # b_D, tendency to answer 1
    c: float  # common self-recognition shift
    agents: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.agents:
            object.__setattr__(self, "agents", sorted(self.theta))
        for name, values in [("theta", self.theta), ("phi", self.phi), ("bias", self.bias)]:
            if set(values) != set(self.agents):
                raise ValueError(f"{name} must have one value per agent {self.agents}")

    def says_same_self(self, distinguisher: str) -> float:
        return _sigmoid(self.bias[distinguisher] + self.c)

    def says_same_actor(self, actor: str, distinguisher: str) -> float:
        d = distinguisher
        return _sigmoid(self.theta[actor] - self.phi[d] + self.bias[d])

    def universe(self) -> GttUniverse:
        """Every ordered pair, self-pairs included."""
        return GttUniverse(
            s_self={d: self.says_same_self(d) for d in self.agents},
            s_actor={
                (a, d): 1.0 - self.says_same_actor(a, d) for a in self.agents for d in self.agents
            },
        )


def simulate_rows(
    universe: GttUniverse,
    trials: Mapping[Cell, int],
    seed: int,
    start: Mapping[Cell, int] | None = None,
) -> list[dict[str, Any]]:
    """`trials[cell]` new trials per cell. `start[cell]` is the number of trials the cell
    already has: it continues the idx sequence and so the X = target / X = actor alternation."""
    rng = np.random.default_rng(seed)
    rows: list[dict[str, Any]] = []
    for cell in sorted(trials):
        if cell not in universe.s_actor:
            raise ValueError(f"cell {cell} is not in the universe")
        actor, distinguisher = cell
        first = (start or {}).get(cell, 0)
        count = trials[cell]
        if count < 0:
            raise ValueError(f"trial count for {cell} must be ≥ 0, got {count}")
        draws = rng.random(count)
        missing = rng.random(count) < universe.no_answer_rate
        for k in range(count):
            idx = first + k
            x_is_target = idx % 2 == 0
            succeeds = universe.s_self[distinguisher] if x_is_target else universe.s_actor[cell]
            correct = bool(draws[k] < succeeds)
            verdict: int | None = int(correct == x_is_target)
            if missing[k]:
                verdict = None
            rows.append(
                {
                    "variant": "gtt",
                    "actor": actor,
                    "distinguisher": distinguisher,
                    "target": distinguisher,
                    "x_is_target": x_is_target,
                    "budget": None,
                    "status": "no-answer" if verdict is None else "answered",
                    "verdict": verdict,
                    "correct": None if verdict is None else correct,
                    "key": f"sim/{actor}/{distinguisher}/{idx}",
                    "idx": idx,
                    "seed": seed,
                }
            )
    return rows


def simulate_fixed(universe: GttUniverse, n_per_cell: int, seed: int) -> list[dict[str, Any]]:
    """A fixed design: n trials in every cell of the universe."""
    return simulate_rows(universe, dict.fromkeys(universe.cells, n_per_cell), seed)


@dataclass(frozen=True)
class AdaptiveRun:
    rows: list[dict[str, Any]]
    status: dict[Cell, CellStatus]
    rounds: int


def simulate_adaptive(universe: GttUniverse, plan: AdaptivePlan, seed: int) -> AdaptiveRun:
    """Play the adaptive design of `turinglab.analysis.adaptive` on a simulated universe:
    ask `next_batch`, simulate those trials, repeat until every cell has settled."""
    cells = universe.cells
    rows: list[dict[str, Any]] = []
    counts = dict.fromkeys(cells, 0)
    rng = np.random.default_rng(seed)
    rounds = 0
    while batch := next_batch(rows, plan, cells):
        rounds += 1
        rows += simulate_rows(universe, batch, int(rng.integers(2**32)), start=counts)
        for cell, k in batch.items():
            counts[cell] += k
    return AdaptiveRun(rows=rows, status=cell_status(rows, plan, cells), rounds=rounds)
