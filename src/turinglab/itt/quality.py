"""Standard quality metrics of machine responses against human references, as the COCO caption
evaluation computes them (pycocoevalcap): texts tokenised by the Stanford PTB tokenizer that
pycocoevalcap ships (it needs `java`; without it a regex approximation is used and said so),
corpus BLEU-4 (×100) and CIDEr-D over *all* human references of each stimulus, then each
metric's Spearman correlation with imitation detectability across models, per judge type."""

from __future__ import annotations

import re
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache

from turinglab.extras import require

# pycocoevalcap's PTBTokenizer drops these tokens after tokenising
_PUNCTUATION = {"''", "'", "``", "`", "-LRB-", "-RRB-", "-LCB-", "-RCB-", ".", "?", "!", ","}
_PUNCTUATION |= {":", "-", "--", "...", ";"}
_TOKEN = re.compile(r"n't\b|'(?:s|re|ve|ll|d|m)\b|[a-z0-9]+(?=n't\b)|[a-z0-9]+|[^\sa-z0-9]")


@cache
def tokenizer_name() -> str:
    return "Stanford PTB (pycocoevalcap)" if shutil.which("java") else "regex PTB approximation"


def _approximate(text: str) -> str:
    """PTB-like: lowercase, contractions split ("don't" → "do n't"), punctuation dropped."""
    return " ".join(t for t in _TOKEN.findall(text.lower()) if t not in _PUNCTUATION)


def tokenize(texts: Mapping[int, Sequence[str]]) -> dict[int, list[str]]:
    if tokenizer_name().startswith("Stanford"):
        from pycocoevalcap.tokenizer.ptbtokenizer import PTBTokenizer

        # PTB reads one line per text: newlines inside a text would shift every later text
        return dict(
            PTBTokenizer().tokenize(
                {k: [{"caption": " ".join(t.split())} for t in v] for k, v in texts.items()}
            )
        )
    return {k: [_approximate(t) for t in v] for k, v in texts.items()}


def _inputs(
    hypotheses: Sequence[str], references: Sequence[Sequence[str]]
) -> tuple[dict[int, list[str]], dict[int, list[str]]]:
    if len(hypotheses) != len(references) or any(not r for r in references):
        raise ValueError("every hypothesis needs at least one reference")
    gts = tokenize(dict(enumerate(references)))
    res = tokenize({i: [h] for i, h in enumerate(hypotheses)})
    return gts, res


def bleu(hypotheses: Sequence[str], references: Sequence[Sequence[str]]) -> float:
    """Corpus BLEU-4 (0–100) as COCO computes it; `references[i]` are all the human answers
    to the stimulus of hypothesis i."""
    require("itt", "pycocoevalcap", "BLEU")
    from pycocoevalcap.bleu.bleu import Bleu

    gts, res = _inputs(hypotheses, references)
    scores, _ = Bleu(4).compute_score(gts, res, verbose=0)
    return 100 * float(scores[3])


def cider(hypotheses: Sequence[str], references: Sequence[Sequence[str]]) -> float:
    """CIDEr-D (pycocoevalcap's Cider: clipped counts, length penalty σ = 6)."""
    require("itt", "pycocoevalcap", "CIDEr")
    from pycocoevalcap.cider.cider import Cider

    gts, res = _inputs(hypotheses, references)
    score, _ = Cider().compute_score(gts, res)
    return float(score)


@dataclass(frozen=True)
class QualityCorrelation:
    per_model: dict[str, dict[str, float]]  # model -> {bleu, cider, detectability}
    spearman_bleu: float | None
    spearman_cider: float | None


def model_scores(
    by_model: Mapping[str, tuple[Sequence[str], Sequence[Sequence[str]]]],
) -> dict[str, dict[str, float]]:
    return {
        model: {"bleu": bleu(hyps, refs), "cider": cider(hyps, refs)}
        for model, (hyps, refs) in sorted(by_model.items())
    }


def correlate(
    by_model: Mapping[str, tuple[Sequence[str], Sequence[Sequence[str]]]],
    detectability: Mapping[str, float],
    scores: Mapping[str, Mapping[str, float]] | None = None,
) -> QualityCorrelation:
    """Per model BLEU-4 and CIDEr-D of its responses, and Spearman ρ with its detectability
    (needs ≥ 3 models). `scores` reuses metrics already computed (one judge type of many)."""
    from scipy.stats import spearmanr

    known = scores or model_scores({m: v for m, v in by_model.items() if m in detectability})
    per_model = {
        model: {**known[model], "detectability": float(detectability[model])}
        for model in sorted(known)
        if model in detectability
    }
    rho: dict[str, float | None] = {"bleu": None, "cider": None}
    if len(per_model) >= 3:
        d = [v["detectability"] for v in per_model.values()]
        for metric in rho:
            rho[metric] = float(spearmanr([v[metric] for v in per_model.values()], d).statistic)
    return QualityCorrelation(per_model, rho["bleu"], rho["cider"])
