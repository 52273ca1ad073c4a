"""GTT estimates against hand-computed small cases (m = 2 and 3, self-pairs, missing cells)."""

from __future__ import annotations

import math

import pytest

from gtt_rows import trial
from turinglab.analysis.gtt import pair_table, turing_scores


def m2_rows() -> list[dict]:
    rows = []
    for actor, dist, self_verdicts, actor_verdicts in [
        ("A", "B", [1, 1], [0, 1]),  # ŝ_B = 1, ŝ_{B,A} = 1/2
        ("B", "A", [1, 0], [0, 0]),  # ŝ_A = 1/2, ŝ_{A,B} = 1
        ("A", "A", [1, 1], [1, 1]),  # self-pair: A imitating A always accepted
        ("B", "B", [0, 0], [0, 1]),
    ]:
        rows += [trial(actor, dist, True, v) for v in self_verdicts]
        rows += [trial(actor, dist, False, v) for v in actor_verdicts]
    return rows


def test_pair_estimates_m2() -> None:
    table = {(p.actor, p.distinguisher): p for p in pair_table(m2_rows())}
    ab = table[("A", "B")]
    assert (ab.n, ab.n_self, ab.n_actor) == (4, 2, 2)
    assert ab.s_self == 1.0 and ab.s_actor == 0.5
    assert ab.p_hat == pytest.approx(0.75)
    assert ab.d_hat == pytest.approx(0.25)
    assert ab.se == pytest.approx(math.sqrt(0.75 * 0.25 / 4))
    # Reflexivity check material: A cannot tell itself apart here (d̂ = 0).
    assert table[("A", "A")].d_hat == pytest.approx(0.0)
    assert table[("B", "B")].p_hat == pytest.approx(0.25)


def test_turing_scores_m2_by_hand() -> None:
    scores = {s.agent: s for s in turing_scores(m2_rows())}
    # F(A) = 1 − s_{B,A} = 1/2;  F(B) = 1 − s_{A,B} = 0.
    assert scores["A"].fooling == pytest.approx(0.5)
    assert scores["B"].fooling == pytest.approx(0.0)
    # Proposition 2 (the default): D(A) = p̂(B, A) from cell (B, A) alone: ½·½ + ½·1.
    assert scores["A"].distinguishing == pytest.approx(0.75)
    # D(B) = p̂(A, B) = ½ŝ_B + ½ŝ_{B,A} = ½·1 + ½·½ (the self-pair (B, B) does not enter).
    assert scores["B"].distinguishing == pytest.approx(0.75)
    assert scores["A"].total == pytest.approx(0.625) and scores["B"].total == pytest.approx(0.375)
    assert scores["A"].estimator == "paper" and scores["A"].judged == 1


def test_pooled_turing_scores_m2_by_hand() -> None:
    scores = {s.agent: s for s in turing_scores(m2_rows(), estimator="pooled")}
    assert scores["A"].fooling == pytest.approx(0.5)
    # D(A) = ½ s_A + ½ s_{A,B}; s_A pools A's self-branch trials: (B,A) 1,0 and (A,A) 1,1 → 3/4.
    assert scores["A"].distinguishing == pytest.approx(0.5 * 0.75 + 0.5 * 1.0)
    # D(B): s_B pools (A,B) 1,1 and (B,B) 0,0 → 1/2; s_{B,A} = 1/2.
    assert scores["B"].distinguishing == pytest.approx(0.5)
    assert scores["A"].total == pytest.approx(0.5 * 0.5 + 0.5 * 0.875)
    assert scores["B"].total == pytest.approx(0.25)


def test_no_answer_policy() -> None:
    rows = [*m2_rows(), trial("A", "B", False, None, status="no-answer")]
    wrong = {(p.actor, p.distinguisher): p for p in pair_table(rows, "wrong")}[("A", "B")]
    excl = {(p.actor, p.distinguisher): p for p in pair_table(rows, "exclude")}[("A", "B")]
    assert (wrong.n, wrong.s_actor, wrong.no_answers) == (5, pytest.approx(1 / 3), 1)
    assert (excl.n, excl.s_actor) == (4, 0.5)
    f_wrong = {s.agent: s for s in turing_scores(rows, missing="wrong")}["A"].fooling
    f_excl = {s.agent: s for s in turing_scores(rows, missing="exclude")}["A"].fooling
    assert f_wrong == pytest.approx(2 / 3) and f_excl == pytest.approx(0.5)


def test_opening_answer_counts_with_its_verdict() -> None:
    rows = [trial("A", "B", False, 0, status="opening-answer")]
    (p,) = pair_table(rows)
    assert p.opening_answers == 1 and (p.n_actor, p.s_actor) == (1, 1.0)
    # One branch only: p̂ is undefined rather than the branch's rate (d̂ would read +½).
    assert math.isnan(p.p_hat) and math.isnan(p.d_hat) and math.isnan(p.se)


def test_m3_with_missing_cells() -> None:
    rows = [
        trial("A", "B", False, 1),  # A fools B
        trial("A", "C", False, 0),  # C catches A
        trial("B", "A", True, 1),
    ]
    scores = {s.agent: s for s in turing_scores(rows, ["A", "B", "C"])}
    assert scores["A"].fooling == pytest.approx(0.5)  # mean of 1 (vs B) and 0 (vs C)
    assert scores["A"].opponents == 2
    assert math.isnan(scores["B"].fooling)  # B never acted
    assert scores["B"].opponents == 0
    # D(C): s_C has no self-branch data, so D(C) is unknown rather than guessed.
    assert math.isnan(scores["C"].distinguishing)
    # D(A): s_A = 1 from (B, A), but A never faced an actor, so D(A) is unknown too.
    assert math.isnan(scores["A"].distinguishing)
    pooled = {s.agent: s for s in turing_scores(rows, ["A", "B", "C"], estimator="pooled")}
    assert math.isnan(pooled["A"].distinguishing) and math.isnan(pooled["C"].distinguishing)
    with pytest.raises(ValueError, match="estimator"):
        turing_scores(rows, estimator="mean")  # type: ignore[arg-type]


def test_the_two_estimators_differ_when_a_self_pair_is_pooled() -> None:
    # A judges B (cell (B, A): ŝ_A = 1/2, ŝ_A,B = 1/2) and itself ((A, A): ŝ_A = 1 on 4 trials).
    rows = [trial("B", "A", True, v) for v in (1, 0)] + [trial("B", "A", False, v) for v in (0, 1)]
    rows += [trial("A", "A", True, 1)] * 4 + [trial("A", "A", False, 1)] * 4
    paper = {s.agent: s for s in turing_scores(rows)}["A"]
    pooled = {s.agent: s for s in turing_scores(rows, estimator="pooled")}["A"]
    assert paper.distinguishing == pytest.approx(0.5)  # p̂(B, A) = 2/4
    assert pooled.distinguishing == pytest.approx(0.5 * 5 / 6 + 0.5 * 0.5)  # ŝ_A = 5/6
