"""Standard quality metrics of machine responses against human references, and their
correlation with imitation detectability across models: BLEU from sacrebleu, CIDEr(-D) from
pycocoevalcap (the COCO caption evaluation code; its CIDEr needs no Java). Texts are lowercased
and split on words here instead of with COCO's Java PTB tokenizer."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from turinglab.extras import require

_TOKEN = re.compile(r"[a-z0-9']+")


def _tokens(text: str) -> str:
    return " ".join(_TOKEN.findall(text.lower()))


def bleu(hypotheses: Sequence[str], references: Sequence[Sequence[str]]) -> float:
    """Corpus BLEU (0–100); `references[i]` are the human answers for hypothesis i."""
    sacrebleu = require("itt", "sacrebleu", "BLEU")

    width = max(len(r) for r in references)
    # sacrebleu wants reference *streams*; pad missing references with an existing one
    streams = [[refs[min(j, len(refs) - 1)] for refs in references] for j in range(width)]
    return float(sacrebleu.corpus_bleu(list(hypotheses), streams).score)


def cider(hypotheses: Sequence[str], references: Sequence[Sequence[str]]) -> float:
    require("itt", "pycocoevalcap", "CIDEr")
    from pycocoevalcap.cider.cider import Cider

    gts = {i: [_tokens(r) for r in refs] for i, refs in enumerate(references)}
    res = {i: [_tokens(h)] for i, h in enumerate(hypotheses)}
    score, _ = Cider().compute_score(gts, res)
    return float(score)


@dataclass(frozen=True)
class QualityCorrelation:
    per_model: dict[str, dict[str, float]]  # model -> {bleu, cider, detectability}
    spearman_bleu: float | None
    spearman_cider: float | None


def correlate(
    by_model: Mapping[str, tuple[Sequence[str], Sequence[Sequence[str]]]],
    detectability: Mapping[str, float],
) -> QualityCorrelation:
    """Per model BLEU and CIDEr of its responses, and Spearman ρ with its detectability
    (needs ≥ 3 models for a correlation)."""
    from scipy.stats import spearmanr

    per_model = {}
    for model, (hyps, refs) in sorted(by_model.items()):
        if model in detectability:
            per_model[model] = {
                "bleu": bleu(hyps, refs),
                "cider": cider(hyps, refs),
                "detectability": float(detectability[model]),
            }
    rho: dict[str, float | None] = {"bleu": None, "cider": None}
    if len(per_model) >= 3:
        d = [v["detectability"] for v in per_model.values()]
        for metric in rho:
            rho[metric] = float(spearmanr([v[metric] for v in per_model.values()], d).statistic)
    return QualityCorrelation(per_model, rho["bleu"], rho["cider"])
