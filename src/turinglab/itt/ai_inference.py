"""Inference for AI judges calibrated on the pipeline itself (docs/itt.md, "AI-judge inference").

A cross-validated detectability is one draw of a whole procedure — folds, training, prediction —
and its spread comes from the classifiers as much as from the conversations. Resampling the
fixed predictions (the cluster bootstrap) misses that and was too narrow (17% of real
no-signal datasets excluded chance). Here the procedure itself is re-run:

- **permutation test**: the labels of whole units (a conversation's sides, with their agents)
  are permuted within strata (topic or task), and the same grouped CV — same folds, same
  classifier — is run on each labelling; the p value is two-sided, (1 + #as extreme)/(B + 1);
- **interval by test inversion** under a shift model: δ is in the interval when the estimate
  minus (δ − ½) lies within the null's central 95%. At δ = ½ this is the permutation test, so the
  interval excludes chance exactly when the test rejects, and it is centred on the estimate
  minus the null's own offset from ½ (a CV estimate's bias under no signal corrected).

One fold plan per judge (ai_judges.FoldPlan) serves every labelling: a permutation costs a few
matrix products, not a refit. Extrapolation estimates are refitted per labelling (their
training set depends on the labels)."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from turinglab.itt.ai_judges import (
    Design,
    FoldPlan,
    Sample,
    fit_predict,
    fold_plan,
    split_indices,
)
from turinglab.itt.ai_null import LEVEL, inverted, rate_verdict, rate_verdicts

DEFAULT_PERMUTATIONS = 199


@dataclass(frozen=True)
class Labellings:
    """Unit-level labels and `permutations` relabellings of them, within strata."""

    units: list[str]
    labels: list[dict[str | None, tuple[str, str | None]]]  # unit → slot → (source, model)
    donors: np.ndarray  # (B + 1) × units: column 0 the observed labelling
    distinct: float  # how many different H/M labellings the strata allow
    distinct_with_agents: float  # … counting which agent is which

    def assign(self, samples: Sequence[Sample]) -> tuple[np.ndarray, np.ndarray]:
        """n × (B + 1) arrays: is machine, and the model's name ('' for humans)."""
        index = {u: i for i, u in enumerate(self.units)}
        slots = sorted({str(s.slot) for s in samples})
        slot_of = {k: i for i, k in enumerate(slots)}
        is_machine = np.zeros((len(self.units), len(slots)), dtype=bool)
        model_of = np.full((len(self.units), len(slots)), "", dtype=object)
        for u, label in enumerate(self.labels):
            for name, (source, model) in label.items():
                if str(name) in slot_of:
                    is_machine[u, slot_of[str(name)]] = source == "machine"
                    model_of[u, slot_of[str(name)]] = model or ""
        unit = np.array([index[_unit(s)] for s in samples])
        slot = np.array([slot_of[str(s.slot)] for s in samples])
        donor = self.donors[:, unit]  # (B + 1) × n
        return is_machine[donor, slot].T, model_of[donor, slot].T

    def humans_beside(self, samples: Sequence[Sample]) -> tuple[np.ndarray, np.ndarray]:
        """n × (B + 1): how many slots of each sample's unit are human under each labelling
        (a conversation's kind: 2 HH, 1 mixed, 0 AIAI); n bool: the unit has two slots.
        Permutations keep a unit's slots, so the second does not depend on the labelling."""
        index = {u: i for i, u in enumerate(self.units)}
        humans = np.array([sum(v[0] == "human" for v in lab.values()) for lab in self.labels])
        slots = np.array([len(lab) for lab in self.labels])
        unit = np.array([index[_unit(s)] for s in samples])
        return humans[self.donors[:, unit]].T, slots[unit] == 2


def _unit(s: Sample) -> str:
    return s.unit or s.item


def labellings(
    samples: Sequence[Sample], permutations: int = DEFAULT_PERMUTATIONS, seed: int = 0
) -> Labellings:
    """Whole units swap labels with units of the same stratum and the same slots."""
    labels: dict[str, dict[str | None, tuple[str, str | None]]] = defaultdict(dict)
    stratum: dict[str, str] = {}
    for s in samples:
        labels[_unit(s)][s.slot] = (s.source, s.model)
        stratum[_unit(s)] = s.stratum or s.task or ""
    units = sorted(labels)
    strata: dict[tuple[str, tuple[str, ...]], list[int]] = defaultdict(list)
    for i, u in enumerate(units):
        strata[(stratum[u], tuple(sorted(map(str, labels[u]))))].append(i)
    rng = np.random.default_rng(seed)
    donors = np.tile(np.arange(len(units)), (permutations + 1, 1))
    logs = [0.0, 0.0]  # log distinct labellings: by source alone, by source and agent
    for members in strata.values():
        idx = np.array(members)
        for b in range(1, permutations + 1):
            donors[b, idx] = rng.permutation(idx)
        for k, with_agent in enumerate((False, True)):
            counts: dict[str, int] = defaultdict(int)
            for i in members:
                label = labels[units[i]]
                counts[
                    repr(
                        sorted((str(slot), v if with_agent else v[0]) for slot, v in label.items())
                    )
                ] += 1
            logs[k] += math.lgamma(len(members) + 1) - sum(
                math.lgamma(c + 1) for c in counts.values()
            )
    # whole numbers: exp(lgamma) sums leave 6.000000000000003
    distinct, with_agents = (float(round(math.exp(min(x, 700)), 6)) for x in logs)
    return Labellings(units, [labels[u] for u in units], donors, distinct, with_agents)


def detectability(cells: np.ndarray) -> np.ndarray:
    """½(p(H|H) + p(M|M)) of each row of cells (hh, hm, mh, mm); NaN where an arm is empty."""
    hh, hm, mh, mm = cells.T
    with np.errstate(invalid="ignore", divide="ignore"):
        return 0.5 * (hh / (hh + hm) + mm / (mh + mm))


def cells_of(
    predicted: np.ndarray, machine: np.ndarray, keep: np.ndarray | None = None
) -> np.ndarray:
    """(B + 1) × 4 cells from seeds × n × (B + 1) predictions, seeds averaged; `keep` (n ×
    (B + 1) bool) limits each labelling to some samples (one model's and the humans')."""
    said_m = predicted.mean(axis=0)
    w = np.ones(machine.shape) if keep is None else keep.astype(float)
    human = ~machine
    return np.stack(
        [
            ((1 - said_m) * human * w).sum(axis=0),
            (said_m * human * w).sum(axis=0),
            ((1 - said_m) * machine * w).sum(axis=0),
            (said_m * machine * w).sum(axis=0),
        ],
        axis=1,
    )


def verdict(values: np.ndarray, distinct: float, level: float = LEVEL) -> dict[str, Any]:
    """Observed detectability (values[0]) against its permutation null (values[1:]): its
    null value is ½ whatever the classifier (ai_null.py)."""
    got = inverted(values, distinct, 0.5, level)
    return {
        "detectability": got["estimate"],
        "detectability_ci": got["ci"],
        "p_value": got["p_value"],
        "null_median": got["null_median"],
        "null_sd": got["null_sd"],
        "permutations": got["permutations"],
        "labellings": got["labellings"],
        "method": "permutation test; interval by inverting it under a shift",
        "note": got["note"],
    }


@dataclass(frozen=True)
class JudgeInput:
    name: str  # judge name as in judgements ("svm-minilm-side@6")
    family: str  # what scores pool ("svm-minilm-side")
    features: np.ndarray
    samples: list[Sample]
    plan: FoldPlan | None = None  # the judge's own CV folds, when it was already run


@dataclass
class CVValues:
    """The statistic under every labelling (index 0: the observed one), per judge, per family
    and per family and model: what `infer_cv` turns into p values and intervals. `*_cells`
    keep the (B + 1) × 4 confusion cells the per-class rates come from; `types` the Figure
    S4E cells of each family ((B + 1) × 4 × [right, judged]) and `type_units` the units
    (conversations) each of them holds under the observed labelling."""

    labellings: Labellings
    judges: dict[str, np.ndarray] = field(default_factory=dict)
    families: dict[str, np.ndarray] = field(default_factory=dict)
    per_model: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)
    judge_cells: dict[str, np.ndarray] = field(default_factory=dict)
    family_cells: dict[str, np.ndarray] = field(default_factory=dict)
    model_cells: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)
    types: dict[str, np.ndarray] = field(default_factory=dict)
    type_units: dict[str, list[set[str]]] = field(default_factory=dict)
    judge_length: dict[str, int] = field(default_factory=dict)


TYPE_CELLS = ("p(H|H) HH", "p(H|H) mixed", "p(AI|AI) AIAI", "p(AI|AI) mixed")


def type_masks(machine: np.ndarray, humans: np.ndarray, paired: np.ndarray) -> list[np.ndarray]:
    """n × (B + 1) masks of Figure S4E's cells: human speakers in HH and in mixed
    conversations, machine speakers in AIAI and in mixed ones (two-slot units only)."""
    two = paired[:, None]
    return [
        ~machine & (humans == 2) & two,
        ~machine & (humans == 1) & two,
        machine & (humans == 0) & two,
        machine & (humans == 1) & two,
    ]


def type_cells(predicted: np.ndarray, masks: list[np.ndarray], machine: np.ndarray) -> np.ndarray:
    """(B + 1) × 4 × 2: right answers (seeds averaged) and speakers judged per S4E cell."""
    said_m = predicted.mean(axis=0)
    right = np.where(machine, said_m, 1 - said_m)
    return np.stack(
        [np.stack([(right * m).sum(axis=0), m.sum(axis=0)], axis=-1) for m in masks], axis=1
    )


def cv_values(
    judges: Sequence[JudgeInput],
    *,
    folds: int = 10,
    seeds: Sequence[int] = (0, 1, 2),
    permutations: int = DEFAULT_PERMUTATIONS,
    seed: int = 0,
) -> CVValues:
    """Detectability (and the cells behind it) of each judge, family and family × model under
    the observed labelling and `permutations` relabellings. Judges that share units are
    permuted together, so a family's pool is one labelling at a time."""
    everyone = [s for j in judges for s in j.samples]
    lab = labellings(everyone, permutations, seed)
    out = CVValues(lab)
    family_model: dict[str, dict[str, np.ndarray]] = defaultdict(dict)
    models = sorted({s.model for s in everyone if s.model})
    for j in judges:
        machine, model = lab.assign(j.samples)
        try:
            groups = [s.group for s in j.samples]
            plan = j.plan or fold_plan(j.features, groups, folds=folds, seeds=seeds)
        except ValueError:
            continue
        predicted = plan.predict(machine)
        cells = cells_of(predicted, machine)
        out.judges[j.name] = detectability(cells)
        out.judge_cells[j.name] = cells
        if len(lengths := {s.length for s in j.samples}) == 1 and None not in lengths:
            out.judge_length[j.name] = int(next(iter(lengths)))  # type: ignore[arg-type]
        out.family_cells[j.family] = out.family_cells.get(j.family, 0) + cells
        humans, paired = lab.humans_beside(j.samples)
        if paired.any():
            masks = type_masks(machine, humans, paired)
            out.types[j.family] = out.types.get(j.family, 0) + type_cells(predicted, masks, machine)
            units = out.type_units.setdefault(j.family, [set() for _ in TYPE_CELLS])
            for k, mask in enumerate(masks):
                units[k].update(_unit(j.samples[i]) for i in np.flatnonzero(mask[:, 0]))
        if len(models) > 1:
            for m in models:
                keep = ~machine | (model == m)
                got = cells_of(predicted, machine, keep)
                family_model[j.family][m] = family_model[j.family].get(m, 0) + got
    for family, cells in out.family_cells.items():
        out.families[family] = detectability(cells)
        if len(models) > 1:
            out.model_cells[family] = dict(family_model[family])
            out.per_model[family] = {m: detectability(c) for m, c in family_model[family].items()}
    return out


def _with_rates(entry: dict[str, Any], cells: np.ndarray, distinct: float) -> dict[str, Any]:
    """A detectability verdict with its per-class rates' verdicts (`rates`)."""
    entry["rates"] = rate_verdicts(cells, distinct)
    return entry


def conversation_types(got: CVValues, family: str) -> dict[str, dict[str, Any]] | None:
    """Figure S4E's cells of a family, each rate against its label-free value."""
    if family not in got.types:
        return None
    t = got.types[family]
    out = {}
    for k, name in enumerate(TYPE_CELLS):
        right, judged = t[:, k, 0], t[:, k, 1]
        with np.errstate(invalid="ignore", divide="ignore"):
            rates = right / judged
        cell = rate_verdict(rates, got.labellings.distinct)
        cell.update(n=round(float(judged[0])), units=len(got.type_units[family][k]))
        out[name] = cell
    return out


def infer_cv(
    judges: Sequence[JudgeInput],
    *,
    folds: int = 10,
    seeds: Sequence[int] = (0, 1, 2),
    permutations: int = DEFAULT_PERMUTATIONS,
    seed: int = 0,
) -> dict[str, Any]:
    """Permutation inference for each judge and each family (judges of a family, e.g. side
    judges at each length, pooled as `itt score` pools them), overall, per model, per
    length (a family's judges of one length each) and per conversation type (Figure S4E);
    every detectability with its per-class rates p(H|H) and p(M|M)."""
    got = cv_values(judges, folds=folds, seeds=seeds, permutations=permutations, seed=seed)
    lab = got.labellings
    out: dict[str, Any] = {"judges": {}, "families": {}}
    for name, values in got.judges.items():
        out["judges"][name] = _with_rates(
            verdict(values, lab.distinct), got.judge_cells[name], lab.distinct
        )
    for family, values in got.families.items():
        entry = _with_rates(verdict(values, lab.distinct), got.family_cells[family], lab.distinct)
        if family in got.per_model:
            entry["per_model"] = {
                m: _with_rates(
                    verdict(v, lab.distinct_with_agents),
                    got.model_cells[family][m],
                    lab.distinct_with_agents,
                )
                for m, v in got.per_model[family].items()
            }
        lengths = {
            str(got.judge_length[j.name]): out["judges"][j.name]
            for j in judges
            if j.family == family and j.name in got.judge_length and j.name in out["judges"]
        }
        if lengths:
            entry["per_length"] = lengths
        types = conversation_types(got, family)
        if types is not None:
            entry["conversation_types"] = types
        out["families"][family] = entry
    return out


def infer_extrapolation(
    features: np.ndarray,
    samples: Sequence[Sample],
    *,
    mode: str,
    permutations: int = DEFAULT_PERMUTATIONS,
    seed: int = 0,
    split_seed: int = 0,
) -> dict[str, dict[str, Any]]:
    """Per model: the extrapolation estimate and its per-class rates against their
    permutation null (each labelling refitted: which responses train depends on who is
    which model)."""
    lab, cells = extrapolation_cells(
        features, samples, mode=mode, permutations=permutations, seed=seed, split_seed=split_seed
    )
    d = lab.distinct_with_agents
    return {x: _with_rates(verdict(detectability(c), d), c, d) for x, c in cells.items()}


def extrapolation_values(
    features: np.ndarray,
    samples: Sequence[Sample],
    *,
    mode: str,
    permutations: int = DEFAULT_PERMUTATIONS,
    seed: int = 0,
    split_seed: int = 0,
) -> tuple[Labellings, dict[str, np.ndarray]]:
    """Each model's extrapolation estimate under the observed labelling (index 0) and
    `permutations` relabellings."""
    lab, cells = extrapolation_cells(
        features, samples, mode=mode, permutations=permutations, seed=seed, split_seed=split_seed
    )
    return lab, {x: detectability(c) for x, c in cells.items()}


def extrapolation_cells(
    features: np.ndarray,
    samples: Sequence[Sample],
    *,
    mode: str,
    permutations: int = DEFAULT_PERMUTATIONS,
    seed: int = 0,
    split_seed: int = 0,
) -> tuple[Labellings, dict[str, np.ndarray]]:
    """Each model's (B + 1) × 4 extrapolation cells (hh, hm, mh, mm; NaN where a labelling
    leaves no test or one source to train on)."""
    lab = labellings(samples, permutations, seed)
    machine, model = lab.assign(samples)
    design = Design(features, [s.group for s in samples])
    names = sorted({s.model for s in samples if s.model})
    values: dict[str, list[list[float]]] = {m: [] for m in names}
    groups = [s.group for s in samples]
    for b in range(machine.shape[1]):
        y = machine[:, b]
        for x in names:
            train, test = split_indices(groups, ~y, model[:, b], x, mode, split_seed)
            if not test or len(set(y[train].tolist())) < 2:
                values[x].append([math.nan] * 4)
                continue
            said = fit_predict(design, train, test, y)
            truth = y[test]
            values[x].append(
                [
                    float((~said & ~truth).sum()),
                    float((said & ~truth).sum()),
                    float((~said & truth).sum()),
                    float((said & truth).sum()),
                ]
            )
    return lab, {x: np.array(v, dtype=float) for x, v in values.items()}
