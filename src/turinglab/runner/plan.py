"""Config → trial specs, and the run identity that makes re-running a config resume it."""

from __future__ import annotations

import hashlib
import itertools
import json
import random
from dataclasses import asdict, dataclass
from typing import Any

from turinglab.config import TRANSPORT_FIELDS, ExperimentConfig, ScriptedAgentConfig
from turinglab.games.gtt_prompts import GTTPrompts
from turinglab.games.variants import BUDGET_VARIANTS, FD_VARIANTS, MATRIX_VARIANTS

# Adaptive sampling decides the comparator A ≥ε B, which only the plain GTT cells estimate.
ADAPTIVE_VARIANTS = MATRIX_VARIANTS


@dataclass(frozen=True, slots=True)
class TrialSpec:
    """Everything needed to play one trial, fixed before anything runs."""

    index: int  # position in the run's plan
    key: str  # stable human-readable id, e.g. "smollm2>eliza#3"
    actor: str  # A: plays X when X is not the target itself
    distinguisher: str  # the judge: B in the GTT family, the fixed D in FD variants
    x_is_target: bool  # the unknown is a fresh target (else the actor imitating the target)
    seed: int
    variant: str = "gtt"
    target: str = ""  # the model X may be; the distinguisher's own type in the GTT family
    budget: int | None = None  # rounds or specimen queries in the bounded variants

    def __post_init__(self) -> None:
        if not self.target:
            object.__setattr__(self, "target", self.distinguisher)

    @property
    def unknown(self) -> str:
        return self.target if self.x_is_target else self.actor

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TrialSpec:
        return cls(**data)


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
    return Cell(spec.variant, spec.actor, spec.distinguisher, spec.target, spec.budget)


def cell_trials(cell: Cell, seed: int, first: int, n: int, first_index: int) -> list[TrialSpec]:
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
            TrialSpec(
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


def plan_cells(config: ExperimentConfig) -> list[Cell]:
    """Plain cells are every ordered pair; FD cells every ordered (actor, target) pair without
    the fixed D; budget cells repeat their pairs once per budget."""
    exp = config.experiment
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


def plan_trials(config: ExperimentConfig) -> list[TrialSpec]:
    """n trials per cell, X's identity balanced within each cell, order seeded."""
    specs: list[TrialSpec] = []
    for cell in plan_cells(config):
        n = initial_trials(config, cell)
        specs += cell_trials(cell, config.experiment.seed, 0, n, len(specs))
    return specs


def initial_trials(config: ExperimentConfig, cell: Cell) -> int:
    adaptive = config.experiment.adaptive
    if adaptive is not None and cell.variant in ADAPTIVE_VARIANTS:
        return adaptive.min_n
    return config.experiment.trials_per_pair


def identity_document(config: ExperimentConfig) -> dict[str, Any]:
    """What determines a run's results: agents as they answer, the design, the prompt texts."""
    agents = {}
    for name, agent in sorted(config.used_agents().items()):
        doc = agent.model_dump(mode="json", exclude=TRANSPORT_FIELDS)
        if isinstance(agent, ScriptedAgentConfig) and agent.replies_file is not None:
            # What is replayed matters, not where the file happens to lie.
            doc["replies_file"] = hashlib.sha256(agent.replies_file.read_bytes()).hexdigest()
        agents[name] = doc
    prompts = GTTPrompts.load(config.experiment.prompts)
    experiment = config.experiment.model_dump(mode="json", exclude={"prompts"})
    return {"agents": agents, "experiment": experiment, "prompts": asdict(prompts)}


def run_id(config: ExperimentConfig) -> str:
    canonical = json.dumps(identity_document(config), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]
