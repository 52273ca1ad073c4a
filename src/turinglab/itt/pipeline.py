"""The AI-judge pipeline on a dataset: embed every response once, then

- per-response judges, one per task (captions; associations on the cue–answer relation;
  scanpaths on their first fixations; ...; grouped by stimulus),
- per-sentence judges for conversations (each message alone; grouped by conversation),
- per-side judges for conversations cut to 3, 6, ... exchanges (the mean embedding of what one
  speaker said so far; the AI counterpart of the human judges' length curves),
- extrapolation across agents (train on one / leave one out) on the per-sentence judges.

All predictions come back as judgement rows; the summary holds timings and notes."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from turinglab.itt.ai_inference import (
    DEFAULT_PERMUTATIONS,
    JudgeInput,
    infer_cv,
    infer_extrapolation,
)
from turinglab.itt.ai_judges import FoldPlan, Sample, cross_validate, extrapolate
from turinglab.itt.ai_marks import calibrated_rates
from turinglab.itt.batches import CONVERSATION_LENGTHS
from turinglab.itt.dataset import Conversation, Response, conversations
from turinglab.itt.embeddings import EmbeddingSpec, embed
from turinglab.itt.judgements import JudgementRow
from turinglab.itt.metrics import judge_family, split_rows, summarise
from turinglab.itt.scanpath import FIXATIONS, scanpath_features


@dataclass
class PipelineResult:
    judgements: list[JudgementRow]
    extrapolation: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    summary: dict[str, Any] = field(default_factory=dict)


def _sample(r: Response, group: str) -> Sample:
    # a response's label is permuted among the responses to the same stimulus
    agent = r.agent if r.source == "machine" else None
    return Sample(r.item, group, r.source, agent, r.task, stratum=r.stimulus_id)


def _conversation_strata(convs: Sequence[Conversation]) -> dict[str, str]:
    """Conversation → permutation stratum: its topic when every topic holds conversations of
    more than one kind (a design balanced within topics), else one stratum for all."""
    kinds: dict[str, set[str]] = {}
    for c in convs:
        kinds.setdefault(c.topic or "", set()).add(c.kind)
    by_topic = all(c.topic for c in convs) and all(len(k) > 1 for k in kinds.values())
    return {c.id: (c.topic or "") if by_topic else "conversation" for c in convs}


def run_judges(
    rows: Sequence[Response],
    *,
    folds: int = 10,
    seeds: Sequence[int] = (0, 1, 2),
    lengths: Sequence[int] = CONVERSATION_LENGTHS,
    extrapolation: bool = True,
    embedding: EmbeddingSpec | None = None,
    permutations: int = DEFAULT_PERMUTATIONS,
    permutation_seed: int = 0,
) -> PipelineResult:
    """`permutations` labellings for each judge's permutation test and interval (0: none;
    then only the cluster bootstrap of `itt score`, which is too narrow for AI judges)."""
    text_rows = [r for r in rows if r.task != "attention"]
    attention = [r for r in rows if r.task == "attention"]
    if not rows:
        raise ValueError("no responses to judge")
    out = PipelineResult([])
    out.summary = {"folds": folds, "seeds": list(seeds), "cv_seconds": {}, "notes": []}
    out.summary["inference"] = {}

    def infer(judges: list[JudgeInput]) -> None:
        if permutations <= 0:
            return
        started = time.perf_counter()
        got = infer_cv(
            judges, folds=folds, seeds=seeds, permutations=permutations, seed=permutation_seed
        )
        out.summary["inference"].update(got["families"])
        out.summary.setdefault("inference_per_judge", {}).update(got["judges"])
        seconds = out.summary.get("inference_seconds", 0.0) + time.perf_counter() - started
        out.summary["inference_seconds"] = round(seconds, 3)

    vectors: dict[str, np.ndarray] = {}
    if text_rows:
        emb = embed([r.text for r in text_rows], spec=embedding)
        vectors = {r.item: emb.vectors[i] for i, r in enumerate(text_rows)}
        out.summary.update(
            {
                "embedding_model": (embedding or EmbeddingSpec()).name,
                "texts_embedded": len(text_rows),
                "embedding_seconds": round(emb.seconds, 3),
                "embeddings_per_second": round(emb.per_second, 1),
            }
        )

    def run_cv(name: str, feats: np.ndarray, samples: list[Sample]) -> FoldPlan | None:
        try:
            res = cross_validate(feats, samples, judge=name, folds=folds, seeds=seeds)
        except ValueError as err:
            out.summary["notes"].append(f"{name}: {err}")
            return None
        out.judgements += res.judgements
        out.summary["cv_seconds"][name] = round(res.seconds, 3)
        out.summary["notes"] += [f"{name}: {n}" for n in res.notes]
        return res.plan

    if attention:
        scan_feats = scanpath_features([r.fixations or [] for r in attention], _extents(attention))
        scan_samples = [_sample(r, r.stimulus_id) for r in attention]
        plan = run_cv("svm-scanpath", scan_feats, scan_samples)
        if plan:
            infer([JudgeInput("svm-scanpath", "svm-scanpath", scan_feats, scan_samples, plan)])
        if extrapolation:
            _extrapolate(
                out,
                scan_feats,
                scan_samples,
                "svm-scanpath",
                "attention",
                permutations,
                permutation_seed,
            )
        out.summary["scanpath_fixations"] = FIXATIONS
    # One classifier per task, as the paper trains them (never one for all tasks pooled).
    by_task: dict[str, list[Response]] = {}
    for r in text_rows:
        if r.task != "conversation":
            by_task.setdefault(r.task, []).append(r)
    for task, task_rows in sorted(by_task.items()):
        task_samples = [_sample(r, r.stimulus_id) for r in task_rows]
        if task == "word-association":
            name = "svm-minilm-word-relation"
            task_feats = _relation_features(task_rows, vectors, embedding)
        else:
            name = f"svm-minilm-{task}"
            task_feats = np.stack([vectors[r.item] for r in task_rows])
        plan = run_cv(name, task_feats, task_samples)
        if plan:
            infer([JudgeInput(name, name, task_feats, task_samples, plan)])
        if extrapolation:
            _extrapolate(out, task_feats, task_samples, name, task, permutations, permutation_seed)
    convs = conversations(text_rows)
    if convs:
        conv_judges = []
        inputs = conversation_inputs(convs, vectors, lengths)
        for name, family, feats, samples in inputs:
            plan = run_cv(name, feats, samples)
            if plan:
                conv_judges.append(JudgeInput(name, family, feats, samples, plan))
        if conv_judges:
            infer(conv_judges)
        if extrapolation:
            _, _, sentence_feats, sentence_samples = inputs[0]
            _extrapolate(
                out,
                sentence_feats,
                sentence_samples,
                "svm-minilm",
                None,
                permutations,
                permutation_seed,
            )
    if permutations > 0:
        out.summary["inference_method"] = (
            f"{permutations} permutations of whole units' labels (conversations, or responses "
            "within a stimulus) re-running the same grouped CV; two-sided p; 95% interval by "
            "inverting the test under a shift (docs/itt.md, AI-judge inference)"
        )
    out.summary["scores"] = {
        family: {k: s[k] for k in SCORE_KEYS}
        for family, s in (
            (f, summarise(rows)) for f, rows in split_rows(out.judgements, judge_family).items()
        )
    }
    for family, inferred in out.summary["inference"].items():
        if family in out.summary["scores"]:
            _calibrated(out.summary["scores"][family], inferred)
    return out


SCORE_KEYS = (
    "n", "units", "detectability", "detectability_ci",
    "p_H_given_H", "p_M_given_M", "ci_H_given_H", "ci_M_given_H", "ci_H_given_M", "ci_M_given_M",
)  # fmt: skip


def _calibrated(summary: dict[str, Any], inferred: dict[str, Any]) -> None:
    """A score's intervals — detectability's and, where the summary has them, the per-class
    rates' — replaced by the permutation-calibrated ones (the cluster bootstrap's kept beside
    for comparison)."""
    summary["cluster_bootstrap_ci"] = summary.get("detectability_ci")
    summary["detectability_ci"] = inferred["detectability_ci"]
    summary["p_value"] = inferred["p_value"]
    summary["inference"] = inferred
    if "ci_H_given_H" in summary:
        calibrated_rates(summary, inferred.get("rates"))


def conversation_inputs(
    convs: Sequence[Conversation], vectors: dict[str, np.ndarray], lengths: Sequence[int]
) -> list[tuple[str, str, np.ndarray, list[Sample]]]:
    """(judge, family, features, samples) of the conversation judges: each message alone
    (grouped by conversation), then each side's mean embedding at every length."""
    strata = _conversation_strata(convs)
    messages = [m for c in convs for m in c.messages]
    out = [
        (
            "svm-minilm-sentence",
            "svm-minilm-sentence",
            np.stack([vectors[m.item] for m in messages]),
            [
                replace(
                    _sample(m, m.conversation or m.stimulus_id),
                    unit=m.conversation,
                    slot=m.speaker,
                    stratum=strata[m.conversation or ""],
                )
                for m in messages
            ],
        )
    ]
    for length in lengths:
        feats, samples = [], []
        for c in convs:
            shown = c.messages[:length]
            if len(c.messages) < length:
                continue
            for side in ("A", "B"):
                said = [m for m in shown if m.speaker == side]
                if not said:
                    continue
                source, agent = c.side(side)
                feats.append(np.mean([vectors[m.item] for m in said], axis=0))
                samples.append(
                    Sample(
                        f"{c.id}:{side}",
                        c.id,
                        source,
                        agent if source == "machine" else None,
                        "conversation",
                        length,
                        unit=c.id,
                        slot=side,
                        stratum=strata[c.id],
                    )
                )
        if samples:
            out.append((f"svm-minilm-side@{length}", "svm-minilm-side", np.stack(feats), samples))
    return out


def _extents(rows: Sequence[Response]) -> list[tuple[float, float]]:
    """Each stimulus's extent for normalising fixations: the largest x and y any scanpath of
    that stimulus reaches (human and machine alike), as the dataset has no image sizes."""
    extent: dict[str, tuple[float, float]] = {}
    for r in rows:
        xs, ys = zip(*(r.fixations or [(1.0, 1.0)]), strict=True)
        w, h = extent.get(r.stimulus_id, (0.0, 0.0))
        extent[r.stimulus_id] = (max(w, *xs), max(h, *ys))
    return [
        (max(extent[r.stimulus_id][0], 1e-9), max(extent[r.stimulus_id][1], 1e-9)) for r in rows
    ]


def _relation_features(
    rows: Sequence[Response], vectors: dict[str, np.ndarray], embedding: EmbeddingSpec | None
) -> np.ndarray:
    """Word association is judged on the cue–answer relation (the paper): the embeddings of
    the cue and of the answer, their difference and their cosine similarity."""
    cue_text = [r.stimulus or r.stimulus_id for r in rows]
    unique = sorted(set(cue_text))
    cue_vectors = dict(zip(unique, embed(unique, spec=embedding).vectors, strict=True))
    cue = np.stack([cue_vectors[c] for c in cue_text])
    answer = np.stack([vectors[r.item] for r in rows])
    norms = np.linalg.norm(cue, axis=1) * np.linalg.norm(answer, axis=1)
    cosine = (cue * answer).sum(axis=1) / np.where(norms > 0, norms, 1.0)
    return np.hstack([cue, answer, answer - cue, cosine[:, None]])


def _extrapolate(
    out: PipelineResult,
    feats: np.ndarray,
    samples: list[Sample],
    judge: str,
    label: str | None,
    permutations: int = 0,
    permutation_seed: int = 0,
) -> None:
    """Across-agent extrapolation for any task with two or more machine agents."""
    if len({s.model for s in samples if s.model}) < 2:
        return
    start = time.perf_counter()
    for mode in ("train-one", "leave-one-out"):
        got = extrapolate(feats, samples, judge=judge, mode=mode)
        key = mode if label is None else f"{mode} ({label})"
        out.extrapolation[key] = {m: summarise(j) for m, j in got.items()}
        if permutations > 0:
            for m, inferred in infer_extrapolation(
                feats, samples, mode=mode, permutations=permutations, seed=permutation_seed
            ).items():
                if m in out.extrapolation[key]:
                    _calibrated(out.extrapolation[key][m], inferred)
    seconds = out.summary.get("extrapolation_seconds", 0.0) + time.perf_counter() - start
    out.summary["extrapolation_seconds"] = round(seconds, 3)
