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
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from turinglab.extras import require
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


@dataclass
class CVResult:
    judgements: list[JudgementRow]
    seconds: float
    folds: int
    seeds: list[int]
    notes: list[str] = field(default_factory=list)


def _classifier(seed: int) -> Any:
    require("itt", "sklearn", "AI judges")
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import LinearSVC

    # A linear SVM as in the paper; balanced class weights because H and M counts may differ.
    return make_pipeline(
        StandardScaler(), LinearSVC(C=0.1, class_weight="balanced", random_state=seed)
    )


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


def cross_validate(
    features: np.ndarray,
    samples: Sequence[Sample],
    *,
    judge: str,
    folds: int = 10,
    seeds: Sequence[int] = (0, 1, 2),
    grouped: bool = True,
) -> CVResult:
    """Stratified k-fold CV repeated over seeds; each sample is predicted once per seed by a
    classifier that never saw its group (with `grouped`). `grouped=False` exists to show the
    leak it prevents."""
    require("itt", "sklearn", "AI judges")
    from sklearn.model_selection import StratifiedGroupKFold, StratifiedKFold

    if len(features) != len(samples):
        raise ValueError("features and samples differ in length")
    y = _labels(samples)
    groups = np.array([s.group for s in samples])
    # Each fold needs both sources: no more folds than the rarer source has groups (samples).
    per_class = [
        len(set(groups[y == c].tolist())) if grouped else int((y == c).sum()) for c in (0, 1)
    ]
    k = min(folds, *per_class)
    if k < 2:
        raise ValueError("cross-validation needs at least two groups of each source")
    notes = [] if k == folds else [f"{folds} folds asked, {k} possible with this data"]
    rows: list[JudgementRow] = []
    start = time.perf_counter()
    for seed in seeds:
        splitter = (
            StratifiedGroupKFold(n_splits=k, shuffle=True, random_state=seed)
            if grouped
            else StratifiedKFold(n_splits=k, shuffle=True, random_state=seed)
        )
        for train, test in splitter.split(features, y, groups if grouped else None):
            if len(set(y[train].tolist())) < 2:
                notes.append(f"seed {seed}: a fold's training part had one class; skipped")
                continue
            clf = _classifier(seed).fit(features[train], y[train])
            rows += _rows(samples, clf.predict(features[test]), f"{judge}/seed{seed}", test)
    return CVResult(rows, time.perf_counter() - start, k, list(seeds), notes)


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
    rng = np.random.default_rng(seed)
    human_groups = sorted({s.group for s in samples if s.source == "human"})
    rng.shuffle(human_groups)
    train_humans = set(human_groups[: len(human_groups) // 2])
    models = sorted({s.model for s in samples if s.model})
    out: dict[str, list[JudgementRow]] = {}
    for x in models:
        train_models = {x} if mode == "train-one" else set(models) - {x}
        train = [
            i
            for i, s in enumerate(samples)
            if (s.source == "human" and s.group in train_humans) or s.model in train_models
        ]
        train_groups = {samples[i].group for i in train}
        test = [
            i
            for i, s in enumerate(samples)
            if s.group not in train_groups
            and ((s.source == "human") or (s.model is not None and s.model not in train_models))
        ]
        if len(set(y[train].tolist())) < 2 or not test:
            continue
        clf = _classifier(seed).fit(features[train], y[train])
        out[x] = _rows(samples, clf.predict(features[test]), f"{judge}/{mode}:{x}", test)
    return out
