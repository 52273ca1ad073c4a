"""Missing-answer policies, variant selection, SEs and exact CIs of gtt.pair_table, by hand."""

from __future__ import annotations

import math

import pytest
from scipy.stats import beta

from gtt_rows import trial
from turinglab.analysis.gtt import (
    TrialPolicy,
    pair_table,
    select_variant,
    success,
    turing_scores,
)


def clopper_pearson(k: int, n: int, level: float = 0.95) -> tuple[float, float]:
    a = 1 - level
    low = 0.0 if k == 0 else beta.ppf(a / 2, k, n - k + 1)
    high = 1.0 if k == n else beta.ppf(1 - a / 2, k + 1, n - k)
    return low, high


SILENT_SELF = trial("A", "B", True, None)  # X was B, B said nothing
SILENT_ACTOR = trial("A", "B", False, None)  # X was A imitating B, B said nothing


@pytest.mark.parametrize(
    ("missing", "self_branch", "actor_branch"),
    [
        ("wrong", False, False),  # not answering is not succeeding, in both branches
        ("exclude", None, None),
        ("as-0", False, True),  # "0" is right only when X was the impostor
        ("as-1", True, False),
    ],
)
def test_missing_policies(missing, self_branch, actor_branch) -> None:
    assert success(SILENT_SELF, missing) is self_branch
    assert success(SILENT_ACTOR, missing) is actor_branch


def test_opening_answers_count_or_are_excluded() -> None:
    opening = trial("A", "B", False, 0, status="opening-answer")
    assert success(opening, "wrong") is True
    assert success(opening, "wrong", "exclude") is None
    assert success(opening, TrialPolicy("wrong", "exclude")) is None


def test_bad_policy_names_are_refused() -> None:
    with pytest.raises(ValueError, match="missing policy"):
        TrialPolicy("ignore")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="opening policy"):
        TrialPolicy("wrong", "drop")  # type: ignore[arg-type]


def test_policy_is_returned_and_described() -> None:
    (p,) = pair_table([trial("A", "B", True, 1)], "as-1", opening="exclude")
    assert p.policy == TrialPolicy("as-1", "exclude")
    text = p.policy.describe()
    assert "answer 1" in text and "opening answers are left out" in text


def pair_rows() -> list[dict]:
    # Self branch: 1, 1, 0, silent → 2 right (+ silent); actor branch: 0, 0, 1, silent, opening 0.
    return [
        trial("A", "B", True, 1),
        trial("A", "B", True, 1),
        trial("A", "B", True, 0),
        trial("A", "B", True, None),
        trial("A", "B", False, 0),
        trial("A", "B", False, 0),
        trial("A", "B", False, 1),
        trial("A", "B", False, None),
        trial("A", "B", False, 0, status="opening-answer"),
    ]


@pytest.mark.parametrize(
    ("missing", "opening", "k_self", "n_self", "k_actor", "n_actor"),
    [
        ("wrong", "count", 2, 4, 3, 5),
        ("exclude", "count", 2, 3, 3, 4),
        ("as-0", "count", 2, 4, 4, 5),
        ("as-1", "count", 3, 4, 3, 5),
        ("wrong", "exclude", 2, 4, 2, 4),
        ("exclude", "exclude", 2, 3, 2, 3),
    ],
)
def test_pair_counts_under_each_policy(missing, opening, k_self, n_self, k_actor, n_actor) -> None:
    (p,) = pair_table(pair_rows(), missing, opening=opening)
    assert (p.k_self, p.n_self, p.k_actor, p.n_actor) == (k_self, n_self, k_actor, n_actor)
    n = n_self + n_actor
    assert p.n == n and p.excluded == 9 - n
    assert p.p_hat == pytest.approx((k_self + k_actor) / n)
    assert p.s_self == pytest.approx(k_self / n_self)
    assert p.s_actor == pytest.approx(k_actor / n_actor)


def test_standard_errors_and_exact_intervals() -> None:
    (p,) = pair_table(pair_rows(), "wrong")  # k_self 2/4, k_actor 3/5, pooled 5/9
    assert p.se == pytest.approx(math.sqrt((5 / 9) * (4 / 9) / 9))
    assert p.se_two_branch == pytest.approx(0.5 * math.sqrt(0.5 * 0.5 / 4 + 0.6 * 0.4 / 5))
    assert p.p_balanced == pytest.approx(0.5 * 0.5 + 0.5 * 0.6)
    assert p.d_balanced == pytest.approx(0.05)
    assert p.d_hat == pytest.approx(5 / 9 - 0.5)
    assert p.p_ci == pytest.approx(clopper_pearson(5, 9))
    assert p.s_self_ci == pytest.approx(clopper_pearson(2, 4))
    assert p.s_actor_ci == pytest.approx(clopper_pearson(3, 5))
    assert p.d_ci == pytest.approx(tuple(x - 0.5 for x in clopper_pearson(5, 9)))
    # Known Clopper–Pearson value: 0 of 10 → upper bound 1 − 0.025^(1/10).
    (zero,) = pair_table([trial("A", "B", True, 0)] * 10)
    assert zero.s_self_ci[0] == 0.0
    assert zero.s_self_ci[1] == pytest.approx(1 - 0.025 ** (1 / 10))
    # One branch only: p̂ (and its CI) is undefined, not the branch's 0 %.
    assert math.isnan(zero.p_hat) and math.isnan(zero.p_ci[0]) and math.isnan(zero.se)


def test_one_branch_only_has_no_two_branch_se() -> None:
    (p,) = pair_table([trial("A", "B", True, 1), trial("A", "B", True, 0)])
    assert math.isnan(p.se_two_branch) and math.isnan(p.s_actor)
    assert math.isnan(p.s_actor_ci[0])


def test_variant_selection() -> None:
    rows = [trial("A", "B", True, 1), trial("A", "B", True, 0, variant="gttq")]
    assert len(select_variant(rows, "gttq")) == 1
    assert select_variant([{"actor": "A"}], "gtt") == [{"actor": "A"}]  # no key = plain gtt
    with pytest.raises(ValueError, match="several variants"):
        pair_table(rows)
    (plain,) = pair_table(rows, variant="gtt")
    assert (plain.n, plain.s_self) == (1, 1.0)


def test_querying_scores_use_gttq_rows_only() -> None:
    rows = [
        trial("A", "B", False, 1),  # plain: A fools B
        trial("A", "B", False, 0, variant="gttq"),  # with querying: B catches A
        trial("A", "B", False, 0, variant="gttq"),
        trial("A", "B", False, 1, variant="gttq"),
    ]
    plain = {s.agent: s for s in turing_scores(rows, variant="gtt")}
    queried = {s.agent: s for s in turing_scores(rows, variant="gttq")}
    assert plain["A"].fooling == pytest.approx(1.0)
    assert queried["A"].fooling == pytest.approx(1 / 3)  # F^q(A) = 1 − s^q_{B,A} = 1 − 2/3
