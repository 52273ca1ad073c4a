"""Confusion matrices and imitation detectability (Zhang et al.).

p(H|H): share of human responses labelled human; p(M|H) = 1 − p(H|H); p(H|M): share of machine
responses labelled human (the machine fooled the judge); p(M|M) = 1 − p(H|M).
Imitation detectability = ½(p(H|H) + p(M|M)): 0.5 for a perfect imitator, 1.0 when trivially
detected. It is the balanced accuracy of the judges, so it does not depend on the H/M mix.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from functools import cache, partial
from typing import Any

import numpy as np

from turinglab.itt.ai_marks import SIGNIFICANCE, calibrate_tables
from turinglab.itt.bootstrap import (
    DEFAULT_REPLICATES,
    Replicates,
    Spread,
    cluster_totals,
    judged,
    paper_half_sample_sd,
    spreads,
    t_interval,
)
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
    """Weighted counts of one group of judgements and the rates derived from them. Counts are
    whole numbers except where an AI judge's cross-validation seeds share one response."""

    hh: float  # human response, labelled H
    hm: float  # human response, labelled M
    mh: float  # machine response, labelled H
    mm: float  # machine response, labelled M

    @property
    def n_human(self) -> float:
        return self.hh + self.hm

    @property
    def n_machine(self) -> float:
        return self.mh + self.mm

    def rate(self, k: float, n: float) -> float:
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

    @property
    def accuracy(self) -> float:
        return self.rate(self.hh + self.mm, self.n_human + self.n_machine)

    def detectability_ci(self, z: float = Z95) -> tuple[float, float]:
        """Normal interval from the two binomial arms *as if every row were independent* (kept
        for comparison; `summary` reports the cluster bootstrap instead)."""
        if not self.n_human or not self.n_machine:
            return (math.nan, math.nan)
        var = 0.0
        for k, n in ((self.hh, self.n_human), (self.mm, self.n_machine)):
            p = (k + z * z / 4) / (n + z * z / 2)
            var += p * (1 - p) / n
        half = z * 0.5 * math.sqrt(var)
        d = self.detectability
        return (max(0.0, d - half), min(1.0, d + half))

    def summary(
        self, intervals: dict[str, tuple[float, float] | None] | None = None
    ) -> dict[str, Any]:
        def num(x: float) -> float | None:
            return None if math.isnan(x) else round(x, 4)

        def ci(name: str) -> list[float] | None:
            got = (intervals or {}).get(name)
            return None if got is None else [round(got[0], 4), round(got[1], 4)]

        return {
            "counts": {k: _whole(v) for k, v in asdict(self).items()},
            "n": _whole(self.n_human + self.n_machine),
            "p_H_given_H": num(self.p_h_given_h),
            "p_M_given_H": num(self.p_m_given_h),
            "p_H_given_M": num(self.p_h_given_m),
            "p_M_given_M": num(self.p_m_given_m),
            "ci_H_given_H": ci("p_H_given_H"),
            "ci_M_given_H": ci("p_M_given_H"),
            "ci_H_given_M": ci("p_H_given_M"),
            "ci_M_given_M": ci("p_M_given_M"),
            "detectability": num(self.detectability),
            "detectability_ci": ci("detectability"),
            "accuracy": num(self.accuracy),
            "accuracy_ci": ci("accuracy"),
        }


def _whole(x: float) -> float | int:
    return round(x) if abs(x - round(x)) < 1e-9 else round(x, 4)


def judge_family(row: JudgementRow) -> str:
    """Judges that share a method: an AI judge's CV seeds and conversation lengths folded
    together ("svm-minilm-side@4/seed2" → "svm-minilm-side"); all people are "human judges"."""
    if row.judge_type == "human":
        return "human judges"
    return _ai_family(row.judge)


@cache
def _ai_family(judge: str) -> str:
    # cached: weights() asks for every row of every table, and the names are few
    return re.sub(r"@\d+$", "", re.sub(r"/seed\d+$", "", judge))


def judge_cluster(row: JudgementRow) -> str:
    """The judge as a resampling unit: each person, or an AI judge whatever its seeds."""
    return f"person:{row.judge}" if row.judge_type == "human" else f"ai:{judge_family(row)}"


def weights(rows: Sequence[JudgementRow]) -> list[float]:
    """1 per row, except an AI judge's repeated predictions of one response (cross-validation
    seeds), which share 1 so the response counts once: seeds are averaged, never pooled."""
    key: Callable[[JudgementRow], tuple[object, ...]] = lambda r: (  # noqa: E731
        judge_family(r),
        r.item,
        r.length,
    )
    repeats = Counter(key(r) for r in rows if r.judge_type == "ai")
    return [1.0 if r.judge_type == "human" else 1.0 / repeats[key(r)] for r in rows]


def confusion(rows: Iterable[JudgementRow]) -> Confusion:
    rows = list(rows)
    cells = [0.0, 0.0, 0.0, 0.0]
    for r, w in zip(rows, weights(rows), strict=True):
        cells[(0 if r.source == "human" else 2) + (0 if r.label == "H" else 1)] += w
    return Confusion(*cells)


def cluster_spreads(
    rows: Sequence[JudgementRow], replicates: int = DEFAULT_REPLICATES, seed: int = 0
) -> dict[str, Spread | None]:
    """95% cluster-bootstrap spreads (units and judges resampled) of every rate."""
    data = judged(
        [r.cluster for r in rows],
        [judge_cluster(r) for r in rows],
        weights(rows),
        [r.source == "human" for r in rows],
        [r.label == "H" for r in rows],
    )
    return spreads(data, replicates, seed)


def cluster_intervals(
    rows: Sequence[JudgementRow], replicates: int = DEFAULT_REPLICATES, seed: int = 0
) -> dict[str, tuple[float, float] | None]:
    """95% cluster-bootstrap intervals (units and judges resampled) of every rate."""
    got = cluster_spreads(rows, replicates, seed)
    return {k: None if v is None else v.interval for k, v in got.items()}


SD_STATISTICS = ("p_H_given_H", "p_M_given_M", "detectability")


def response_correct(rows: Sequence[JudgementRow]) -> tuple[list[float], list[float]]:
    """Per response judged (a judge's seeds averaged): the share of labels that were right,
    human responses first, then machine ones — the paper's per-response 0/1 lists."""
    right: dict[tuple[str, str, int | None], list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])
    for r, w in zip(rows, weights(rows), strict=True):
        cell = right[(judge_cluster(r), r.item, r.length)]
        cell[0] += w * ((r.label == "H") == (r.source == "human"))
        cell[1] += w
        cell[2] = float(r.source == "human")
    human = [k / n for k, n, h in right.values() if h and n]
    machine = [k / n for k, n, h in right.values() if not h and n]
    return human, machine


def summarise(
    rows: Sequence[JudgementRow], replicates: int = DEFAULT_REPLICATES, seed: int = 0
) -> dict[str, Any]:
    """Counts, rates and their cluster-bootstrap intervals for one group of judgements, with
    the Figure S3C marks: bootstrap SDs (`sd`), the two-sided p of detectability against ½
    (`p_vs_chance`, the test the interval inverts), `significant` (p < 0.05) and the paper's
    own response-level SD (`detectability_sd_paper`)."""
    got = cluster_spreads(rows, replicates, seed) if rows else {}
    c = confusion(rows)
    out = c.summary({k: None if v is None else v.interval for k, v in got.items()})
    out["units"] = len({r.cluster for r in rows})
    out["judges"] = len({judge_cluster(r) for r in rows})
    out["sd"] = {k: None if (v := got.get(k)) is None else round(v.sd, 4) for k in SD_STATISTICS}
    spread = got.get("detectability")
    p = None if spread is None else round(spread.p_against(c.detectability), 4)
    out["p_vs_chance"] = p
    out["significant"] = None if p is None else p < SIGNIFICANCE
    out["detectability_sd_paper"] = _rounded(paper_half_sample_sd(*response_correct(rows), seed))
    return out


def _rounded(x: float | None) -> float | None:
    return None if x is None else round(x, 4)


def per_model_rows(rows: Sequence[JudgementRow]) -> dict[str, list[JudgementRow]]:
    """Each model's judgements plus *all* human responses of the same rows (the paper's
    per-model matrices: the human row is shared, the machine row is the model's). Callers
    split by judge type and task first: a model is never scored on pooled judges or tasks."""
    humans = [r for r in rows if r.source == "human"]
    models = sorted({r.model for r in rows if r.model})
    return {m: [*humans, *(r for r in rows if r.model == m)] for m in models}


def per_model(rows: Sequence[JudgementRow]) -> dict[str, Confusion]:
    return {m: confusion(v) for m, v in per_model_rows(rows).items()}


def split_rows(
    rows: Sequence[JudgementRow], key: Callable[[JudgementRow], object]
) -> dict[str, list[JudgementRow]]:
    groups: dict[str, list[JudgementRow]] = defaultdict(list)
    for r in rows:
        value = key(r)
        if value is not None and value != "":
            groups[str(value)].append(r)
    return dict(sorted(groups.items(), key=lambda kv: _sort_key(kv[0])))


def grouped(
    rows: Sequence[JudgementRow], key: Callable[[JudgementRow], object]
) -> dict[str, Confusion]:
    return {k: confusion(v) for k, v in split_rows(rows, key).items()}


def _task(row: JudgementRow) -> str:
    return row.task or "(no task)"


def judge_model_table(
    rows: Sequence[JudgementRow], replicates: int = DEFAULT_REPLICATES, seed: int = 0
) -> dict[str, dict[str, dict[str, dict[str, Any]]]]:
    """judge → task → model → summary: one table per judge (all people are one judge, "human
    judges"; each AI judge family its own), each model against that judge's human responses
    in that task. Nothing is pooled across judges or tasks."""
    out: dict[str, dict[str, dict[str, dict[str, Any]]]] = {}
    for family, by_family in split_rows(rows, judge_family).items():
        for task, by_task in split_rows(by_family, _task).items():
            models = {
                m: summarise(got, replicates, seed) for m, got in per_model_rows(by_task).items()
            }
            if models:
                out.setdefault(family, {})[task] = models
    return out


def model_table(
    rows: Sequence[JudgementRow], replicates: int = DEFAULT_REPLICATES, seed: int = 0
) -> dict[str, dict[str, dict[str, dict[str, object]]]]:
    """model → judge → task → summary (`judge_model_table` turned round)."""
    return _by_model(judge_model_table(rows, replicates, seed))


def _by_model(
    table: dict[str, dict[str, dict[str, dict[str, Any]]]],
) -> dict[str, dict[str, dict[str, dict[str, object]]]]:
    out: dict[str, dict[str, dict[str, dict[str, object]]]] = defaultdict(dict)
    for family, tasks in table.items():
        for task, models in tasks.items():
            for model, s in models.items():
                out[model].setdefault(family, {})[task] = s
    return dict(sorted(out.items()))


def _sort_key(value: str) -> tuple[int, float, str]:
    try:
        return (0, float(value), "")
    except ValueError:
        return (1, 0.0, value)


def _demographic(column: str, row: JudgementRow) -> str | None:
    return row.demographics.get(column)


FOUR_WAY = ("HH", "HAI", "AIH", "AIAI")  # speaker A first, then B (the paper's answer codes)


def _row_rates(row: dict[str, int]) -> dict[str, float | None]:
    total = sum(row.values())
    return {k: (round(v / total, 4) if total else None) for k, v in row.items()}


def paired_sides(rows: Sequence[JudgementRow]) -> list[tuple[JudgementRow, JudgementRow]]:
    """Each conversation trial's A and B judgements (same judge, same item less its ":A"/":B",
    same length); AI cross-validation seeds are left out (they would count a trial twice)."""
    sides: dict[tuple[str, str, int | None], dict[str, JudgementRow]] = defaultdict(dict)
    for r in rows:
        found = re.fullmatch(r"(.*):([AB])", r.item)
        if found and not re.search(r"/seed\d+$", r.judge):
            sides[(r.judge, found.group(1), r.length)][found.group(2)] = r
    return [(v["A"], v["B"]) for v in sides.values() if len(v) == 2]


def conversation_type_split(
    rows: Sequence[JudgementRow], replicates: int = DEFAULT_REPLICATES, seed: int = 0
) -> dict[str, dict[str, Any]] | None:
    """The paper's Figure S4E split: p(H|H) for human speakers in HH conversations and in mixed
    ones (HAI, AIH), p(AI|AI) for machine speakers in AIAI and in mixed ones; each with the
    number of speakers judged, the conversations and judges they come from, and its 95%
    cluster-bootstrap interval and SD (conversations and judges resampled). None when no
    trial pairs."""
    pairs = paired_sides(rows)
    if not pairs:
        return None
    cells: dict[str, list[tuple[JudgementRow, bool]]] = {
        k: [] for k in ("p(H|H) HH", "p(H|H) mixed", "p(AI|AI) AIAI", "p(AI|AI) mixed")
    }
    for a, b in pairs:
        humans = (a.source == "human") + (b.source == "human")
        for side in (a, b):
            if side.source == "human":
                key = "p(H|H) HH" if humans == 2 else "p(H|H) mixed"
                cells[key].append((side, side.label == "H"))
            else:
                key = "p(AI|AI) AIAI" if humans == 0 else "p(AI|AI) mixed"
                cells[key].append((side, side.label == "M"))
    return {k: _rate_cell(v, replicates, seed) for k, v in cells.items()}


def _rate_cell(
    judged_sides: list[tuple[JudgementRow, bool]], replicates: int, seed: int
) -> dict[str, Any]:
    """A share of right answers with its studentized cluster interval and SD."""
    n = len(judged_sides)
    rate = sum(ok for _, ok in judged_sides) / n if n else math.nan
    out: dict[str, Any] = {
        "n": n,
        "rate": rate,
        "units": len({r.cluster for r, _ in judged_sides}),
        "judges": len({judge_cluster(r) for r, _ in judged_sides}),
        "ci": None,
        "sd": None,
    }
    if n:
        data = judged(
            [r.cluster for r, _ in judged_sides],
            [judge_cluster(r) for r, _ in judged_sides],
            [1.0] * n,
            [True] * n,
            [ok for _, ok in judged_sides],
        )
        spread = spreads(data, replicates, seed)["p_H_given_H"]
        if spread is not None:
            out["ci"] = [round(spread.interval[0], 4), round(spread.interval[1], 4)]
            out["sd"] = round(spread.sd, 4)
    return out


def four_way(
    rows: Sequence[JudgementRow], replicates: int = DEFAULT_REPLICATES, seed: int = 0
) -> dict[str, Any] | None:
    """The 4-way confusion of conversation trials (truth × answer), pairing each trial's A and
    B judgements (same judge, same item less its ":A"/":B"); None when nothing pairs. AI
    cross-validation seeds would count one trial several times, so they are left out."""
    pairs = paired_sides(rows)
    if not pairs:
        return None

    def code(a: bool, b: bool) -> str:
        return ("H" if a else "AI") + ("H" if b else "AI")

    counts = {t: dict.fromkeys(FOUR_WAY, 0) for t in FOUR_WAY}
    category = []
    for a, b in pairs:
        truth = code(a.source == "human", b.source == "human")
        answer = code(a.label == "H", b.label == "H")
        counts[truth][answer] += 1
        category.append(4 * FOUR_WAY.index(truth) + FOUR_WAY.index(answer))
    rates = {t: _row_rates(row) for t, row in counts.items()}
    correct = sum(counts[t][t] for t in FOUR_WAY)
    ci = _four_way_intervals(pairs, category, replicates, seed)
    return {
        "trials": len(pairs),
        "counts": counts,
        "rates": rates,
        "rates_ci": ci["rates"],
        "accuracy": round(correct / len(pairs), 4),
        "accuracy_ci": ci["accuracy"],
    }


def _four_way_intervals(
    pairs: list[tuple[JudgementRow, JudgementRow]],
    category: list[int],
    replicates: int,
    seed: int,
) -> dict[str, Any]:
    """Cluster-bootstrap intervals of each row-normalised cell and of the 4-way accuracy."""
    data = judged(
        [a.cluster for a, _ in pairs],
        [judge_cluster(a) for a, _ in pairs],
        [1.0] * len(pairs),
        [True] * len(pairs),
        [True] * len(pairs),
    )
    cat = np.asarray(category)
    units, judges = int(data.unit.max()) + 1, int(data.judge.max()) + 1
    observed = np.bincount(cat, minlength=16).astype(float)[None]
    by_unit = cluster_totals(data.unit, data.weight, cat, 16, replicates, seed)
    by_judge = None
    if judges > 1:
        by_judge = cluster_totals(data.judge, data.weight, cat, 16, replicates, seed + 1)

    def rates_of(totals: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        t = totals.reshape(-1, 4, 4)
        with np.errstate(invalid="ignore", divide="ignore"):
            return t / t.sum(axis=2, keepdims=True), np.trace(t, axis1=1, axis2=2) / t.sum(
                axis=(1, 2)
            )

    point, unit_reps = rates_of(observed), rates_of(by_unit)
    judge_reps = None if by_judge is None else rates_of(by_judge)

    # a truth row's rates rest on the conversations of that truth only
    row_units = [len(np.unique(data.unit[cat // 4 == i])) for i in range(4)]

    def ci(
        pick: Callable[[tuple[np.ndarray, np.ndarray]], np.ndarray], units: int = units
    ) -> list[float] | None:
        reps = Replicates(
            float(pick(point)[0]),
            pick(unit_reps),
            None if judge_reps is None else pick(judge_reps),
            units,
            judges,
        )
        got = t_interval(reps)
        return None if got is None else [round(got[0], 4), round(got[1], 4)]

    return {
        "rates": {
            t: {
                a: ci(lambda r, i=i, j=j: r[0][:, i, j], row_units[i])  # type: ignore[misc]
                for j, a in enumerate(FOUR_WAY)
            }
            for i, t in enumerate(FOUR_WAY)
        },
        "accuracy": ci(lambda r: r[1]),
    }


def _four_way_lengths(
    rows: Sequence[JudgementRow], replicates: int, seed: int
) -> dict[str, object]:
    by_length = split_rows(rows, lambda r: r.length)
    return {k: got for k, v in by_length.items() if (got := four_way(v, replicates, seed))}


def score(
    rows: Sequence[JudgementRow],
    group_by: Sequence[str] = (),
    replicates: int = DEFAULT_REPLICATES,
    seed: int = 0,
    ai_inference: dict[str, Any] | None = None,
) -> dict[str, object]:
    """Everything `itt score` prints: per judge (all people are one judge, each AI judge
    family another; never pooled) with its models, lengths and the 4-way / Figure S4E
    conversation tables; per task and per judge group; every rate with its cluster-bootstrap
    interval and SD and detectability's test against ½, except AI judge families when
    `ai_inference` (study.json's permutation results) is given. `overall`, `per_judge_type`
    and `per_length` pool judges and are kept for scripts; the printed tables do not use them."""

    def table(
        subset: Sequence[JudgementRow], key: Callable[[JudgementRow], object]
    ) -> dict[str, object]:
        return {k: summarise(v, replicates, seed) for k, v in split_rows(subset, key).items()}

    by_type = split_rows(rows, lambda r: r.judge_type)
    by_family = split_rows(rows, judge_family)
    per_judge_model = judge_model_table(rows, replicates, seed)
    out: dict[str, Any] = {
        "intervals": (
            f"95% studentized cluster bootstrap, {replicates} replicates, seed {seed}: stimuli "
            "or conversations and judges resampled, estimate ± t(df) × SE with G/(G−1) "
            "variances and G−1 degrees of freedom per dimension; AI cross-validation seeds "
            "averaged per response; SD = that SE; * = detectability differs from 0.5 "
            "(two-sided t test the interval inverts, p < 0.05)"
        ),
        "overall": summarise(rows, replicates, seed),
        "per_judge_family": table(rows, judge_family),
        "per_judge_model": per_judge_model,
        "per_model": _by_model(per_judge_model),
        "per_judge_family_and_length": {
            f: lengths
            for f, sub in by_family.items()
            if len(lengths := table(sub, lambda r: r.length)) > 0
        },
        "per_judge_family_and_task": {
            f: tasks
            for f, sub in by_family.items()
            if len(tasks := table(sub, lambda r: r.task)) > 0
        },
        "per_judge_type": table(rows, lambda r: r.judge_type),
        "per_length": table(rows, lambda r: r.length),
        "per_judge_type_and_length": {
            jt: table(sub, lambda r: r.length) for jt, sub in by_type.items()
        },
        "per_task": table(rows, lambda r: r.task),
        "four_way": {
            f: got for f, sub in by_family.items() if (got := four_way(sub, replicates, seed))
        },
        "four_way_per_length": {
            f: lengths
            for f, sub in by_family.items()
            if (lengths := _four_way_lengths(sub, replicates, seed))
        },
        "conversation_types": {
            f: got
            for f, sub in by_family.items()
            if (got := conversation_type_split(sub, replicates, seed))
        },
    }
    groups: dict[str, object] = {}
    for column in group_by:
        if not any(column in r.demographics for r in rows):
            raise ValueError(f"no judgement has a {column!r} column to group by")
        groups[column] = table(rows, partial(_demographic, column))
    out["per_judge_group"] = groups
    if ai_inference is not None:
        calibrate_tables(out, ai_inference)
        out["ai_inference"] = ai_inference
    return out
