"""Adaptive sampling: confidence sequences against hand formulas and a scalar reference,
anytime coverage by simulation, error control and savings of the whole adaptive loop."""

from __future__ import annotations

import math

import numpy as np
import pytest

from turinglab.analysis.adaptive import (
    AdaptivePlan,
    CellStatus,
    betting_cs,
    cell_status,
    next_batch,
    normal_mixture_cs,
    savings,
)
from turinglab.analysis.gtt_simulate import GttUniverse, simulate_adaptive, simulate_rows


def trial(actor: str, dist: str, idx: int, correct: bool | None, **extra) -> dict:
    x_is_target = idx % 2 == 0
    verdict = None if correct is None else int(correct == x_is_target)
    return {
        "actor": actor,
        "distinguisher": dist,
        "x_is_target": x_is_target,
        "verdict": verdict,
        "correct": correct,
        "status": "no-answer" if verdict is None else "answered",
        "idx": idx,
        **extra,
    }


# --- confidence sequences --------------------------------------------------------------------


def test_normal_mixture_matches_hand_formula() -> None:
    y = [1.0, 0.0, 1.0, 1.0]
    low, high = normal_mixture_cs(y, alpha=0.05, rho=1.0)
    # t = 4: V = 4·¼ = 1, radius = √(2·2·log(√2/0.05)) / 4, mean = ¾.
    radius = math.sqrt(4 * math.log(math.sqrt(2) / 0.05)) / 4
    assert radius == pytest.approx(0.9141, abs=1e-4)
    assert low[-1] == pytest.approx(max(0.0, 0.75 - radius))
    # Upper bound: running minimum of the clipped per-t bounds; t = 2 gives 0.5 + r_2.
    r2 = math.sqrt(2 * 1.5 * math.log(math.sqrt(1.5) / 0.05)) / 2
    assert high[1] == pytest.approx(min(1.0, 0.5 + r2))
    assert high[-1] == pytest.approx(1.0)  # 0.75 + 0.91 clipped


def _reference_log_capital(y: list[float], m: float, alpha: float) -> list[float]:
    """Waudby-Smith & Ramdas hedged capital with the predictable plug-in bet, scalar loops."""
    log_up = log_down = 0.0
    out = []
    mean_sum, sq_sum = 0.0, 0.0
    sigma2_prev = 0.25
    for t, x in enumerate(y, start=1):
        lam = math.sqrt(2 * math.log(2 / alpha) / (sigma2_prev * t * math.log(1 + t)))
        log_up += math.log(1 + min(lam, 0.5 / m) * (x - m))
        log_down += math.log(1 - min(lam, 0.5 / (1 - m)) * (x - m))
        out.append(math.log(0.5 * math.exp(log_up) + 0.5 * math.exp(log_down)))
        mu_prev = (0.5 + mean_sum) / t  # μ̂_{t−1}
        mean_sum += x
        sq_sum += (x - mu_prev) ** 2
        sigma2_prev = (0.25 + sq_sum) / (t + 1)
    return out


def test_betting_cs_agrees_with_scalar_reference() -> None:
    rng = np.random.default_rng(3)
    y = list(rng.integers(0, 3, 120) / 2)  # pair means in {0, ½, 1}
    alpha = 0.05
    low, high = betting_cs(y, alpha)
    threshold = math.log(1 / alpha)
    for m in np.linspace(0.01, 0.99, 99):
        ever_rejected = max(_reference_log_capital(y, float(m), alpha)) >= threshold
        if low[-1] + 0.003 < m < high[-1] - 0.003:
            assert not ever_rejected, m
        if m < low[-1] - 0.003 or m > high[-1] + 0.003:
            assert ever_rejected, m
    assert 0.3 < low[-1] < np.mean(y) < high[-1] < 0.7
    assert np.all(np.diff(low) >= 0) and np.all(np.diff(high) <= 0)  # running intersection


def _ever_misses(low: np.ndarray, high: np.ndarray, p: float) -> bool:
    return bool(np.any((low > p) | (high < p)))


def test_anytime_coverage_and_a_naive_interval_that_fails_it() -> None:
    """Checking the CS after every pair must keep Pr[ever miss] ≤ α; a 90% Wald interval
    checked as often misses far more often, which shows this check can fail."""
    alpha, streams, length = 0.1, 300, 200
    s_self, s_actor = 0.7, 0.4
    p = 0.5 * s_self + 0.5 * s_actor
    rng = np.random.default_rng(11)
    misses = {"betting": 0, "normal-mixture": 0, "naive": 0}
    for _ in range(streams):
        hits = (rng.random(length) < s_self).astype(int) + (rng.random(length) < s_actor)
        y = hits / 2
        misses["betting"] += _ever_misses(*betting_cs(y, alpha), p)
        misses["normal-mixture"] += _ever_misses(*normal_mixture_cs(y, alpha), p)
        t = np.arange(1, length + 1)
        mean = np.cumsum(y) / t
        sd = np.sqrt(np.maximum(np.cumsum(y**2) / t - mean**2, 1e-12))
        half = 1.645 * sd / np.sqrt(t)
        misses["naive"] += _ever_misses((mean - half)[9:], (mean + half)[9:], p)
    tolerance = 3 * math.sqrt(alpha * (1 - alpha) / streams)
    print({k: v / streams for k, v in misses.items()})  # shown with -s
    assert misses["betting"] / streams <= alpha + tolerance
    assert misses["normal-mixture"] / streams <= alpha + tolerance
    assert misses["naive"] / streams > alpha + tolerance


# --- cells -----------------------------------------------------------------------------------


def test_cell_status_by_hand_and_bonferroni() -> None:
    # Cell (A, B): pairs (self, actor) successes (1,1), (1,0), (0,0) → Y = 1, ½, 0.
    outcomes = [True, True, True, False, False, False]
    rows = [trial("A", "B", i, c) for i, c in enumerate(outcomes)]
    rows.append(trial("A", "B", 6, True))  # unpaired self trial: counts in n and p̂ only
    plan = AdaptivePlan(eps=0.0, alpha=0.1, delta=0.0, min_n=0, max_n=50, method="normal-mixture")
    cells = [("A", "B"), ("B", "A")]
    status = cell_status(rows, plan, cells)
    ab = status[("A", "B")]
    assert (ab.n, ab.n_pairs) == (7, 3)
    assert ab.p_hat == pytest.approx(4 / 7)
    # Level α/K = 0.05 with K = 2 design cells.
    low, high = normal_mixture_cs([1.0, 0.5, 0.0], 0.05)
    assert (ab.cs_low, ab.cs_high) == (pytest.approx(low[-1]), pytest.approx(high[-1]))
    assert not ab.settled and ab.conclusion == "undecided"
    ba = status[("B", "A")]
    assert (ba.n, ba.n_pairs, ba.settled) == (0, 0, False) and math.isnan(ba.p_hat)


def test_clear_cells_settle_each_way() -> None:
    plan = AdaptivePlan(eps=0.05, alpha=0.05, delta=0.05, min_n=10, max_n=400)
    always_right = [trial("A", "B", i, True) for i in range(60)]
    always_fooled = [trial("C", "B", i, i % 2 == 0) for i in range(60)]  # p = ½
    status = cell_status(always_right + always_fooled, plan, [("A", "B"), ("C", "B")])
    assert status[("A", "B")].conclusion == "above-eps"
    assert status[("A", "B")].actor_at_least_eps is False
    # p = ½: the CS must shrink below ½ + ε + δ = 0.6 before "A ≥ε B" is concluded.
    assert status[("C", "B")].cs_high > 0.5
    assert status[("C", "B")].settled == (status[("C", "B")].cs_high <= 0.6)


def test_missing_policy_changes_pairs() -> None:
    rows = [trial("A", "B", 0, True), trial("A", "B", 1, None), trial("A", "B", 2, True)]
    wrong = cell_status(rows, AdaptivePlan(eps=0.0, missing="wrong"))[("A", "B")]
    excl = cell_status(rows, AdaptivePlan(eps=0.0, missing="exclude"))[("A", "B")]
    assert (wrong.n_pairs, wrong.p_hat) == (1, pytest.approx(2 / 3))
    assert (excl.n_pairs, excl.p_hat, excl.n) == (0, 1.0, 3)


def test_next_batch_tops_up_caps_and_skips_settled() -> None:
    plan = AdaptivePlan(eps=0.05, batch=7, min_n=20, max_n=30)
    rows = [trial("A", "B", i, True) for i in range(4)]
    rows += [trial("B", "A", i, i % 2 == 0) for i in range(26)]
    cells = [("A", "B"), ("B", "A"), ("A", "A")]
    plan_more = next_batch(rows, plan, cells)
    assert plan_more[("A", "B")] == 16  # up to min_n = 20
    assert plan_more[("B", "A")] == 4  # capped by max_n = 30
    assert plan_more[("A", "A")] == 20
    assert next_batch(rows, plan, cells, pending={("A", "A"): 12})[("A", "A")] == 8  # batch 7→8
    full = rows + [trial("B", "A", 26 + i, i % 2 == 0) for i in range(4)]
    assert ("B", "A") not in next_batch(full, plan, cells)  # reached max_n: stops


def test_savings_by_hand() -> None:
    plan = AdaptivePlan(eps=0.0, max_n=100)
    status = {
        ("A", "B"): CellStatus(40, 20, 0.9, 0.7, 1.0, True, "above-eps"),
        ("B", "A"): CellStatus(100, 50, 0.5, 0.4, 0.6, True, "undecided"),
    }
    s = savings(status, plan, calls_per_trial=5.5)
    assert (s.adaptive_trials, s.fixed_trials, s.trials_saved) == (140, 200, 60)
    assert s.fraction_saved == pytest.approx(0.3)
    assert s.calls_saved == pytest.approx(330.0)
    assert (s.decided_cells, s.undecided_cells) == (1, 1)


@pytest.mark.parametrize(
    "kwargs",
    [{"eps": 0.6}, {"eps": 0.0, "alpha": 0.0}, {"eps": 0.0, "delta": -0.1},
     {"eps": 0.0, "min_n": 50, "max_n": 10}, {"eps": 0.0, "missing": "skip"}],
)  # fmt: skip
def test_bad_plan(kwargs: dict) -> None:
    with pytest.raises(ValueError):
        AdaptivePlan(**kwargs)


def test_bad_rows() -> None:
    plan = AdaptivePlan(eps=0.0)
    mixed = [trial("A", "B", 0, True, variant="gtt"), trial("A", "B", 1, True, variant="gttq")]
    with pytest.raises(ValueError, match="variants"):
        cell_status(mixed, plan)
    with pytest.raises(ValueError, match="target"):
        cell_status([trial("A", "B", 0, True, target="C")], plan)
    with pytest.raises(ValueError, match="no cells"):
        cell_status([], plan)
    with pytest.raises(ValueError, match="calls_per_trial"):
        savings(cell_status([trial("A", "B", 0, True)], plan), plan, 0)


# --- the whole loop on simulated universes ---------------------------------------------------

MIXED = GttUniverse(
    s_self={"A": 0.9, "B": 0.6, "C": 0.5},
    s_actor={
        ("A", "A"): 0.5,  # d = 0.20
        ("B", "A"): 0.1,  # d = 0.0
        ("C", "A"): 0.95,  # d = 0.425
        ("A", "B"): 0.9,  # d = 0.25
        ("B", "B"): 0.4,  # d = 0.0
        ("C", "B"): 0.2,  # d = −0.1
        ("A", "C"): 0.5,  # d = 0.0
        ("B", "C"): 0.1,  # d = −0.2
        ("C", "C"): 0.5,  # d = 0.0
    },
)


def _wrong(universe: GttUniverse, status: dict, plan: AdaptivePlan) -> int:
    """Conclusions contradicted by the true d outside the indifference zone."""
    wrong = 0
    for cell, s in status.items():
        d = universe.d(cell)
        wrong += s.conclusion == "at-most-eps" and d > plan.eps + plan.delta
        wrong += s.conclusion == "above-eps" and d <= plan.eps - plan.delta
    return wrong


def test_adaptive_saves_trials_on_a_mixed_universe(capsys: pytest.CaptureFixture[str]) -> None:
    plan = AdaptivePlan(eps=0.05, alpha=0.05, delta=0.05, batch=20, min_n=20, max_n=400)
    run = simulate_adaptive(MIXED, plan, seed=2)
    assert _wrong(MIXED, run.status, plan) == 0
    saved = savings(run.status, plan, calls_per_trial=6.0)
    with capsys.disabled():
        print(
            f"\nadaptive: {saved.adaptive_trials} trials vs fixed {saved.fixed_trials} "
            f"({saved.fraction_saved:.0%} saved, {saved.calls_saved:.0f} API calls at 6/trial); "
            f"{saved.decided_cells} cells decided, {saved.undecided_cells} undecided at max_n"
        )
    assert saved.fraction_saved >= 0.3
    assert saved.decided_cells >= 5
    # The far cells stop early.
    assert run.status[("C", "A")].n <= 100 and run.status[("B", "C")].n <= 200


def test_cells_at_the_threshold_stop_at_max_n() -> None:
    # d = ε exactly and δ = 0: no error-controlled answer exists, so the cell must run out.
    universe = GttUniverse(s_self={"B": 0.6}, s_actor={("A", "B"): 0.5})
    plan = AdaptivePlan(eps=0.05, alpha=0.05, delta=0.0, batch=20, min_n=20, max_n=120)
    run = simulate_adaptive(universe, plan, seed=5)
    status = run.status[("A", "B")]
    assert (status.n, status.settled, status.conclusion) == (120, True, "undecided")
    assert next_batch(run.rows, plan, universe.cells) == {}


@pytest.mark.slow
def test_family_wise_error_rate_of_the_loop() -> None:
    """Cells just outside the indifference zone, α = 0.2 over 3 cells: over 200 runs the
    share of runs with any wrong conclusion stays ≤ α + 3 Monte-Carlo SE."""
    universe = GttUniverse(
        s_self={"B": 0.5},
        s_actor={("A", "B"): 0.72, ("C", "B"): 0.58, ("B", "B"): 0.66},  # d = .11, .04, .08
    )
    plan = AdaptivePlan(eps=0.08, alpha=0.2, delta=0.02, batch=20, min_n=20, max_n=300)
    runs = 200
    bad = sum(_wrong(universe, simulate_adaptive(universe, plan, seed=s).status, plan) > 0
              for s in range(runs))  # fmt: skip
    print(f"family-wise error: {bad}/{runs} runs")  # shown with -s
    assert bad / runs <= plan.alpha + 3 * math.sqrt(plan.alpha * (1 - plan.alpha) / runs)


def test_simulated_rows_follow_the_contract() -> None:
    universe = GttUniverse(s_self={"B": 1.0}, s_actor={("A", "B"): 0.0}, no_answer_rate=0.0)
    rows = simulate_rows(universe, {("A", "B"): 4}, seed=0, start={("A", "B"): 1})
    assert [r["x_is_target"] for r in rows] == [False, True, False, True]
    assert [r["verdict"] for r in rows] == [1, 1, 1, 1]  # B always says "same"
    assert [r["correct"] for r in rows] == [False, True, False, True]
