"""Shares and accuracy per code with exact CIs; Cohen's κ against hand computations."""

from __future__ import annotations

import math

import pytest
from scipy.stats import beta

from turinglab.tagging.summaries import (
    code_summaries,
    kappa_per_code,
    label_kappa,
    parse_codes,
    rule_llm_agreement,
)

CODES = ("weather", "humour", "taboo")


def clopper_pearson(k: int, n: int) -> tuple[float, float]:
    lo = 0.0 if k == 0 else beta.ppf(0.025, k, n - k + 1)
    hi = 1.0 if k == n else beta.ppf(0.975, k + 1, n - k)
    return (lo, hi)


def test_code_summaries_share_and_accuracy_with_exact_intervals() -> None:
    sets = [{"weather"}, {"weather", "humour"}, set(), {"humour"}, {"weather"}]
    correct = [True, False, True, True, None]
    weather, humour, taboo = code_summaries(sets, correct, CODES)
    # weather: games 0, 1, 4 → 3/5; accuracy over the scored ones (0, 1) → 1/2.
    assert (weather.k, weather.n_games, weather.share) == (3, 5, 0.6)
    assert weather.share_ci == pytest.approx(clopper_pearson(3, 5))
    assert (weather.n_scored, weather.accuracy) == (2, 0.5)
    assert weather.accuracy_ci == pytest.approx(clopper_pearson(1, 2))
    # humour: games 1, 3 → accuracy 1/2.
    assert (humour.k, humour.accuracy) == (2, 0.5)
    # taboo never occurs: share 0 with upper bound 1 − 0.025^(1/5), no accuracy.
    assert taboo.share == 0 and taboo.share_ci[0] == 0
    assert taboo.share_ci[1] == pytest.approx(1 - 0.025 ** (1 / 5))
    assert math.isnan(taboo.accuracy) and taboo.n_scored == 0


def test_code_summaries_reject_unknown_codes_and_mismatched_lengths() -> None:
    with pytest.raises(ValueError, match="unknown codes \\['sports'\\]"):
        code_summaries([{"sports"}], [True], CODES)
    with pytest.raises(ValueError, match="correctness"):
        code_summaries([set(), set()], [True], CODES)


def test_binary_kappa_matches_hand_computation() -> None:
    a = [1, 1, 0, 0, 1, 0, 1, 0, 0, 0]
    b = [1, 0, 0, 0, 1, 1, 1, 0, 0, 0]
    # p_o = 8/10; both coders say 1 four times: p_e = .4·.4 + .6·.6 = .52.
    assert label_kappa(a, b) == pytest.approx((0.8 - 0.52) / (1 - 0.52))


def test_multiclass_kappa_matches_hand_computation() -> None:
    a = ["maths", "maths", "coding", "coding", "other", "other"]
    b = ["maths", "coding", "coding", "coding", "other", "maths"]
    # p_o = 4/6; marginals a (2,2,2), b (2,3,1): p_e = (4 + 6 + 2)/36 = 1/3.
    assert label_kappa(a, b) == pytest.approx((2 / 3 - 1 / 3) / (1 - 1 / 3))


def test_kappa_is_nan_when_undefined_and_rejects_bad_input() -> None:
    assert math.isnan(label_kappa([0, 0, 0], [0, 0, 0]))
    assert label_kappa([1, 1], [0, 0]) == pytest.approx(0.0)  # p_o = 0 = p_e
    with pytest.raises(ValueError, match="length"):
        label_kappa([1], [1, 0])
    with pytest.raises(ValueError, match="zero items"):
        label_kappa([], [])


def test_kappa_per_code_and_its_mean() -> None:
    llm = [{"weather"}, {"weather", "humour"}, set(), {"humour"}]
    human = [{"weather"}, {"humour"}, {"weather"}, {"humour"}]
    report = kappa_per_code(llm, human, CODES)
    # weather: llm 1,1,0,0 vs human 1,0,1,0 → p_o = .5, p_e = .5 → κ = 0.
    assert report.per_code["weather"] == pytest.approx(0.0)
    # humour: llm 0,1,0,1 vs human 0,1,0,1 → κ = 1.
    assert report.per_code["humour"] == pytest.approx(1.0)
    assert math.isnan(report.per_code["taboo"]) and report.undefined == ("taboo",)
    assert report.mean == pytest.approx(0.5)


def test_rule_llm_agreement_reads_an_empty_llm_set_as_other() -> None:
    codes = ("maths", "coding", "other")
    report = rule_llm_agreement(["maths", "other", "coding"], [{"maths"}, set(), {"coding"}], codes)
    assert report.per_code == pytest.approx({"maths": 1.0, "coding": 1.0, "other": 1.0})


def test_parse_codes() -> None:
    assert parse_codes("weather; humour;;") == {"weather", "humour"}
    assert parse_codes(None) == frozenset() == parse_codes(float("nan"))
    with pytest.raises(ValueError, match="';'-separated"):
        parse_codes(3.0)
