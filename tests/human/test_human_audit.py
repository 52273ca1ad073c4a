"""Power analysis against brute force and statsmodels; the design audit on simulated data."""

from __future__ import annotations

import pytest
from scipy.stats import binom, binomtest
from statsmodels.stats.proportion import power_proportions_2indep

from turinglab.human.audit import (
    audit_study,
    binomial_power,
    design_power_table,
    games_needed,
    two_proportion_games_needed,
    two_proportion_power,
)
from turinglab.human.schema import validate_study
from turinglab.human.simulate import simulate_study


def brute_power(n: int, p1: float, p0: float, alpha: float, alternative: str) -> float:
    """Sum P(k | p1) over every k the exact test (scipy) rejects."""
    return sum(
        binom.pmf(k, n, p1)
        for k in range(n + 1)
        if binomtest(k, n, p0, alternative=alternative).pvalue <= alpha
    )


@pytest.mark.parametrize(
    ("n", "p1", "p0", "alternative"),
    [
        (20, 0.7, 0.5, "greater"),
        (37, 0.3, 0.5, "less"),
        (25, 0.75, 0.5, "two-sided"),
        (30, 0.5, 0.3, "two-sided"),  # asymmetric null: probability ordering matters
        (50, 0.8, 0.6, "greater"),
    ],
)
def test_exact_power_matches_brute_force(n: int, p1: float, p0: float, alternative: str) -> None:
    assert binomial_power(n, p1, p0, 0.05, alternative) == pytest.approx(
        brute_power(n, p1, p0, 0.05, alternative), abs=1e-10
    )


def test_games_needed_is_the_first_n_reaching_power() -> None:
    n = games_needed(0.7, 0.5, 0.05, 0.8, "greater")
    first = next(m for m in range(1, 200) if brute_power(m, 0.7, 0.5, 0.05, "greater") >= 0.8)
    assert n == first
    assert games_needed(0.3, 0.5, alternative="less") == first  # symmetric around ½
    with pytest.raises(ValueError, match="wrong side"):
        games_needed(0.3, 0.5, alternative="greater")
    with pytest.raises(ValueError, match="no difference"):
        games_needed(0.5, 0.5)


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_two_proportion_power_matches_statsmodels(alternative: str) -> None:
    sm_alt = {"two-sided": "two-sided", "greater": "larger", "less": "smaller"}[alternative]
    for n1, p1, p2, ratio in ((100, 0.6, 0.45, 1.0), (80, 0.3, 0.5, 1.5)):
        expected = power_proportions_2indep(
            p1 - p2, p2, n1, ratio=ratio, alternative=sm_alt, return_results=False
        )
        assert two_proportion_power(n1, p1, p2, ratio, 0.05, alternative) == pytest.approx(
            float(expected), abs=1e-9
        )


def test_two_proportion_games_needed() -> None:
    n = two_proportion_games_needed(0.5, 0.25, alpha=0.05, power=0.8)
    assert two_proportion_power(n, 0.5, 0.25) >= 0.8 > two_proportion_power(n - 1, 0.5, 0.25)
    # textbook normal-approximation value for 0.5 vs 0.25, two-sided 5%, power 80%: about 58
    assert 55 <= n <= 60


def test_power_table_and_audit() -> None:
    table = design_power_table({"A": 40, "B": 200}, deltas=(0.2,))
    assert list(table["games_needed"]) == [games_needed(0.7)] * 2
    assert (
        table.set_index("witness").loc["B", "power"] > table.set_index("witness").loc["A", "power"]
    )

    df = validate_study(simulate_study({"A": 0.6, "B": 0.3}, 20, 2, seed=3))
    audit = audit_study(df, informed_roles=True, open_conversation=False, delta=0.15)
    criteria = {c.name: c for c in audit.criteria}
    assert criteria["three parties"].met is True
    assert criteria["informed roles"].met is True
    assert criteria["open conversation"].met is False
    assert criteria["duration ≥ 5 minutes"].met is False  # simulated games last 90–300 s
    assert criteria["sample size per witness"].met is False  # 20 games each, 69 needed
    assert "69 needed" in criteria["sample size per witness"].detail
    text = audit.render()
    assert "[ NO] open conversation" in text and "[yes] three parties" in text
    assert set(audit.power["delta"]) == {0.1, 0.15, 0.2}


def test_audit_unknowns() -> None:
    df = validate_study(simulate_study({"A": 0.5}, 5, 1, seed=1, format="two-party"))
    df["duration_s"] = float("nan")
    criteria = {c.name: c for c in audit_study(df).criteria}
    assert criteria["three parties"].met is False
    assert criteria["informed roles"].met is None
    assert criteria["duration ≥ 5 minutes"].met is None
