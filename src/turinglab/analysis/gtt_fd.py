"""Fixed-distinguisher GTT (FDGTT, FDGTTQ, GDGTT) estimates (SPEC §1).

In these rows `distinguisher` is the fixed judge D, `target` is the model Y that X may be,
`actor` imitates Y when X is not Y, and verdict 1 = "X is the target".
  q_{D,X,Y} = Pr[D says 1 | X imitates Y]   (X ≠ Y; actor-branch trials)
  F_D(A) = (m−2)⁻¹ Σ_{C∉{A,D}} q_{D,A,C}     (A fools D about being C)
  R_D(A) = (m−2)⁻¹ Σ_{X∉{A,D}} (1 − q_{D,X,A}) (A is hard to impersonate before D)
  T_D(A) = ½F_D(A) + ½R_D(A)
over a universe of m agents that includes D. Cells without data are left out of the averages
and the counts of cells used are returned, so m − 2 is the denominator only with full data.
The missing-answer policy acts on the verdict (gtt.effective_verdict): under "wrong", a silent
D counts as accepting an impostor and as rejecting the real target.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from turinglab.analysis.gtt import (
    Interval,
    MissingPolicy,
    OpeningPolicy,
    TrialPolicy,
    as_policy,
    effective_verdict,
    exact_ci,
    select_variant,
)
from turinglab.analysis.gtt_relations import (
    DEFAULT_EPSILONS,
    equivalence_classes,
    related_pairs,
)
from turinglab.variants import FD_VARIANTS


@dataclass(frozen=True)
class QCell:
    distinguisher: str
    actor: str
    target: str
    n: int
    says_target: int  # trials where D said 1 (accepted the impostor)
    q: float
    ci: Interval


@dataclass(frozen=True)
class FDScore:
    distinguisher: str
    agent: str
    fooling: float  # F_D
    resistance: float  # R_D
    total: float  # T_D
    fooling_cells: int  # targets C with data (m − 2 with full data)
    resistance_cells: int  # impostors X with data


@dataclass(frozen=True)
class Recognition:
    distinguisher: str
    agent: str
    n: int  # trials with a verdict in which X was the agent itself and the target was the agent
    says_target: int
    rate: float  # Pr[D says 1 | X is A, target A], over given verdicts; NaN without any
    ci: Interval
    no_answers: int = 0  # such trials without a verdict (never counted in n)


def _fd_rows(rows: Iterable[Mapping[str, Any]], variant: str) -> list[Mapping[str, Any]]:
    if variant not in FD_VARIANTS:
        raise ValueError(f"variant must be one of {FD_VARIANTS}, not {variant!r}")
    return select_variant(rows, variant)


def q_table(
    rows: Iterable[Mapping[str, Any]],
    *,
    variant: str = "fdgtt",
    missing: MissingPolicy | TrialPolicy = "wrong",
    opening: OpeningPolicy = "count",
    level: float = 0.95,
) -> list[QCell]:
    """q̂_{D,X,Y} with a Clopper–Pearson CI for every (D, X, Y), X ≠ Y, with data."""
    policy = as_policy(missing, opening)
    counts: dict[tuple[str, str, str], list[int]] = {}
    for r in _fd_rows(rows, variant):
        if r["x_is_target"] or r["actor"] == r["target"]:
            continue
        verdict = effective_verdict(r, policy)
        if verdict is None:
            continue
        k_n = counts.setdefault((r["distinguisher"], r["actor"], r["target"]), [0, 0])
        k_n[0] += verdict
        k_n[1] += 1
    return [
        QCell(d, x, y, n, k, k / n, exact_ci(k, n, level))
        for (d, x, y), (k, n) in sorted(counts.items())
    ]


def fd_scores(
    rows: Iterable[Mapping[str, Any]],
    universe: Sequence[str] | None = None,
    *,
    variant: str = "fdgtt",
    missing: MissingPolicy | TrialPolicy = "wrong",
    opening: OpeningPolicy = "count",
) -> list[FDScore]:
    """F_D, R_D, T_D for every fixed distinguisher D in the rows and every agent A ≠ D."""
    rows = _fd_rows(rows, variant)
    cells = q_table(rows, variant=variant, missing=missing, opening=opening)
    q = {(c.distinguisher, c.actor, c.target): c.q for c in cells}
    names = list(universe) if universe else _universe(rows)
    if len(names) < 3:
        raise ValueError(f"FD scores need a universe of at least 3 agents, got {names}")
    scores = []
    for d in sorted({r["distinguisher"] for r in rows}):
        for a in names:
            if a == d:
                continue
            others = [c for c in names if c not in (a, d)]
            fool = [q[(d, a, c)] for c in others if (d, a, c) in q]
            resist = [1 - q[(d, x, a)] for x in others if (d, x, a) in q]
            f, r = _mean(fool), _mean(resist)
            scores.append(FDScore(d, a, f, r, 0.5 * f + 0.5 * r, len(fool), len(resist)))
    return scores


def _universe(rows: Iterable[Mapping[str, Any]]) -> list[str]:
    return sorted({r[k] for r in rows for k in ("actor", "distinguisher", "target")})


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else math.nan


def recognition_table(
    rows: Iterable[Mapping[str, Any]],
    *,
    variant: str = "fdgtt",
    missing: MissingPolicy | TrialPolicy = "wrong",
    opening: OpeningPolicy = "count",
    level: float = 0.95,
) -> list[Recognition]:
    """How often D accepts A as A: pools the target branch of every (·, A) pair and the
    actor-equals-target trials (A "imitating" itself), since in both X is A.

    Only given verdicts count: imputing a silent D's answer would make "wrong" read as
    "recognised" whenever the actor is the target. Trials without a verdict are counted apart
    (`no_answers`); the opening policy still applies, the missing policy does not."""
    policy = as_policy(missing, opening)
    counts: dict[tuple[str, str], list[int]] = {}  # [says 1, verdicts, no answer]
    for r in _fd_rows(rows, variant):
        if not (r["x_is_target"] or r["actor"] == r["target"]):
            continue
        if policy.opening == "exclude" and r["status"] == "opening-answer":
            continue
        k_n = counts.setdefault((r["distinguisher"], r["target"]), [0, 0, 0])
        if r["verdict"] is None:
            k_n[2] += 1
            continue
        k_n[0] += int(r["verdict"])
        k_n[1] += 1
    return [
        Recognition(d, a, n, k, k / n if n else math.nan, exact_ci(k, n, level), silent)
        for (d, a), (k, n, silent) in sorted(counts.items())
    ]


def fd_advantage_matrix(
    rows: Iterable[Mapping[str, Any]],
    distinguisher: str,
    agents: Sequence[str] | None = None,
    *,
    variant: str = "fdgtt",
    missing: MissingPolicy | TrialPolicy = "wrong",
    opening: OpeningPolicy = "count",
) -> pd.DataFrame:
    """D's advantage Pr[D succeeds] − ½ per (actor A, target B): rows A, columns B.

    A ≥ε;D B iff this is ≤ ε, so gtt_relations' functions give D's hierarchy. A cell needs
    counted verdicts in both branches (X the target itself, X the actor imitating it): with one
    branch only it measures recognition or rejection alone, not telling the two apart, and is
    left undefined (NaN).
    """
    policy = as_policy(missing, opening)
    own = [r for r in _fd_rows(rows, variant) if r["distinguisher"] == distinguisher]
    if not own:
        raise ValueError(f"no {variant} rows with distinguisher {distinguisher!r}")
    names = list(agents) if agents else [a for a in _universe(own) if a != distinguisher]
    # (actor, target) -> [successes, verdicts, verdicts with X the target]
    counts: dict[tuple[str, str], list[int]] = {}
    for r in own:
        verdict = effective_verdict(r, policy)
        if verdict is None:
            continue
        k_n = counts.setdefault((r["actor"], r["target"]), [0, 0, 0])
        k_n[0] += int((verdict == 1) == bool(r["x_is_target"]))
        k_n[1] += 1
        k_n[2] += int(bool(r["x_is_target"]))
    matrix = pd.DataFrame(math.nan, index=names, columns=names, dtype=float)
    for (a, b), (k, n, n_target) in counts.items():
        if a in matrix.index and b in matrix.columns and 0 < n_target < n:
            matrix.loc[a, b] = k / n - 0.5
    matrix.index.name, matrix.columns.name = "actor", "target"
    matrix.attrs = {"variant": variant, "policy": policy, "distinguisher": distinguisher}
    return matrix


def fd_collapse(
    rows: Iterable[Mapping[str, Any]],
    epsilons: Iterable[float] = DEFAULT_EPSILONS,
    *,
    variant: str = "fdgtt",
    missing: MissingPolicy | TrialPolicy = "wrong",
    opening: OpeningPolicy = "count",
) -> pd.DataFrame:
    """How each D's hierarchy collapses as ε grows: strict relations and classes per ε."""
    rows = _fd_rows(rows, variant)
    epsilons = list(epsilons)
    records = []
    for d in sorted({r["distinguisher"] for r in rows}):
        matrix = fd_advantage_matrix(rows, d, variant=variant, missing=missing, opening=opening)
        for eps in epsilons:
            records.append(
                {
                    "distinguisher": d,
                    "eps": float(eps),
                    "related_pairs": related_pairs(matrix, eps),
                    "strict_pairs": related_pairs(matrix, eps, strict=True),
                    "classes": len(equivalence_classes(matrix, eps)),
                }
            )
    return pd.DataFrame.from_records(records)
