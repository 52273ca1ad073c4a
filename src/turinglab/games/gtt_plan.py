"""GTT family design → trial specs: cells, balanced branches, seeds (unchanged since schema v2,
so run ids and seeds of existing configs stay what they were)."""

from __future__ import annotations

import hashlib
import itertools
import random
from dataclasses import dataclass
from typing import Any

from turinglab.games.gtt import DISTINGUISHER, UNKNOWN
from turinglab.games.query_phase import SPECIMEN
from turinglab.games.spec import TrialSpec
from turinglab.variants import BUDGET_VARIANTS, FD_VARIANTS, SPECIMEN_VARIANTS

GAME = "gtt"


class GTTTrial(TrialSpec):
    """A GTT trial spec: the generic TrialSpec, with its GTT params readable by name."""

    __slots__ = ()

    @property
    def variant(self) -> str:
        return str(self.params["variant"])

    @property
    def actor(self) -> str:
        return str(self.params["actor"])

    @property
    def distinguisher(self) -> str:
        return str(self.params["distinguisher"])

    @property
    def target(self) -> str:
        return str(self.params["target"])

    @property
    def x_is_target(self) -> bool:
        return bool(self.params["x_is_target"])

    @property
    def budget(self) -> int | None:
        budget = self.params.get("budget")
        return None if budget is None else int(budget)

    @property
    def unknown(self) -> str:
        return self.target if self.x_is_target else self.actor


def gtt_trial(spec: TrialSpec) -> GTTTrial:
    return spec if isinstance(spec, GTTTrial) else GTTTrial(**_fields(spec))


def _fields(spec: TrialSpec) -> dict[str, Any]:
    return {
        "index": spec.index,
        "key": spec.key,
        "game": spec.game,
        "seed": spec.seed,
        "seats": spec.seats,
        "params": spec.params,
    }


def make_trial(
    *,
    index: int,
    key: str,
    actor: str,
    distinguisher: str,
    x_is_target: bool,
    seed: int,
    variant: str = "gtt",
    target: str = "",
    budget: int | None = None,
) -> GTTTrial:
    target = target or distinguisher
    seats = {DISTINGUISHER: distinguisher, UNKNOWN: target if x_is_target else actor}
    if variant in SPECIMEN_VARIANTS:
        seats[SPECIMEN] = target  # a fresh instance of the target
    params = {
        "variant": variant,
        "actor": actor,
        "distinguisher": distinguisher,
        "target": target,
        "x_is_target": x_is_target,
        "budget": budget,
    }
    return GTTTrial(index=index, key=key, game=GAME, seed=seed, seats=seats, params=params)


def _seed(*parts: object) -> int:
    digest = hashlib.sha256(":".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1  # fits a signed 64-bit column


@dataclass(frozen=True, slots=True)
class Cell:
    """Trials that estimate one quantity: (variant, actor, judge, target, budget)."""

    variant: str
    actor: str
    distinguisher: str
    target: str
    budget: int | None = None


def cell_of(spec: TrialSpec) -> Cell:
    t = gtt_trial(spec)
    return Cell(t.variant, t.actor, t.distinguisher, t.target, t.budget)


def cell_trials(cell: Cell, seed: int, first: int, n: int, first_index: int) -> list[GTTTrial]:
    """Trials `first`..`first+n−1` of a cell, X's identity balanced within the batch."""
    key = (seed, cell.variant, cell.actor, cell.distinguisher, cell.target, cell.budget)
    rng = random.Random(_seed(*key, "balance") if first == 0 else _seed(*key, "balance", first))
    branches = [True] * (n // 2) + [False] * (n // 2)
    if n % 2:
        branches.append(rng.random() < 0.5)
    rng.shuffle(branches)
    a, judge = cell.actor, cell.distinguisher
    name = f"{a}>{judge}" if cell.target == judge else f"{a}~{cell.target}@{judge}"
    prefix = cell.variant if cell.budget is None else f"{cell.variant}[{cell.budget}]"
    plain = prefix == "gtt"
    specs = []
    for offset, x_is_target in enumerate(branches):
        i = first + offset
        specs.append(
            make_trial(
                index=first_index + offset,
                key=f"{name}#{i}" if plain else f"{prefix}:{name}#{i}",
                actor=a,
                distinguisher=judge,
                x_is_target=x_is_target,
                # Plain GTT keeps the seeds it always had; the variants add their cell.
                seed=_seed(seed, a, judge, i) if plain else _seed(*key, i),
                variant=cell.variant,
                target=cell.target,
                budget=cell.budget,
            )
        )
    return specs


def plan_cells(exp: Any) -> list[Cell]:
    """Plain cells are every ordered pair; FD cells every ordered (actor, target) pair without
    the fixed D; budget cells repeat their pairs once per budget. `exp` is a GTTExperiment."""
    cells: list[Cell] = []
    for variant in exp.variants:
        if variant in FD_VARIANTS:
            for judge in exp.distinguishers:
                others = [a for a in exp.universe if a != judge]
                for actor, target in itertools.product(others, repeat=2):
                    cells.append(Cell(variant, actor, judge, target))
        elif variant in BUDGET_VARIANTS:
            pairs = exp.budget_pairs if exp.budget_pairs is not None else exp.ordered_pairs()
            for budget in exp.budgets:
                cells += [Cell(variant, actor, judge, judge, budget) for actor, judge in pairs]
        else:
            cells += [Cell(variant, actor, judge, judge) for actor, judge in exp.ordered_pairs()]
    return cells


def initial_trials(exp: Any, cell: Cell, adaptive_variants: tuple[str, ...]) -> int:
    if exp.adaptive is not None and cell.variant in adaptive_variants:
        return int(exp.adaptive.min_n)
    return int(exp.trials_per_pair)


def planned_count(exp: Any, adaptive_variants: tuple[str, ...]) -> int:
    """How many trials `plan_trials` would make, without making them."""
    return sum(initial_trials(exp, c, adaptive_variants) for c in plan_cells(exp))


def plan_trials(exp: Any, adaptive_variants: tuple[str, ...]) -> list[GTTTrial]:
    """n trials per cell, X's identity balanced within each cell, order seeded."""
    specs: list[GTTTrial] = []
    for cell in plan_cells(exp):
        n = initial_trials(exp, cell, adaptive_variants)
        specs += cell_trials(cell, exp.seed, 0, n, len(specs))
    return specs
