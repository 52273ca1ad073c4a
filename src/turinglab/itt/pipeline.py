"""The AI-judge pipeline on a dataset: embed every response once, then

- per-response judges (captions, associations, ...; grouped by stimulus),
- per-sentence judges for conversations (each message alone; grouped by conversation),
- per-side judges for conversations cut to 3, 6, ... exchanges (the mean embedding of what one
  speaker said so far; the AI counterpart of the human judges' length curves),
- extrapolation across agents (train on one / leave one out) on the per-sentence judges.

All predictions come back as judgement rows; the summary holds timings and notes."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from turinglab.itt.ai_judges import Sample, cross_validate, extrapolate
from turinglab.itt.batches import CONVERSATION_LENGTHS
from turinglab.itt.dataset import Response, conversations
from turinglab.itt.embeddings import MINILM, embed
from turinglab.itt.judgements import JudgementRow
from turinglab.itt.metrics import confusion


@dataclass
class PipelineResult:
    judgements: list[JudgementRow]
    extrapolation: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    summary: dict[str, Any] = field(default_factory=dict)


def _sample(r: Response, group: str) -> Sample:
    return Sample(r.item, group, r.source, r.agent if r.source == "machine" else None, r.task)


def run_judges(
    rows: Sequence[Response],
    *,
    folds: int = 10,
    seeds: Sequence[int] = (0, 1, 2),
    lengths: Sequence[int] = CONVERSATION_LENGTHS,
    extrapolation: bool = True,
) -> PipelineResult:
    text_rows = [r for r in rows if r.task != "attention"]
    if not text_rows:
        raise ValueError("no text responses to judge")
    emb = embed([r.text for r in text_rows])
    vectors = {r.item: emb.vectors[i] for i, r in enumerate(text_rows)}
    out = PipelineResult([])
    out.summary = {
        "embedding_model": MINILM,
        "texts_embedded": len(text_rows),
        "embedding_seconds": round(emb.seconds, 3),
        "embeddings_per_second": round(emb.per_second, 1),
        "folds": folds,
        "seeds": list(seeds),
        "cv_seconds": {},
        "notes": [],
    }

    def run_cv(name: str, feats: np.ndarray, samples: list[Sample]) -> None:
        try:
            res = cross_validate(feats, samples, judge=name, folds=folds, seeds=seeds)
        except ValueError as err:
            out.summary["notes"].append(f"{name}: {err}")
            return
        out.judgements += res.judgements
        out.summary["cv_seconds"][name] = round(res.seconds, 3)
        out.summary["notes"] += [f"{name}: {n}" for n in res.notes]

    single = [r for r in text_rows if r.task != "conversation"]
    if single:
        run_cv(
            "svm-minilm",
            np.stack([vectors[r.item] for r in single]),
            [_sample(r, r.stimulus_id) for r in single],
        )
    convs = conversations(text_rows)
    if convs:
        messages = [m for c in convs for m in c.messages]
        sentence_feats = np.stack([vectors[m.item] for m in messages])
        sentence_samples = [_sample(m, m.conversation or m.stimulus_id) for m in messages]
        run_cv("svm-minilm-sentence", sentence_feats, sentence_samples)
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
                        )
                    )
            if samples:
                run_cv(f"svm-minilm-side@{length}", np.stack(feats), samples)
        if extrapolation:
            start = time.perf_counter()
            for mode in ("train-one", "leave-one-out"):
                got = extrapolate(sentence_feats, sentence_samples, judge="svm-minilm", mode=mode)
                out.extrapolation[mode] = {m: confusion(j).summary() for m, j in got.items()}
            out.summary["extrapolation_seconds"] = round(time.perf_counter() - start, 3)
    return out
