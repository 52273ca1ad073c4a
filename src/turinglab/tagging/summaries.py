"""Summaries of tagged games and agreement between coders: pure functions, no I/O.

- `code_summaries`: per code, the share of games where it occurs and the interrogators' mean
  accuracy in those games, both with exact (Clopper–Pearson) intervals.
- `kappa_per_code`: Cohen's κ between two coders (say the LLM tagger and people) per code, each
  code read as a yes/no label per game, and their mean.
- `label_kappa`: κ between two single-label codings (the rule-based GTT classifier vs the LLM).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Hashable, Sequence
from dataclasses import dataclass

import numpy as np

from turinglab.analysis.stats import binomial_ci, cohen_kappa
from turinglab.tagging.codebooks import Codebook


def parse_codes(value: str | float | None) -> frozenset[str]:
    """Human codes as stored in the study table (rows.txt §2): ';'-separated, None/NaN = none."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return frozenset()
    if not isinstance(value, str):
        raise ValueError(f"codes must be a ';'-separated string, got {value!r}")
    return frozenset(part.strip() for part in value.split(";") if part.strip())


def _exact_ci(k: int, n: int, level: float) -> tuple[float, float]:
    """Clopper–Pearson; no interval (NaN, NaN) for zero games."""
    if n == 0:
        return (math.nan, math.nan)
    return binomial_ci(k, n, level=level, method="clopper-pearson")


def _code_ids(codes: Codebook | Sequence[str]) -> tuple[str, ...]:
    return codes.ids if isinstance(codes, Codebook) else tuple(codes)


def _check_known(code_sets: Sequence[Collection[str]], known: tuple[str, ...], who: str) -> None:
    allowed = set(known)
    for i, codes in enumerate(code_sets):
        unknown = set(codes) - allowed
        if unknown:
            raise ValueError(f"{who}[{i}]: unknown codes {sorted(unknown)}")


@dataclass(frozen=True, slots=True)
class CodeSummary:
    code: str
    n_games: int  # games whose answer for this code was readable: the share's denominator
    k: int  # games where the code occurs
    share: float
    share_ci: tuple[float, float]
    n_scored: int  # games with the code and a known correctness
    accuracy: float  # mean correctness where the code occurs
    accuracy_ci: tuple[float, float]
    n_unreadable: int = 0  # games whose answer for this code could not be read: not counted


def code_summaries(
    code_sets: Sequence[Collection[str]],
    correct: Sequence[bool | None],
    codes: Codebook | Sequence[str],
    level: float = 0.95,
    unreadable: Sequence[Collection[str]] | None = None,
) -> list[CodeSummary]:
    """One line per code, in codebook order. `correct[i]` is whether game i's interrogator was
    right (None = unknown: the game counts for the share, not for the accuracy).
    `unreadable[i]` holds the codes whose answer for game i could not be read (a tagger's
    unparseable reply or error): game i is then neither a hit nor a miss for them — an
    unreadable answer is not evidence that a code is absent."""
    ids = _code_ids(codes)
    if len(code_sets) != len(correct):
        raise ValueError(f"{len(code_sets)} code sets but {len(correct)} correctness values")
    if unreadable is not None and len(unreadable) != len(code_sets):
        raise ValueError(f"{len(code_sets)} code sets but {len(unreadable)} unreadable sets")
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    _check_known(code_sets, ids, "code_sets")
    out = []
    for code in ids:
        skipped = (
            {i for i, u in enumerate(unreadable) if code in u} if unreadable is not None else set()
        )
        n = len(code_sets) - len(skipped)
        hits = [i for i, s in enumerate(code_sets) if code in s and i not in skipped]
        scored = [bool(correct[i]) for i in hits if correct[i] is not None]
        right = sum(scored)
        out.append(
            CodeSummary(
                code=code,
                n_games=n,
                k=len(hits),
                share=len(hits) / n if n else math.nan,
                share_ci=_exact_ci(len(hits), n, level),
                n_scored=len(scored),
                accuracy=right / len(scored) if scored else math.nan,
                accuracy_ci=_exact_ci(right, len(scored), level),
                n_unreadable=len(skipped),
            )
        )
    return out


def label_kappa(a: Sequence[Hashable], b: Sequence[Hashable]) -> float:
    """Cohen's κ of two codings of the same items (the shared `cohen_kappa`); NaN when
    undefined (both coders gave one and the same label to every item)."""
    if len(a) != len(b):
        raise ValueError(f"codings differ in length: {len(a)} vs {len(b)}")
    if not a:
        raise ValueError("cannot compute κ of zero items")
    return float(cohen_kappa(list(a), list(b)))


@dataclass(frozen=True)
class KappaReport:
    per_code: dict[str, float]  # NaN where κ is undefined for that code
    mean: float  # mean over codes with a defined κ

    @property
    def undefined(self) -> tuple[str, ...]:
        return tuple(c for c, k in self.per_code.items() if math.isnan(k))


def kappa_per_code(
    first: Sequence[Collection[str]],
    second: Sequence[Collection[str]],
    codes: Codebook | Sequence[str],
) -> KappaReport:
    """Cohen's κ per code between two multi-label codings of the same games, and the mean."""
    ids = _code_ids(codes)
    if len(first) != len(second):
        raise ValueError(f"codings differ in length: {len(first)} vs {len(second)} games")
    _check_known(first, ids, "first")
    _check_known(second, ids, "second")
    per = {c: label_kappa([c in s for s in first], [c in s for s in second]) for c in ids}
    defined = [k for k in per.values() if not math.isnan(k)]
    return KappaReport(per, float(np.mean(defined)) if defined else math.nan)


def rule_llm_agreement(
    rule_labels: Sequence[str], llm_code_sets: Sequence[Collection[str]], codes: Sequence[str]
) -> KappaReport:
    """κ per probe code between the rule classifier (one label per unit) and an LLM tagger
    (a set per unit; an empty set means "other" when `codes` holds "other")."""
    fallback = {"other"} if "other" in codes else set()
    llm = [set(s) or fallback for s in llm_code_sets]
    return kappa_per_code([{label} for label in rule_labels], llm, codes)
