"""Confusion matrices and imitation detectability (Zhang et al.).

p(H|H): share of human responses labelled human; p(M|H) = 1 − p(H|H); p(H|M): share of machine
responses labelled human (the machine fooled the judge); p(M|M) = 1 − p(H|M).
Imitation detectability = ½(p(H|H) + p(M|M)): 0.5 for a perfect imitator, 1.0 when trivially
detected. It is the balanced accuracy of the judges, so it does not depend on the H/M mix.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from functools import partial

from turinglab.itt.judgements import JudgementRow

Z95 = 1.959963984540054


def wilson(k: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a proportion (good at small n and near 0 or 1)."""
    if n == 0:
        return (math.nan, math.nan)
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


@dataclass(frozen=True)
class Confusion:
    """Counts of one group of judgements and the rates derived from them."""

    hh: int  # human response, labelled H
    hm: int  # human response, labelled M
    mh: int  # machine response, labelled H
    mm: int  # machine response, labelled M

    @property
    def n_human(self) -> int:
        return self.hh + self.hm

    @property
    def n_machine(self) -> int:
        return self.mh + self.mm

    def rate(self, k: int, n: int) -> float:
        return k / n if n else math.nan

    @property
    def p_h_given_h(self) -> float:
        return self.rate(self.hh, self.n_human)

    @property
    def p_m_given_h(self) -> float:
        return self.rate(self.hm, self.n_human)

    @property
    def p_h_given_m(self) -> float:
        return self.rate(self.mh, self.n_machine)

    @property
    def p_m_given_m(self) -> float:
        return self.rate(self.mm, self.n_machine)

    @property
    def detectability(self) -> float:
        """½(p(H|H) + p(M|M)); NaN when either side has no responses."""
        return 0.5 * (self.p_h_given_h + self.p_m_given_m)

    def detectability_ci(self, z: float = Z95) -> tuple[float, float]:
        """Normal interval from the two independent binomial arms, each with a Wilson-style
        continuity (add z²/2 pseudo-counts) so that 0/n and n/n arms get a non-zero width."""
        if not self.n_human or not self.n_machine:
            return (math.nan, math.nan)
        var = 0.0
        for k, n in ((self.hh, self.n_human), (self.mm, self.n_machine)):
            p = (k + z * z / 4) / (n + z * z / 2)
            var += p * (1 - p) / n
        half = z * 0.5 * math.sqrt(var)
        d = self.detectability
        return (max(0.0, d - half), min(1.0, d + half))

    def summary(self) -> dict[str, object]:
        def ci(k: int, n: int) -> list[float] | None:
            lo, hi = wilson(k, n)
            return None if math.isnan(lo) else [round(lo, 4), round(hi, 4)]

        def num(x: float) -> float | None:
            return None if math.isnan(x) else round(x, 4)

        d_lo, d_hi = self.detectability_ci()
        return {
            "counts": asdict(self),
            "n": self.n_human + self.n_machine,
            "p_H_given_H": num(self.p_h_given_h),
            "p_M_given_H": num(self.p_m_given_h),
            "p_H_given_M": num(self.p_h_given_m),
            "p_M_given_M": num(self.p_m_given_m),
            "ci_H_given_H": ci(self.hh, self.n_human),
            "ci_H_given_M": ci(self.mh, self.n_machine),
            "detectability": num(self.detectability),
            "detectability_ci": None if math.isnan(d_lo) else [round(d_lo, 4), round(d_hi, 4)],
        }


def judge_family(row: JudgementRow) -> str:
    """Judges that share a method: an AI judge's CV seeds and conversation lengths folded
    together ("svm-minilm-side@4/seed2" → "svm-minilm-side"); all people are "human judges"."""
    if row.judge_type == "human":
        return "human judges"
    return re.sub(r"@\d+$", "", re.sub(r"/seed\d+$", "", row.judge))


def confusion(rows: Iterable[JudgementRow]) -> Confusion:
    hh = hm = mh = mm = 0
    for r in rows:
        if r.source == "human":
            hh, hm = (hh + 1, hm) if r.label == "H" else (hh, hm + 1)
        else:
            mh, mm = (mh + 1, mm) if r.label == "H" else (mh, mm + 1)
    return Confusion(hh, hm, mh, mm)


def per_model(rows: Sequence[JudgementRow]) -> dict[str, Confusion]:
    """Each model's confusion against *all* human responses of the same judges and task
    (the paper's per-model matrices: the human row is shared, the machine row is the model's)."""
    humans = [r for r in rows if r.source == "human"]
    models = sorted({r.model for r in rows if r.model})
    return {m: confusion([*humans, *(r for r in rows if r.model == m)]) for m in models}


def grouped(
    rows: Sequence[JudgementRow], key: Callable[[JudgementRow], object]
) -> dict[str, Confusion]:
    groups: dict[str, list[JudgementRow]] = defaultdict(list)
    for r in rows:
        value = key(r)
        if value is not None and value != "":
            groups[str(value)].append(r)
    return {k: confusion(v) for k, v in sorted(groups.items(), key=lambda kv: _sort_key(kv[0]))}


def _sort_key(value: str) -> tuple[int, float, str]:
    try:
        return (0, float(value), "")
    except ValueError:
        return (1, 0.0, value)


def _demographic(column: str, row: JudgementRow) -> str | None:
    return row.demographics.get(column)


def score(rows: Sequence[JudgementRow], group_by: Sequence[str] = ()) -> dict[str, object]:
    """Everything `itt score` prints: overall, per model, judge type, length, task, and per
    judge group (each demographic column named in `group_by`)."""
    out: dict[str, object] = {
        "overall": confusion(rows).summary(),
        "per_model": {k: c.summary() for k, c in per_model(rows).items()},
        "per_judge_type": {
            k: c.summary() for k, c in grouped(rows, lambda r: r.judge_type).items()
        },
        "per_judge_family": {k: c.summary() for k, c in grouped(rows, judge_family).items()},
        "per_length": {k: c.summary() for k, c in grouped(rows, lambda r: r.length).items()},
        "per_task": {k: c.summary() for k, c in grouped(rows, lambda r: r.task).items()},
        "per_judge_type_and_model": {
            jt: {
                k: c.summary()
                for k, c in per_model([r for r in rows if r.judge_type == jt]).items()
            }
            for jt in sorted({r.judge_type for r in rows})
        },
    }
    groups: dict[str, object] = {}
    for column in group_by:
        if not any(column in r.demographics for r in rows):
            raise ValueError(f"no judgement has a {column!r} column to group by")
        groups[column] = {
            k: c.summary() for k, c in grouped(rows, partial(_demographic, column)).items()
        }
    out["per_judge_group"] = groups
    return out
