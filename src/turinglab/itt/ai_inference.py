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

DEFAULT_PERMUTATIONS = 199
LEVEL = 0.95
MIN_LABELLINGS = 40  # a two-sided 5% test needs 2/N ≤ 0.05


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
    """Observed statistic (values[0]) against its permutation null (values[1:])."""
    observed, null = float(values[0]), values[1:]
    null = null[~np.isnan(null)]
    b = len(null)
    out: dict[str, Any] = {
        "detectability": None if math.isnan(observed) else round(observed, 4),
        "detectability_ci": None,
        "p_value": None,
        "null_median": None if not b else round(float(np.median(null)), 4),
        "null_sd": None if b < 2 else round(float(np.std(null, ddof=1)), 4),
        "permutations": b,
        "labellings": float(f"{distinct:.3g}"),
        "method": "permutation test; interval by inverting it under a shift",
        "note": None,
    }
    if math.isnan(observed) or b < 19:
        out["note"] = "no estimate or too few defined permutations"
        return out
    upper = (1 + int((null >= observed - 1e-12).sum())) / (b + 1)
    lower = (1 + int((null <= observed + 1e-12).sum())) / (b + 1)
    out["p_value"] = round(min(1.0, 2 * min(upper, lower)), 4)
    if distinct < MIN_LABELLINGS:
        out["note"] = (
            f"too small or too unbalanced to say anything: the design allows only "
            f"{distinct:.0f} distinct labellings (a 5% test needs {MIN_LABELLINGS})"
        )
        return out
    # order statistics consistent with the p value: excludes ½ iff p ≤ 1 − level. With
    # fewer than 2/(1 − level) − 1 permutations no p reaches 1 − level, so no interval can
    # exclude anything (clamping m to 0 there excluded ½ at p = 0.1 with 19 permutations).
    m = math.floor((1 - level) / 2 * (b + 1)) - 1
    if m < 0:
        out["note"] = (
            f"{b} permutations cannot give a {level:.0%} interval "
            f"(at least {math.ceil(2 / (1 - level)) - 1} are needed)"
        )
        return out
    s = np.sort(null)
    lo = observed - (s[b - 1 - m] - 0.5)
    hi = observed - (s[m] - 0.5)
    # strictly beyond the order statistic is needed to reject: an exact tie stays inside
    out["detectability_ci"] = [round(float(max(0.0, lo)), 4), round(float(min(1.0, hi)), 4)]
    return out


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
    and per family and model: what `infer_cv` turns into p values and intervals."""

    labellings: Labellings
    judges: dict[str, np.ndarray] = field(default_factory=dict)
    families: dict[str, np.ndarray] = field(default_factory=dict)
    per_model: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)


def cv_values(
    judges: Sequence[JudgeInput],
    *,
    folds: int = 10,
    seeds: Sequence[int] = (0, 1, 2),
    permutations: int = DEFAULT_PERMUTATIONS,
    seed: int = 0,
) -> CVValues:
    """Detectability of each judge, family and family × model under the observed labelling
    and `permutations` relabellings. Judges that share units are permuted together, so a
    family's pool is one labelling at a time."""
    everyone = [s for j in judges for s in j.samples]
    lab = labellings(everyone, permutations, seed)
    out = CVValues(lab)
    family_cells: dict[str, np.ndarray] = {}
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
        family_cells[j.family] = family_cells.get(j.family, 0) + cells
        if len(models) > 1:
            for m in models:
                keep = ~machine | (model == m)
                got = cells_of(predicted, machine, keep)
                family_model[j.family][m] = family_model[j.family].get(m, 0) + got
    for family, cells in family_cells.items():
        out.families[family] = detectability(cells)
        if len(models) > 1:
            out.per_model[family] = {m: detectability(c) for m, c in family_model[family].items()}
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
    judges at each length, pooled as `itt score` pools them), overall and per model."""
    got = cv_values(judges, folds=folds, seeds=seeds, permutations=permutations, seed=seed)
    lab = got.labellings
    out: dict[str, Any] = {"judges": {}, "families": {}}
    for name, values in got.judges.items():
        out["judges"][name] = verdict(values, lab.distinct)
    for family, values in got.families.items():
        entry = verdict(values, lab.distinct)
        if family in got.per_model:
            entry["per_model"] = {
                m: verdict(v, lab.distinct_with_agents) for m, v in got.per_model[family].items()
            }
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
    """Per model: the extrapolation estimate against its permutation null (each labelling
    refitted: which responses train depends on who is which model)."""
    lab, values = extrapolation_values(
        features, samples, mode=mode, permutations=permutations, seed=seed, split_seed=split_seed
    )
    return {x: verdict(v, lab.distinct_with_agents) for x, v in values.items()}


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
    lab = labellings(samples, permutations, seed)
    machine, model = lab.assign(samples)
    design = Design(features, [s.group for s in samples])
    names = sorted({s.model for s in samples if s.model})
    values: dict[str, list[float]] = {m: [] for m in names}
    groups = [s.group for s in samples]
    for b in range(machine.shape[1]):
        y = machine[:, b]
        for x in names:
            train, test = split_indices(groups, ~y, model[:, b], x, mode, split_seed)
            if not test or len(set(y[train].tolist())) < 2:
                values[x].append(math.nan)
                continue
            said = fit_predict(design, train, test, y)
            truth = y[test]
            cells = np.array(
                [
                    [
                        (~said & ~truth).sum(),
                        (said & ~truth).sum(),
                        (~said & truth).sum(),
                        (said & truth).sum(),
                    ]
                ],
                dtype=float,
            )
            values[x].append(float(detectability(cells)[0]))
    return lab, {x: np.array(v) for x, v in values.items()}
