"""The comparator ≥ε on an advantage matrix, and the structure it induces (SPEC §1).

An advantage matrix `d` is a square DataFrame: index = actors A, columns = distinguishers B,
d.loc[A, B] = d̂(A, B), NaN where the pair has no data. A ≥ε B iff d̂(A, B) ≤ ε ("B cannot tell
A from itself better than ε"); A >ε B iff A ≥ε B and not B ≥ε A; A ≅ε B iff both.
A missing cell asserts nothing: the relation does not hold and the pair is not counted.

At finite ε, ≅ need not be transitive. Equivalence classes are, by default, the connected
components of the ≅ graph (a partition, which the class order needs); `method="cliques"` gives
the maximal cliques instead (sets whose members are pairwise ≅; they may overlap).
The same functions serve the fixed-distinguisher hierarchy (gtt_fd.fd_advantage_matrix).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import networkx as nx
import numpy as np
import pandas as pd

from turinglab.analysis.gtt import (
    MissingPolicy,
    OpeningPolicy,
    TrialPolicy,
    as_policy,
    pair_table,
)

# Slack for float round-off in d̂ = k/n − ½ (e.g. 0.7 − 0.5 = 0.19999999999999996).
TOLERANCE = 1e-12
DEFAULT_EPSILONS = tuple(round(0.005 * i, 3) for i in range(101))  # 0, 0.005, …, 0.5
Estimator = Literal["pooled", "balanced"]


def advantage_matrix(
    rows: Iterable[Mapping[str, Any]],
    agents: Sequence[str] | None = None,
    *,
    variant: str = "gtt",
    missing: MissingPolicy | TrialPolicy = "wrong",
    opening: OpeningPolicy = "count",
    estimator: Estimator = "pooled",
) -> pd.DataFrame:
    """d̂ per ordered pair: rows actors, columns distinguishers, NaN for missing cells.

    `estimator="pooled"` uses p̂ over all n trials; "balanced" uses ½ŝ_B + ½ŝ_{B,A}.
    `attrs` holds the variant, the policy and the estimator.
    """
    if estimator not in ("pooled", "balanced"):
        raise ValueError(f"estimator must be 'pooled' or 'balanced', not {estimator!r}")
    policy = as_policy(missing, opening)
    table = pair_table(rows, policy, variant=variant)
    names = list(agents) if agents is not None else _agents_of(table)
    matrix = pd.DataFrame(math.nan, index=names, columns=names, dtype=float)
    for p in table:
        if p.actor in matrix.index and p.distinguisher in matrix.columns and p.defined:
            value = p.d_hat if estimator == "pooled" else p.d_balanced
            matrix.loc[p.actor, p.distinguisher] = value
    matrix.index.name, matrix.columns.name = "actor", "distinguisher"
    matrix.attrs = {"variant": variant, "policy": policy, "estimator": estimator}
    return matrix


def _agents_of(table: Iterable[Any]) -> list[str]:
    return sorted({p.actor for p in table} | {p.distinguisher for p in table})


def _checked(d: pd.DataFrame) -> tuple[list[str], np.ndarray]:
    if list(d.index) != list(d.columns):
        raise ValueError(
            "advantage matrix must list the same agents, in the same order, on both axes"
        )
    return [str(a) for a in d.index], d.to_numpy(dtype=float)


def geq_matrix(d: pd.DataFrame, eps: float) -> np.ndarray:
    """Boolean G[i, j] = agent i ≥ε agent j (False where the cell is missing)."""
    _, values = _checked(d)
    with np.errstate(invalid="ignore"):
        return np.where(np.isnan(values), False, values <= eps + TOLERANCE)


def relation_graph(d: pd.DataFrame, eps: float, *, strict: bool = False) -> nx.DiGraph:
    """Edge A → B iff A ≥ε B (or A >ε B with strict=True); self-pairs are left out."""
    names, values = _checked(d)
    g = geq_matrix(d, eps)
    rel = g & ~g.T if strict else g
    graph = nx.DiGraph(eps=eps, strict=strict)
    graph.add_nodes_from(names)
    for i, a in enumerate(names):
        for j, b in enumerate(names):
            if i != j and rel[i, j]:
                graph.add_edge(a, b, d=float(values[i, j]))
    return graph


def related_pairs(d: pd.DataFrame, eps: float, *, strict: bool = False) -> int:
    """Number of ordered pairs A ≠ B with A ≥ε B (or A >ε B)."""
    return relation_graph(d, eps, strict=strict).number_of_edges()


def equivalence_classes(
    d: pd.DataFrame, eps: float, *, method: Literal["components", "cliques"] = "components"
) -> list[frozenset[str]]:
    """Classes of A ≅ε B, largest first (see the module note on the two methods)."""
    names, _ = _checked(d)
    g = geq_matrix(d, eps)
    both = g & g.T
    undirected = nx.Graph()
    undirected.add_nodes_from(names)
    undirected.add_edges_from(
        (names[i], names[j])
        for i in range(len(names))
        for j in range(i + 1, len(names))
        if both[i, j]
    )
    if method == "components":
        groups: Iterable[Iterable[str]] = nx.connected_components(undirected)
    elif method == "cliques":
        groups = nx.find_cliques(undirected)
    else:
        raise ValueError(f"method must be 'components' or 'cliques', not {method!r}")
    return sorted((frozenset(c) for c in groups), key=lambda c: (-len(c), sorted(c)))


def class_label(members: Iterable[str]) -> str:
    return " ≅ ".join(sorted(members))


def class_order(
    d: pd.DataFrame, eps: float, *, link: Literal["all", "any"] = "all", reduce: bool = True
) -> nx.DiGraph:
    """The order induced on the component classes: edge C1 → C2 when C1 is above C2.

    link="all": every measured pair (A ∈ C1, B ∈ C2) has A ≥ε B (and at least one is measured);
    link="any": some pair has. Across classes any such A ≥ε B is strict (else A ≅ B).
    With reduce=True the transitive reduction is returned (for drawing) when the graph is
    acyclic; `graph.graph["acyclic"]` says whether it was (non-transitivity can make cycles).
    """
    if link not in ("all", "any"):
        raise ValueError(f"link must be 'all' or 'any', not {link!r}")
    names, values = _checked(d)
    g = geq_matrix(d, eps)
    index = {a: i for i, a in enumerate(names)}
    classes = equivalence_classes(d, eps)
    graph = nx.DiGraph(eps=eps, link=link)
    for c in classes:
        graph.add_node(class_label(c), members=tuple(sorted(c)))
    for c1 in classes:
        for c2 in classes:
            if c1 == c2:
                continue
            measured = [
                bool(g[index[a], index[b]])
                for a in c1
                for b in c2
                if not np.isnan(values[index[a], index[b]])
            ]
            holds = all(measured) if link == "all" else any(measured)
            if measured and holds:
                graph.add_edge(class_label(c1), class_label(c2))
    graph.graph["acyclic"] = nx.is_directed_acyclic_graph(graph)
    if reduce and graph.graph["acyclic"]:
        reduced = nx.transitive_reduction(graph)
        reduced.add_nodes_from(graph.nodes(data=True))
        reduced.graph.update(graph.graph)
        return reduced
    return graph


def _triple_counts(d: pd.DataFrame, eps: float) -> tuple[int, int]:
    """(violations, checkable): distinct ordered A, B, C with A ≥ B ≥ C and d(A, C) measured."""
    _, values = _checked(d)
    g = geq_matrix(d, eps).astype(np.int64)
    np.fill_diagonal(g, 0)  # B must differ from A and from C
    chains = g @ g  # chains[A, C] = number of B with A ≥ B ≥ C
    off_diagonal = ~np.eye(len(values), dtype=bool)
    measured = ~np.isnan(values) & off_diagonal
    fails = measured & (g == 0)
    return int((chains * fails).sum()), int((chains * measured).sum())


def transitivity_violations(d: pd.DataFrame, eps: float) -> int:
    """Ordered triples of distinct agents with A ≥ε B ≥ε C but not A ≥ε C."""
    return _triple_counts(d, eps)[0]


def violating_triples(d: pd.DataFrame, eps: float) -> list[tuple[str, str, str]]:
    names, values = _checked(d)
    g = geq_matrix(d, eps)
    m = len(names)
    return [
        (names[a], names[b], names[c])
        for a in range(m)
        for b in range(m)
        for c in range(m)
        if len({a, b, c}) == 3
        and g[a, b]
        and g[b, c]
        and not np.isnan(values[a, c])
        and not g[a, c]
    ]


def epsilon_sweep(d: pd.DataFrame, epsilons: Iterable[float] = DEFAULT_EPSILONS) -> pd.DataFrame:
    """Per ε: related pairs, strict pairs, transitivity violations, classes (neither count
    needs to be monotone in ε)."""
    records = []
    for eps in epsilons:
        violations, checkable = _triple_counts(d, eps)
        records.append(
            {
                "eps": float(eps),
                "related_pairs": related_pairs(d, eps),
                "strict_pairs": related_pairs(d, eps, strict=True),
                "transitivity_violations": violations,
                "checkable_triples": checkable,
                "classes": len(equivalence_classes(d, eps)),
            }
        )
    return pd.DataFrame.from_records(records)


@dataclass(frozen=True)
class ReflexivityCheck:
    agent: str
    n: int
    d_hat: float  # d̂(A, A); reflexivity says d(A, A) = 0
    ci: tuple[float, float]  # Clopper–Pearson on p̂, shifted by −½
    flagged: bool  # |d̂| > ε and the CI excludes 0
    policy: TrialPolicy


def reflexivity_checks(
    rows: Iterable[Mapping[str, Any]],
    eps: float = 0.005,
    *,
    variant: str = "gtt",
    missing: MissingPolicy | TrialPolicy = "wrong",
    opening: OpeningPolicy = "count",
    level: float = 0.95,
) -> list[ReflexivityCheck]:
    """One check per self-pair (A, A) with data."""
    policy = as_policy(missing, opening)
    checks = []
    for p in pair_table(rows, policy, variant=variant, level=level):
        if p.actor != p.distinguisher or not p.defined:
            continue
        low, high = p.d_ci
        excludes_zero = low > 0 or high < 0
        checks.append(
            ReflexivityCheck(
                agent=p.actor,
                n=p.n,
                d_hat=p.d_hat,
                ci=(low, high),
                flagged=abs(p.d_hat) > eps + TOLERANCE and excludes_zero,
                policy=policy,
            )
        )
    return checks
