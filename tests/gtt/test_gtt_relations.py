"""Comparator, classes, order, reflexivity and ε sweeps on matrices counted by hand."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from gtt_rows import trial
from turinglab.analysis.gtt import TrialPolicy
from turinglab.analysis.gtt_relations import (
    advantage_matrix,
    class_order,
    epsilon_sweep,
    equivalence_classes,
    reflexivity_checks,
    related_pairs,
    relation_graph,
    transitivity_violations,
    violating_triples,
)

NAN = math.nan


def matrix(names: str, values: list[list[float]]) -> pd.DataFrame:
    return pd.DataFrame(values, index=list(names), columns=list(names), dtype=float)


def test_advantage_matrix_m2_with_missing_cell() -> None:
    rows = [
        *[trial("A", "B", True, v) for v in (1, 1)],
        *[trial("A", "B", False, v) for v in (0, 1)],  # p̂(A,B) = 3/4
        *[trial("B", "A", True, v) for v in (1, 0)],
        *[trial("B", "A", False, v) for v in (0, 0)],  # p̂(B,A) = 3/4
        trial("A", "A", True, 1),
        trial("A", "A", False, 1),  # p̂(A,A) = 1/2
        trial("A", "B", False, 0, variant="gttq"),  # another game: ignored
    ]
    d = advantage_matrix(rows, ["A", "B", "C"])
    assert d.loc["A", "B"] == pytest.approx(0.25)
    assert d.loc["B", "A"] == pytest.approx(0.25)
    assert d.loc["A", "A"] == pytest.approx(0.0)
    assert math.isnan(d.loc["B", "B"]) and d.loc["C"].isna().all()
    assert d.attrs["policy"] == TrialPolicy() and d.attrs["variant"] == "gtt"
    # "balanced" differs from "pooled" when the branches are unequal after exclusion.
    rows.append(trial("A", "B", False, None))
    pooled = advantage_matrix(rows, missing="exclude")
    assert pooled.loc["A", "B"] == pytest.approx(0.25)
    wrong = advantage_matrix(rows, estimator="balanced")  # ŝ_B = 1, ŝ_{B,A} = 1/3
    assert wrong.loc["A", "B"] == pytest.approx(0.5 * 1 + 0.5 / 3 - 0.5)


# Hand-built universe: A ≥ B at ε ≥ 0, B ≥ C at ε ≥ 0.1, B ≥ A at ε ≥ 0.2, A ≥ C at ε ≥ 0.3,
# C ≥ A and C ≥ B at ε ≥ 0.4.
SWEEP = matrix(
    "ABC",
    [
        [0.0, 0.0, 0.3],
        [0.2, 0.0, 0.1],
        [0.4, 0.4, 0.0],
    ],
)


@pytest.mark.parametrize(
    ("eps", "related", "strict", "violations", "classes"),
    [
        (0.0, 1, 1, 0, 3),  # only A ≥ B
        (0.1, 2, 2, 1, 3),  # A ≥ B ≥ C, not A ≥ C
        (0.2, 3, 1, 1, 2),  # A ≅ B; A ≥ B ≥ C still without A ≥ C
        (0.3, 4, 2, 0, 2),  # A ≥ C closes the chain: the count went back down
        (0.4, 6, 0, 0, 1),  # everything related
    ],
)
def test_counts_by_hand(eps, related, strict, violations, classes) -> None:
    assert related_pairs(SWEEP, eps) == related
    assert related_pairs(SWEEP, eps, strict=True) == strict
    assert transitivity_violations(SWEEP, eps) == violations
    assert len(equivalence_classes(SWEEP, eps)) == classes


def test_sweep_table_is_not_monotone_and_lists_triples() -> None:
    sweep = epsilon_sweep(SWEEP, [0.0, 0.1, 0.2, 0.3, 0.4])
    assert sweep["transitivity_violations"].tolist() == [0, 1, 1, 0, 0]
    assert sweep["related_pairs"].tolist() == [1, 2, 3, 4, 6]
    assert sweep["checkable_triples"].tolist()[1] == 1
    assert violating_triples(SWEEP, 0.1) == [("A", "B", "C")]


def test_missing_cell_asserts_nothing() -> None:
    d = SWEEP.copy()
    d.loc["A", "C"] = NAN
    assert transitivity_violations(d, 0.1) == 0  # A vs C unmeasured: no violation claimed
    assert epsilon_sweep(d, [0.1])["checkable_triples"].item() == 0
    assert related_pairs(d, 1.0) == 5


def test_rounding_slack_on_the_threshold() -> None:
    d = matrix("AB", [[0.0, 0.8 - 0.5], [NAN, 0.0]])  # 0.30000000000000004 in floats
    assert 0.8 - 0.5 > 0.3
    assert related_pairs(d, 0.3) == 1  # p̂ = 8/10 is d̂ = 0.3 exactly
    assert related_pairs(d, 0.29) == 0


def test_relation_graphs() -> None:
    weak = relation_graph(SWEEP, 0.2)
    assert set(weak.edges) == {("A", "B"), ("B", "A"), ("B", "C")}
    assert weak.edges["B", "C"]["d"] == pytest.approx(0.1)
    strict = relation_graph(SWEEP, 0.2, strict=True)
    assert set(strict.edges) == {("B", "C")}


def test_components_versus_cliques() -> None:
    # A ≅ B and B ≅ C, but C does not reach A: ≅ is not transitive here.
    d = matrix("ABC", [[0, 0, 0.3], [0, 0, 0], [0.3, 0, 0]])
    assert equivalence_classes(d, 0.1) == [frozenset("ABC")]
    assert equivalence_classes(d, 0.1, method="cliques") == [frozenset("AB"), frozenset("BC")]
    with pytest.raises(ValueError, match="method"):
        equivalence_classes(d, 0.1, method="bogus")  # type: ignore[arg-type]


ORDER = matrix(
    "ABCD",
    [
        # A and B are ≅; both above C; C above D; A above D but B is not (d(B, D) = 0.4).
        [0.0, 0.0, 0.05, 0.0],
        [0.0, 0.0, 0.05, 0.4],
        [0.4, 0.4, 0.0, 0.05],
        [0.4, 0.4, 0.4, 0.0],
    ],
)


def test_class_order_links_and_reduction() -> None:
    full_all = class_order(ORDER, 0.1, reduce=False)
    assert set(full_all.nodes) == {"A ≅ B", "C", "D"}
    assert full_all.nodes["A ≅ B"]["members"] == ("A", "B")
    assert set(full_all.edges) == {("A ≅ B", "C"), ("C", "D")}
    full_any = class_order(ORDER, 0.1, link="any", reduce=False)
    assert set(full_any.edges) == {("A ≅ B", "C"), ("C", "D"), ("A ≅ B", "D")}
    reduced = class_order(ORDER, 0.1, link="any")
    assert reduced.graph["acyclic"]
    assert set(reduced.edges) == {("A ≅ B", "C"), ("C", "D")}
    assert reduced.nodes["A ≅ B"]["members"] == ("A", "B")


def test_class_order_reports_cycles() -> None:
    # A ≥ B ≥ C ≥ A, no pair both ways: three classes in a cycle.
    d = matrix("ABC", [[0, 0, 0.4], [0.4, 0, 0], [0, 0.4, 0]])
    order = class_order(d, 0.1)
    assert not order.graph["acyclic"] and order.number_of_edges() == 3


def test_matrix_axes_must_match() -> None:
    bad = pd.DataFrame(np.zeros((2, 2)), index=["A", "B"], columns=["B", "A"])
    with pytest.raises(ValueError, match="same agents"):
        related_pairs(bad, 0.1)


def test_reflexivity_checks() -> None:
    rows = [trial("A", "A", True, 1) for _ in range(10)]
    rows += [trial("A", "A", False, 0) for _ in range(10)]  # A always spots itself: d̂ = ½
    rows += [trial("B", "B", x, 1) for x in (True, False) for _ in range(5)]  # d̂ = 0
    rows += [trial("A", "B", True, 1)]  # not a self-pair
    checks = {c.agent: c for c in reflexivity_checks(rows, eps=0.005)}
    assert set(checks) == {"A", "B"}
    a, b = checks["A"], checks["B"]
    assert a.n == 20 and a.d_hat == pytest.approx(0.5)
    assert a.ci[0] == pytest.approx(0.025 ** (1 / 20) - 0.5)  # Clopper–Pearson for 20/20
    assert a.flagged
    assert b.d_hat == pytest.approx(0.0) and not b.flagged
    # Large |d̂| but a CI that covers 0: not flagged.
    few = [trial("C", "C", True, 1), trial("C", "C", False, 0)]
    (c,) = reflexivity_checks(few)
    assert c.d_hat == pytest.approx(0.5) and c.ci[0] < 0 and not c.flagged
