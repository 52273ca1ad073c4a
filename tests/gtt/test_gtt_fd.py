"""Fixed-distinguisher scores on an m = 4 universe {D, A, B, C}, so m − 2 = 2, by hand."""

from __future__ import annotations

import math

import pytest
from scipy.stats import beta

from turinglab.analysis.gtt_fd import (
    fd_advantage_matrix,
    fd_collapse,
    fd_scores,
    q_table,
    recognition_table,
)


def fd(d, actor, target, x_is_target, verdict, variant="fdgtt"):
    return {
        "variant": variant,
        "actor": actor,
        "distinguisher": d,
        "target": target,
        "x_is_target": x_is_target,
        "verdict": verdict,
        "correct": None if verdict is None else (verdict == 1) == x_is_target,
        "status": "answered" if verdict is not None else "no-answer",
    }


# D's verdicts when X = actor imitating target (1 = "X is the target"):
IMITATION = {
    ("A", "B"): [1, 0],  # q_{D,A,B} = 1/2
    ("A", "C"): [1, 1],  # 1
    ("B", "A"): [0, 0],  # 0
    ("B", "C"): [1, 0],  # 1/2
    ("C", "A"): [0, 1],  # 1/2
    ("C", "B"): [1, 1],  # 1
}
# Verdicts when X is the target itself (target branch of the same pair): do not enter q.
TARGET_BRANCH = {("A", "B"): [1, 1], ("B", "A"): [1, 0], ("C", "A"): [1, 1]}


def universe_rows(skip: tuple[str, str] | None = None) -> list[dict]:
    rows = []
    for (x, y), verdicts in IMITATION.items():
        if (x, y) != skip:
            rows += [fd("D", x, y, False, v) for v in verdicts]
    for (x, y), verdicts in TARGET_BRANCH.items():
        rows += [fd("D", x, y, True, v) for v in verdicts]
    return rows


def test_q_table() -> None:
    q = {(c.actor, c.target): c for c in q_table(universe_rows())}
    assert len(q) == 6
    assert q[("A", "B")].q == 0.5 and q[("A", "C")].q == 1.0 and q[("B", "A")].q == 0.0
    assert q[("A", "B")].ci == pytest.approx((beta.ppf(0.025, 1, 2), beta.ppf(0.975, 2, 1)))


def test_fd_scores_full_universe() -> None:
    scores = {s.agent: s for s in fd_scores(universe_rows(), ["D", "A", "B", "C"])}
    assert set(scores) == {"A", "B", "C"}  # D is not scored by itself
    a, b, c = scores["A"], scores["B"], scores["C"]
    assert a.fooling == pytest.approx((0.5 + 1.0) / 2)  # q_{D,A,B}, q_{D,A,C}
    assert b.fooling == pytest.approx((0.0 + 0.5) / 2)
    assert c.fooling == pytest.approx((0.5 + 1.0) / 2)
    assert a.resistance == pytest.approx(((1 - 0.0) + (1 - 0.5)) / 2)  # 1 − q_{D,B,A}, q_{D,C,A}
    assert b.resistance == pytest.approx(((1 - 0.5) + (1 - 1.0)) / 2)
    assert c.resistance == pytest.approx(((1 - 1.0) + (1 - 0.5)) / 2)
    assert (a.total, b.total, c.total) == pytest.approx((0.75, 0.25, 0.5))
    assert a.fooling_cells == a.resistance_cells == 2


def test_fd_scores_with_a_missing_cell() -> None:
    scores = {s.agent: s for s in fd_scores(universe_rows(skip=("C", "B")), ["D", "A", "B", "C"])}
    assert scores["C"].fooling == pytest.approx(0.5) and scores["C"].fooling_cells == 1
    assert scores["B"].resistance == pytest.approx(0.5) and scores["B"].resistance_cells == 1
    assert scores["A"].fooling_cells == 2


def test_missing_answer_policy_acts_on_the_verdict() -> None:
    rows = [*universe_rows(), fd("D", "B", "A", False, None)]  # silent on an impostor
    wrong = {(c.actor, c.target): c.q for c in q_table(rows)}
    assert wrong[("B", "A")] == pytest.approx(1 / 3)  # silence = accepting the impostor
    assert {(c.actor, c.target): c.q for c in q_table(rows, missing="exclude")}[("B", "A")] == 0
    assert {(c.actor, c.target): c.q for c in q_table(rows, missing="as-0")}[("B", "A")] == 0


def test_recognition_counts_only_given_verdicts() -> None:
    # Every trial silent, in both kinds of "X is A" trial: "wrong" would impute 0 for the
    # target branch and 1 ("recognised") when the actor is the target — neither is a verdict.
    silent = [
        fd("D", "B", "A", True, None),
        fd("D", "A", "A", False, None),
        fd("D", "C", "C", False, None),
    ]
    for missing in ("wrong", "exclude", "as-0", "as-1"):
        rec = {r.agent: r for r in recognition_table(silent, missing=missing)}
        assert (rec["A"].n, rec["A"].says_target, rec["A"].no_answers) == (0, 0, 2)
        assert math.isnan(rec["A"].rate) and math.isnan(rec["A"].ci[0])
        assert (rec["C"].n, rec["C"].no_answers) == (0, 1)
    mixed = [*silent, fd("D", "A", "A", False, 1)]
    rec_a = {r.agent: r for r in recognition_table(mixed)}["A"]
    assert (rec_a.n, rec_a.says_target, rec_a.rate, rec_a.no_answers) == (1, 1, 1.0, 2)


def test_recognition_table_pools_target_branch_and_self_imitation() -> None:
    rows = [*universe_rows(), fd("D", "A", "A", False, 0), fd("D", "A", "A", False, 1)]
    rec = {r.agent: r for r in recognition_table(rows)}
    # Target A: target branch of (B, A) 1, 0 and of (C, A) 1, 1, plus A "imitating" A: 0, 1.
    assert (rec["A"].n, rec["A"].says_target) == (6, 4)
    assert rec["A"].rate == pytest.approx(4 / 6)
    assert (rec["B"].n, rec["B"].rate) == (2, 1.0)
    assert "C" not in rec
    assert rec["B"].ci == pytest.approx((0.025 ** (1 / 2), 1.0))


# Target-branch verdicts for the pairs TARGET_BRANCH leaves out, so every cell has both.
OTHER_TARGETS = {("A", "C"): [1, 0], ("B", "C"): [0, 0], ("C", "B"): [1, 1]}


def both_branch_rows() -> list[dict]:
    extra = [fd("D", x, y, True, v) for (x, y), vs in OTHER_TARGETS.items() for v in vs]
    return universe_rows() + extra


def test_fd_advantage_matrix_and_collapse() -> None:
    d = fd_advantage_matrix(both_branch_rows(), "D")
    assert list(d.index) == ["A", "B", "C"]
    # (A, B): impostor verdicts 1, 0 → right once; target verdicts 1, 1 → right twice: 3/4.
    assert d.loc["A", "B"] == pytest.approx(0.25)
    # (A, C): impostor accepted twice (0 right), target 1, 0 (1 right): 1/4.
    assert d.loc["A", "C"] == pytest.approx(-0.25)
    assert d.loc["B", "A"] == pytest.approx(0.75 - 0.5)  # 2 of 2 impostors + 1 of 2 targets
    assert math.isnan(d.loc["A", "A"])
    collapse = fd_collapse(both_branch_rows(), [0.0, 0.25, 0.5])
    assert collapse["distinguisher"].unique().tolist() == ["D"]
    # Cells: A→B .25, A→C −.25, B→A .25, B→C −.25 (1 of 2 impostors, 0 of 2 targets),
    # C→A .25, C→B 0 (0 of 2 impostors, 2 of 2 targets).
    assert collapse["related_pairs"].tolist() == [3, 6, 6]
    # At ε = 0: A ≥ C, B ≥ C, C ≥ B, so B ≅ C and only A > C is strict.
    assert collapse["strict_pairs"].tolist() == [1, 0, 0]
    assert collapse["classes"].tolist() == [2, 1, 1]


def test_a_cell_with_one_branch_is_undefined() -> None:
    """With only impostor trials, D's success is its rejection rate, not whether it tells the
    two apart (accepting every X would score ½ on both branches, 0 on impostors alone)."""
    d = fd_advantage_matrix(universe_rows(), "D")
    assert d.loc["A", "B"] == pytest.approx(0.25)  # both branches
    for a, b in OTHER_TARGETS:  # impostor branch only
        assert math.isnan(d.loc[a, b]), (a, b)
    collapse = fd_collapse(universe_rows(), [0.0, 0.25])
    # Only A→B, B→A, C→A (all .25) are defined: no relation at ε = 0, three at .25.
    assert collapse["related_pairs"].tolist() == [0, 3]


def test_bad_fd_input() -> None:
    with pytest.raises(ValueError, match="variant"):
        q_table(universe_rows(), variant="gtt")
    with pytest.raises(ValueError, match="at least 3"):
        fd_scores([fd("D", "A", "B", False, 1)], ["D", "A"])
    with pytest.raises(ValueError, match="distinguisher 'E'"):
        fd_advantage_matrix(universe_rows(), "E")
    assert q_table(universe_rows(), variant="fdgttq") == []
