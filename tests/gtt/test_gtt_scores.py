"""Turing scores with bootstrap CIs and rank uncertainty: hand cases and simulation recovery."""

from __future__ import annotations

import math

import numpy as np
import pytest

from gtt_rows import trial
from turinglab.analysis.gtt_scores import score_report


def cell(actor, dist, self_verdicts, actor_verdicts, variant="gtt"):
    return [trial(actor, dist, True, v, variant) for v in self_verdicts] + [
        trial(actor, dist, False, v, variant) for v in actor_verdicts
    ]


def test_point_estimates_m2_by_hand() -> None:
    rows = [
        *cell("A", "B", [1, 1], [0, 1]),  # ŝ_{B,A} = 1/2
        *cell("B", "A", [1, 0], [0, 0]),  # ŝ_{A,B} = 1
        *cell("A", "A", [1, 1], [1, 1]),
        *cell("B", "B", [0, 0], [0, 1]),
    ]
    report = score_report(rows, n_boot=50)
    s = report.by_agent()
    assert report.estimator == "paper"
    assert s["A"].fooling == pytest.approx(0.5)
    assert s["B"].fooling == pytest.approx(0.0)
    # Proposition 2: D(A) = p̂(B, A) = ½·ŝ_A + ½·ŝ_A,B from cell (B, A) only = ½·½ + ½·1.
    assert s["A"].distinguishing == pytest.approx(0.75)
    assert s["B"].distinguishing == pytest.approx(0.5 * 1.0 + 0.5 * 0.5)
    assert s["A"].total == pytest.approx(0.625)
    assert s["B"].total == pytest.approx(0.375)
    assert s["A"].opponents == 1 and s["A"].judged == 1
    pooled = score_report(rows, n_boot=50, estimator="pooled").by_agent()
    assert pooled["A"].distinguishing == pytest.approx(0.5 * 0.75 + 0.5 * 1.0)  # s_A: 3 of 4
    assert pooled["B"].distinguishing == pytest.approx(0.5)
    assert pooled["A"].total == pytest.approx(0.6875)
    assert pooled["B"].total == pytest.approx(0.25)


def test_deterministic_cells_leave_rank_uncertainty_undefined() -> None:
    rows = [*cell("A", "B", [1, 1], [0, 0]), *cell("B", "A", [1, 1], [1, 1])]
    report = score_report(rows, n_boot=200)
    s = report.by_agent()
    # F(A) = 1 − s_{B,A} = 0, F(B) = 1 − s_{A,B} = 1, D(A) = ½, D(B) = 1.
    assert (s["A"].fooling, s["A"].distinguishing, s["A"].total) == (0.0, 0.5, 0.25)
    assert s["B"].total == 1.0 and s["B"].total_ci == (1.0, 1.0)
    assert s["A"].fooling_ci == (0.0, 0.0)
    assert [e.agent for e in report.scores] == ["B", "A"]
    # Every cell 0 % or 100 %: the bootstrap has no spread, so it cannot say how sure the
    # ranking is ("rank 1–1, P(first) 1.00" at n = 2 would be a false certainty).
    for agent, rank in (("B", 1.0), ("A", 2.0)):
        assert s[agent].rank == rank and not s[agent].resolved
        assert math.isnan(s[agent].rank_interval[0]) and math.isnan(s[agent].prob_first)


def test_exact_ties_split_the_first_place() -> None:
    from turinglab.analysis.gtt_scores import _first_shares

    assert _first_shares(np.array([[0.5, 0.5], [0.7, 0.2]])).tolist() == [0.75, 0.25]
    # A symmetric design: each agent is first half the time, ties split evenly.
    rows = [*cell("A", "B", [1, 1], [0, 1]), *cell("B", "A", [1, 1], [0, 1])]
    s = score_report(rows, n_boot=4000, seed=1).by_agent()
    assert s["A"].total == s["B"].total
    assert s["A"].rank == s["B"].rank == 1.0 and s["A"].resolved
    assert s["A"].prob_first + s["B"].prob_first == pytest.approx(1.0)
    assert s["A"].prob_first == pytest.approx(0.5, abs=0.03)


def test_one_random_cell_against_its_exact_bootstrap_law() -> None:
    # Only the actor branch of (A, B) varies: k* ~ Binomial(2, ½), s = k*/2 ∈ {0, ½, 1}
    # with probabilities ¼, ½, ¼. T(A) = 1 − s/2 and T(B) = ¼ + s/4: A is first unless s = 1,
    # where they tie. P(A first) = ¼ + ½ + ¼·½ = 0.875; T(A)'s 95% interval is (0.5, 1).
    rows = [*cell("A", "B", [1, 1], [0, 1]), *cell("B", "A", [1, 1], [0, 0])]
    s = score_report(rows, n_boot=20_000, seed=3).by_agent()
    assert s["A"].prob_first == pytest.approx(0.875, abs=0.01)
    assert s["B"].prob_first == pytest.approx(0.125, abs=0.01)
    assert s["A"].total_ci == (0.5, 1.0)
    assert s["A"].rank_interval == (1.0, 1.0)
    assert s["B"].rank_interval == (1.0, 2.0)


def test_seed_reproducibility_and_policy() -> None:
    rng = np.random.default_rng(0)
    rows = [
        trial(a, b, bool(x), int(rng.integers(0, 2)))
        for a in "ABC"
        for b in "ABC"
        for x in (0, 1)
        for _ in range(5)
    ]
    rows.append(trial("A", "B", False, None))
    one = score_report(rows, seed=1, n_boot=300)
    again = score_report(rows, seed=1, n_boot=300)
    other = score_report(rows, seed=2, n_boot=300)
    assert one == again
    assert [s.total_ci for s in one.scores] != [s.total_ci for s in other.scores]
    assert one.policy.missing == "wrong"
    assert score_report(rows, missing="exclude", n_boot=10).policy.missing == "exclude"


def test_missing_cells_and_unscored_agents() -> None:
    rows = [trial("A", "B", False, 1), trial("A", "C", False, 0), trial("B", "A", True, 1)]
    s = score_report(rows, ["A", "B", "C"], n_boot=50).by_agent()
    assert s["A"].fooling == pytest.approx(0.5) and s["A"].opponents == 2
    assert math.isnan(s["B"].fooling) and math.isnan(s["B"].total)
    assert math.isnan(s["B"].rank) and math.isnan(s["B"].prob_first)
    assert math.isnan(s["C"].total_ci[0])


def test_querying_scores_and_bad_arguments() -> None:
    rows = [*cell("A", "B", [1], [1]), *cell("A", "B", [1], [0, 0, 1], variant="gttq")]
    assert score_report(rows, variant="gttq", n_boot=10).by_agent()["A"].fooling == pytest.approx(
        1 / 3
    )
    with pytest.raises(ValueError, match="rank_by"):
        score_report(rows, rank_by="speed")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="n_boot"):
        score_report(rows, n_boot=0)


# Known universe: s_self[B] and s_actor[(A, B)] = s_{B,A} (B catches A imitating B).
S_SELF = {"A": 0.7, "B": 0.5, "C": 0.9}
S_ACTOR = {
    ("A", "B"): 0.3,
    ("A", "C"): 0.6,
    ("B", "A"): 0.5,
    ("B", "C"): 0.8,
    ("C", "A"): 0.2,
    ("C", "B"): 0.4,
    ("A", "A"): 0.5,
    ("B", "B"): 0.5,
    ("C", "C"): 0.5,
}


def true_scores(agent: str) -> tuple[float, float, float]:
    others = [b for b in S_SELF if b != agent]
    f = float(np.mean([1 - S_ACTOR[(agent, b)] for b in others]))
    d = 0.5 * S_SELF[agent] + 0.5 * float(np.mean([S_ACTOR[(b, agent)] for b in others]))
    return f, d, 0.5 * f + 0.5 * d


def simulate(rng: np.random.Generator, n_per_branch: int) -> list[dict]:
    rows = []
    for (a, b), s_actor in S_ACTOR.items():
        for _ in range(n_per_branch):
            rows.append(trial(a, b, True, int(rng.random() < S_SELF[b])))  # says 1 when right
            rows.append(trial(a, b, False, int(rng.random() >= s_actor)))  # says 0 when right
    return rows


def test_bootstrap_intervals_cover_the_truth_on_simulated_data() -> None:
    # 100 datasets × 3 agents × 3 scores; nominal 95%. Tolerance: coverage ≥ 0.88 per score.
    rng = np.random.default_rng(20260501)
    covered = np.zeros(3)
    total = 0
    for rep in range(100):
        report = score_report(simulate(rng, 20), n_boot=400, seed=rep)
        for est in report.scores:
            truth = true_scores(est.agent)
            cis = (est.fooling_ci, est.distinguishing_ci, est.total_ci)
            covered += [lo <= t <= hi for t, (lo, hi) in zip(truth, cis, strict=True)]
            total += 1
    coverage = covered / total
    assert (coverage >= 0.88).all(), coverage
    assert (coverage <= 0.995).all(), coverage  # not trivially wide either
