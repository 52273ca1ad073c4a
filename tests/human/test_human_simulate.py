"""The simulator: valid tables, known parameters, reproducibility."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.integrate import quad
from scipy.special import expit, logit
from scipy.stats import norm

from turinglab.human.exclusions import apply_exclusions
from turinglab.human.schema import validate_study
from turinglab.human.simulate import marginal_win_rate, simulate_stt, simulate_study


def test_three_party_table_is_valid_and_balanced() -> None:
    df = simulate_study({"GPT-4.5-PERSONA": 0.7, "ELIZA": 0.2}, 10, 4, seed=0)
    out = validate_study(df)  # raises if any game is inconsistent
    assert len(out) == 10 * 4 * 2
    ai = out[out["witness_type"] == "ai"]
    assert (ai.groupby("interrogator")["witness"].value_counts() == 2).all()  # cycles witnesses
    assert set(ai["round"]) == {1.0, 2.0, 3.0, 4.0}
    gpt = ai[ai["witness"] == "GPT-4.5-PERSONA"].iloc[0]
    assert (gpt["persona"], gpt["model"]) == ("PERSONA", "GPT-4.5")
    assert ai[ai["witness"] == "ELIZA"]["persona"].isna().all()
    both = out.groupby("game")["confidence"].nunique()
    assert (both == 1).all()  # the verdict's confidence is shared by the two rows
    assert {"survey_birth_year", "survey_gender", "survey_estimated_correct"} <= set(out.columns)


def test_reproducible_and_seed_sensitive() -> None:
    a = simulate_study({"A": 0.5}, 20, 3, interrogator_sd=1.0, seed=3)
    b = simulate_study({"A": 0.5}, 20, 3, interrogator_sd=1.0, seed=3)
    c = simulate_study({"A": 0.5}, 20, 3, interrogator_sd=1.0, seed=4)
    assert a.equals(b) and not a.equals(c)


def test_marginal_rate_matches_numerical_integral() -> None:
    expected = quad(lambda z: expit(logit(0.8) + 1.5 * z) * norm.pdf(z), -12, 12)[0]
    assert marginal_win_rate(0.8, 1.5) == pytest.approx(expected, abs=1e-9)
    assert marginal_win_rate(0.8, 0.0) == pytest.approx(0.8)


def test_two_party_rates_recovered() -> None:
    """Tolerance: within 3 binomial SEs (seeded; ~2,000 games of each kind)."""
    df = validate_study(
        simulate_study({"GPT": 0.4}, 1000, 4, seed=8, format="two-party", human_win_rate=0.7)
    )
    for kind, p in (("ai", 0.4), ("human", 0.7)):
        rows = df[df["witness_type"] == kind]
        assert abs(rows["judged_human"].mean() - p) < 3 * math.sqrt(p * (1 - p) / len(rows))


def test_round_and_survey_effects_have_their_sign() -> None:
    """Strong effects so the direction is unmistakable at this size (seeded)."""
    df = simulate_study({"A": 0.5}, 600, 4, seed=2, round_effect=1.0, survey=True)
    ai = df[df["witness_type"] == "ai"]
    by_round = ai.groupby("round")["judged_human"].mean()
    assert by_round.iloc[-1] - by_round.iloc[0] > 0.3  # expit(3) − ½ ≈ 0.45
    df = simulate_study({"A": 0.5}, 600, 2, seed=2, survey_effects={"survey_chatbot_use": -1.0})
    ai = df[df["witness_type"] == "ai"]
    rate = ai.groupby("survey_chatbot_use")["judged_human"].mean()
    assert rate.loc[1] - rate.loc[5] > 0.5  # expit(2) − expit(−2) ≈ 0.76


def test_exclusion_inputs_are_generated() -> None:
    df = validate_study(
        simulate_study({"A": 0.5}, 200, 2, seed=1, prior_rate=0.1, short_game_rate=0.1)
    )
    _, report = apply_exclusions(df)
    by_rule = {r.rule: r.games for r in report.rules}
    assert 20 <= by_rule["prior_participation"] <= 60  # ≈ 40 games of prior participants
    assert 20 <= by_rule["few_messages"] <= 60


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="between 0 and 1"):
        simulate_study({"A": 1.0}, 1, 1)
    with pytest.raises(ValueError, match="format"):
        simulate_study({"A": 0.5}, 1, 1, format="one-party")
    with pytest.raises(ValueError, match="survey_effects"):
        simulate_study({"A": 0.5}, 1, 1, survey_effects={"survey_shoe_size": 1.0})
    with pytest.raises(ValueError, match="p_system"):
        simulate_stt(0.8, 0.3)


def test_stt_choices_follow_probabilities() -> None:
    table = simulate_stt(
        0.3, 0.2, humans=("h1", "h2"), n_sessions=100, turns_per_session=20, seed=5
    )
    shares = table["choice"].value_counts(normalize=True)
    n = len(table)
    for choice, p in (("system", 0.3), ("tie", 0.2), ("h1", 0.25), ("h2", 0.25)):
        assert abs(shares[choice] - p) < 3 * np.sqrt(p * (1 - p) / n)
