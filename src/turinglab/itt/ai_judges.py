"""AI judges: a linear classifier on features (sentence embeddings, fixation coordinates) that
labels each response H or M, evaluated the way Zhang et al. did, with one safeguard they did
not spell out: folds are *grouped*, so no stimulus or conversation is in both the training and
the test part (otherwise a judge can learn the conversation rather than the source).

Every evaluation returns ordinary `JudgementRow`s (judge_type "ai"), so AI and human judges are
scored by the same code. Each prediction's judge name says how it was obtained.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np
from scipy import linalg as scipy_linalg

from turinglab.itt.judgements import JudgementRow, Source


@dataclass(frozen=True)
class Sample:
    """One response to judge: its features are computed separately (rows of a matrix)."""

    item: str  # the response id written into judgements
    group: str  # stimulus or conversation id: never split across folds
    source: Source
    model: str | None
    task: str | None = None
    length: int | None = None
    unit: str | None = None  # what carries the label (a conversation); default: the item
    slot: str | None = None  # which part of the unit (the speaker, A or B)
    stratum: str | None = None  # labels are permuted only within a stratum (topic, task)


@dataclass
class CVResult:
    judgements: list[JudgementRow]
    seconds: float
    folds: int
    seeds: list[int]
    notes: list[str] = field(default_factory=list)
    plan: FoldPlan | None = None  # the folds and operators, for permutations of the same CV


def _labels(samples: Sequence[Sample]) -> np.ndarray:
    return np.array([1 if s.source == "machine" else 0 for s in samples])


def _rows(
    samples: Sequence[Sample], predicted: np.ndarray, judge: str, index: Sequence[int]
) -> list[JudgementRow]:
    return [
        JudgementRow(
            judge=judge,
            judge_type="ai",
            item=samples[i].item,
            source=samples[i].source,
            model=samples[i].model,
            label="M" if predicted[j] == 1 else "H",
            task=samples[i].task,
            length=samples[i].length,
            unit=samples[i].group,
        )
        for j, i in enumerate(index)
    ]


RIDGE = 1.0  # penalty per training sample on standardised features


def standardised(features: np.ndarray) -> np.ndarray:
    """Features scaled to zero mean and unit variance over all samples: uses no label, so it
    cannot leak the source, and one scaling serves every fold and permutation."""
    x = np.asarray(features, dtype=np.float64)
    sd = x.std(axis=0)
    return (x - x.mean(axis=0)) / np.where(sd > 0, sd, 1.0)


_controller: Any = None


def single_threaded() -> AbstractContextManager[Any]:
    """BLAS on one thread: these matrices are small, and on a busy machine a threaded BLAS
    spends more time waiting than working (a 360 × 360 Cholesky took 265 ms, 20× its cost).
    The libraries are looked up once (a lookup costs ~7 ms, more than a small fit)."""
    global _controller
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:  # pragma: no cover - ships with scikit-learn
        return nullcontext()
    if _controller is None:
        _controller = ThreadpoolController()
    return cast(AbstractContextManager[Any], _controller.limit(limits=1))


_GRAM_BUDGET = 200_000_000  # bytes of per-group Gram matrices held at once


class Design:
    """Standardised features and what makes the Gram matrix (zᵀz) of a training part — always
    a union of whole groups — cheap: the whole Gram less the few rows left out (CV folds),
    or a sum of per-group Grams (training parts of about half, as extrapolation's), both
    computed the first time they are needed."""

    def __init__(self, features: np.ndarray, groups: Sequence[str]):
        self.z = standardised(features)
        names = sorted(set(groups))
        self.names = names
        index = {g: i for i, g in enumerate(names)}
        self.group = np.array([index[g] for g in groups])
        n, d = self.z.shape
        self._keep_grams = n >= d and len(names) * d * d * 8 <= _GRAM_BUDGET
        self._grams: np.ndarray | None = None
        self._total: np.ndarray | None = None

    @property
    def total(self) -> np.ndarray:
        if self._total is None:
            self._total = self.z.T @ self.z
        return self._total

    @property
    def grams(self) -> np.ndarray:
        if self._grams is None:
            d = self.z.shape[1]
            self._grams = np.zeros((len(self.names), d, d))
            for g in range(len(self.names)):
                rows = self.z[self.group == g]
                self._grams[g] = rows.T @ rows
        return self._grams

    def gram(self, train: np.ndarray) -> np.ndarray:
        """zᵀz over the rows `train` (whole groups)."""
        left_out = len(self.z) - len(train)
        if 4 * left_out <= len(train):
            rest = np.ones(len(self.z), dtype=bool)
            rest[train] = False
            return np.asarray(self.total - self.z[rest].T @ self.z[rest])
        if not self._keep_grams:
            return np.asarray(self.z[train].T @ self.z[train])
        inside = np.unique(self.group[train])
        if 2 * len(inside) <= len(self.names):
            return np.asarray(self.grams[inside].sum(axis=0))
        outside = np.setdiff1d(np.arange(len(self.names)), inside)
        return np.asarray(self.total - self.grams[outside].sum(axis=0))

    def operator(self, train: np.ndarray, test: np.ndarray) -> np.ndarray:
        """The linear map from training targets to test scores of a ridge-regularised linear
        least-squares SVM (Suykens & Vandewalle 1999) trained on `train`: scores = Q @ targets.
        It depends on the features only, so one operator serves every labelling."""
        z = self.z
        m = z[train].mean(axis=0)
        a, t = z[train] - m, z[test] - m
        lam = RIDGE * len(train)
        if len(train) < z.shape[1]:  # dual form: n × n instead of d × d
            g = a @ a.T
            g[np.diag_indices_from(g)] += lam
            return np.asarray(scipy_linalg.cho_solve(scipy_linalg.cho_factor(g), a @ t.T).T)
        h = self.gram(train) - len(train) * np.outer(m, m)
        h[np.diag_indices_from(h)] += lam
        return np.asarray((a @ scipy_linalg.cho_solve(scipy_linalg.cho_factor(h), t.T)).T)

    def scores(self, train: np.ndarray, test: np.ndarray, targets: np.ndarray) -> np.ndarray:
        """`operator(train, test) @ targets` for targets that sum to 0 (±1/n per source),
        without the operator: with centred features a = z − m, aᵀt = zᵀt, so a is not formed
        in the primal form."""
        z = self.z
        m = z[train].mean(axis=0)
        lam = RIDGE * len(train)
        if len(train) < z.shape[1]:
            a = z[train] - m
            g = a @ a.T
            g[np.diag_indices_from(g)] += lam
            w = a.T @ _solve_spd(g, targets)
        else:
            h = self.gram(train) - len(train) * np.outer(m, m)
            h[np.diag_indices_from(h)] += lam
            w = _solve_spd(h, z[train].T @ targets)
        return np.asarray(z[test] @ w - m @ w)


def predict_machine(q: np.ndarray, y_train: np.ndarray) -> np.ndarray:
    """Test predictions (True = M) for each column of labels `y_train` (n_train × B bool).

    Targets are +1/n_M and −1/n_H (each source weighs the same whatever its count) and the
    threshold is 0 on features centred at the training mean, so the decision does not follow
    the class prior of the training part (the source of the below-chance scores that
    unbalanced no-signal designs gave). A training part with one source predicts it."""
    y = y_train.astype(bool)
    n_m = y.sum(axis=0)
    n_h = len(y) - n_m
    with np.errstate(divide="ignore", invalid="ignore"):
        targets = np.where(y, 1.0 / np.maximum(n_m, 1), -1.0 / np.maximum(n_h, 1))
    out = (q @ targets) > 0
    out[:, n_h == 0] = True
    out[:, n_m == 0] = False
    return np.asarray(out)


def fold_ids(groups: Sequence[str], folds: int, seed: int) -> np.ndarray:
    """Each sample's fold: groups shuffled with `seed` and dealt round-robin. The folds do not
    depend on the labels, so a permutation test re-runs exactly the same procedure (stratified
    folds would be drawn afresh for every labelling)."""
    names = sorted(set(groups))
    order = np.random.default_rng(seed).permutation(len(names))
    fold_of = {names[i]: j % folds for j, i in enumerate(order)}
    return np.array([fold_of[g] for g in groups])


@dataclass(frozen=True)
class FoldPlan:
    """The folds and their operators for every seed: built once per dataset, then any number
    of labellings are scored with matrix products."""

    folds: int
    seeds: list[int]
    parts: list[list[tuple[np.ndarray, np.ndarray, np.ndarray]]]  # seed → (train, test, Q)

    def predict(self, y: np.ndarray) -> np.ndarray:
        """seeds × n × B predictions (True = M) for labellings `y` (n × B bool)."""
        out = np.zeros((len(self.seeds), *y.shape), dtype=bool)
        with single_threaded():
            for s, parts in enumerate(self.parts):
                for train, test, q in parts:
                    out[s, test] = predict_machine(q, y[train])
        return out


def fold_plan(
    features: np.ndarray,
    groups: Sequence[str],
    *,
    folds: int = 10,
    seeds: Sequence[int] = (0, 1, 2),
) -> FoldPlan:
    k = min(folds, len(set(groups)))
    if k < 2:
        raise ValueError("cross-validation needs at least two groups")
    parts = []
    with single_threaded():
        design = Design(features, groups)
        for seed in seeds:
            ids = fold_ids(groups, k, seed)
            seed_parts = []
            for f in range(k):
                train, test = np.flatnonzero(ids != f), np.flatnonzero(ids == f)
                seed_parts.append((train, test, design.operator(train, test)))
            parts.append(seed_parts)
    return FoldPlan(k, list(seeds), parts)


def cross_validate(
    features: np.ndarray,
    samples: Sequence[Sample],
    *,
    judge: str,
    folds: int = 10,
    seeds: Sequence[int] = (0, 1, 2),
    grouped: bool = True,
    plan: FoldPlan | None = None,
) -> CVResult:
    """k-fold CV repeated over seeds; each sample is predicted once per seed by a classifier
    that never saw its group (with `grouped`). `grouped=False` exists to show the leak it
    prevents."""
    if len(features) != len(samples):
        raise ValueError("features and samples differ in length")
    y = _labels(samples)
    groups = [s.group if grouped else s.item for s in samples]
    per_class = [len({g for g, c in zip(groups, y, strict=True) if c == k}) for k in (0, 1)]
    if min(per_class) < 2:
        raise ValueError("cross-validation needs at least two groups of each source")
    start = time.perf_counter()
    plan = plan or fold_plan(features, groups, folds=folds, seeds=seeds)
    predicted = plan.predict(y[:, None].astype(bool))[:, :, 0]
    notes = [] if plan.folds == folds else [f"{folds} folds asked, {plan.folds} possible"]
    rows: list[JudgementRow] = []
    everyone = range(len(samples))
    for s, seed in enumerate(seeds):
        rows += _rows(samples, predicted[s].astype(int), f"{judge}/seed{seed}", everyone)
    return CVResult(rows, time.perf_counter() - start, plan.folds, list(seeds), notes, plan)


def fit_predict(
    design: Design, train: Sequence[int], test: Sequence[int], y: np.ndarray
) -> np.ndarray:
    """One fit on `train` (labels `y`, True = M), predictions for `test`: the same classifier
    as `Design.operator` then `predict_machine`, solved for its one labelling (the weights)
    rather than as an operator for any labelling — a refit per labelling costs a d × d
    factorisation, not a test × train matrix."""
    tr, te = np.asarray(train), np.asarray(test)
    y_train = y[tr].astype(bool)
    n_m = int(y_train.sum())
    n_h = len(y_train) - n_m
    if n_h == 0 or n_m == 0:
        return np.full(len(te), n_h == 0)
    targets = np.where(y_train, 1.0 / n_m, -1.0 / n_h)
    with single_threaded():
        return design.scores(tr, te, targets) > 0


def _solve_spd(h: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.asarray(scipy_linalg.cho_solve(scipy_linalg.cho_factor(h), b))


def extrapolation_split(
    samples: Sequence[Sample], x: str, mode: str, seed: int
) -> tuple[list[int], list[int]]:
    """Training and test indices of one extrapolation (see `extrapolate`)."""
    human = np.array([s.source == "human" for s in samples], dtype=bool)
    model = np.array([s.model or "" for s in samples], dtype=object)
    return split_indices([s.group for s in samples], human, model, x, mode, seed)


def split_indices(
    groups: Sequence[str], human: np.ndarray, model: np.ndarray, x: str, mode: str, seed: int
) -> tuple[list[int], list[int]]:
    """`extrapolation_split` on arrays (is human; model name, '' for none), so a permutation
    test can relabel without rebuilding samples."""
    rng = np.random.default_rng(seed)
    names = sorted(set(groups))
    index = {g: i for i, g in enumerate(names)}
    g = np.array([index[k] for k in groups], dtype=int)
    human_groups = sorted({names[k] for k in g[human]})
    rng.shuffle(human_groups)
    train_humans = np.zeros(len(names), dtype=bool)
    train_humans[[index[k] for k in human_groups[: len(human_groups) // 2]]] = True
    models = {m for m in model.tolist() if m}
    train_models = {x} if mode == "train-one" else models - {x}
    of_train_model = np.isin(model, list(train_models)) & (model != "")
    train = (human & train_humans[g]) | of_train_model
    train_groups = np.zeros(len(names), dtype=bool)
    train_groups[g[train]] = True
    test = ~train_groups[g] & (human | ((model != "") & ~of_train_model))
    return np.flatnonzero(train).tolist(), np.flatnonzero(test).tolist()


def extrapolate(
    features: np.ndarray, samples: Sequence[Sample], *, judge: str, mode: str, seed: int = 0
) -> dict[str, list[JudgementRow]]:
    """Across-agent generalisation (Zhang et al. Fig. S10).

    mode "train-one": for each model X, train on humans + X, test on the other models' responses
    (and on held-out humans); "leave-one-out": train on humans + all models but X, test on X.
    Humans are split by group, half for training and half for testing, so the human side of
    the test is unseen too. Returns judgements keyed by the model the mode is named after."""
    if mode not in ("train-one", "leave-one-out"):
        raise ValueError(f"unknown extrapolation mode {mode!r}")
    y = _labels(samples)
    design = Design(features, [s.group for s in samples])
    out: dict[str, list[JudgementRow]] = {}
    for x in sorted({s.model for s in samples if s.model}):
        train, test = extrapolation_split(samples, x, mode, seed)
        if len(set(y[train].tolist())) < 2 or not test:
            continue
        predicted = fit_predict(design, train, test, y.astype(bool))
        out[x] = _rows(samples, predicted.astype(int), f"{judge}/{mode}:{x}", test)
    return out
