"""Regressions of the three-party study: hand-built statsmodels fits, closed forms, and effects
recovered from simulated studies (turinglab.human.simulate) with known parameters."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy import stats as scipy_stats
from scipy.special import logit
from statsmodels.stats.multitest import multipletests

from turinglab.human.regressions import (
    AnalysisSkipped,
    all_regressions,
    intercept_only,
    persona_mixed_model,
    survey_regressions,
    trial_order_effect,
    witness_vs_baseline,
)
from turinglab.human.simulate import simulate_study

RATES = {"ELIZA": 0.2, "GPT-4.5-PERSONA": 0.7, "LLAMA-PERSONA": 0.55, "GPT-4o-NO-PERSONA": 0.3}
Z99 = float(scipy_stats.norm.ppf(0.995))


def tiny_table() -> pd.DataFrame:
    """Three-party games written by hand: (AI witness, AI judged human)."""
    games = (
        [("ELIZA", False)] * 7
        + [("ELIZA", True)] * 3
        + [("GPT", True)] * 6
        + [("GPT", False)] * 4
        + [("LLAMA", True)] * 4
        + [("LLAMA", False)] * 5
    )
    rows = []
    for g, (witness, ai_human) in enumerate(games):
        common = {"game": f"g{g}", "interrogator": f"i{g % 7}", "round": 1 + g % 4}
        rows.append({**common, "witness": witness, "witness_type": "ai", "judged_human": ai_human})
        rows.append(
            {**common, "witness": "human", "witness_type": "human", "judged_human": not ai_human}
        )
    return pd.DataFrame(rows)


def test_witness_vs_baseline_matches_hand_built_logit() -> None:
    df = tiny_table()
    ai = df[df["witness_type"] == "ai"]
    X = pd.DataFrame(
        {
            "const": 1.0,
            "GPT": (ai["witness"] == "GPT").astype(float),
            "LLAMA": (ai["witness"] == "LLAMA").astype(float),
        }
    )
    expected = sm.Logit(ai["judged_human"].astype(float), X).fit(disp=0)
    result = witness_vs_baseline(df, baseline="ELIZA")
    assert result.n == 29
    for term, column in (("(Intercept)", "const"), ("GPT", "GPT"), ("LLAMA", "LLAMA")):
        t = result.term(term)
        assert t.estimate == pytest.approx(expected.params[column], abs=1e-8)
        assert t.se == pytest.approx(expected.bse[column], rel=1e-6)
        assert t.p == pytest.approx(expected.pvalues[column], rel=1e-6)
    # with a single dummy per witness the MLE is the difference of empirical log-odds
    assert result.term("GPT").estimate == pytest.approx(logit(0.6) - logit(0.3), abs=1e-8)
    assert "Logit" in result.summary()


def test_witness_vs_baseline_recovers_log_odds_differences() -> None:
    """interrogator_sd = 0, so the fixed-effect model is the true one; each true difference
    lies in its 99% Wald interval."""
    df = simulate_study(RATES, n_interrogators=500, games_per_interrogator=4, seed=5)
    result = witness_vs_baseline(df)
    for witness, p in RATES.items():
        if witness == "ELIZA":
            continue
        low, high = result.term(witness).ci(0.99)
        assert low < logit(p) - logit(RATES["ELIZA"]) < high


def test_witness_vs_baseline_without_baseline_is_skipped() -> None:
    with pytest.raises(AnalysisSkipped, match="baseline witness 'GPT-2'"):
        witness_vs_baseline(tiny_table(), baseline="GPT-2")


def test_intercept_only_equals_closed_form() -> None:
    df = tiny_table()
    t = intercept_only(df, "GPT")  # 6 of 10 judged human
    p_hat, n = 0.6, 10
    se = 1 / math.sqrt(n * p_hat * (1 - p_hat))
    assert t.estimate == pytest.approx(logit(p_hat), abs=1e-8)
    assert t.se == pytest.approx(se, rel=1e-6)
    assert t.z == pytest.approx(logit(p_hat) / se, rel=1e-6)
    assert t.p == pytest.approx(2 * scipy_stats.norm.sf(abs(logit(p_hat) / se)), rel=1e-6)
    against = intercept_only(df, "GPT", chance=0.3)
    assert against.z == pytest.approx((logit(0.6) - logit(0.3)) / se, rel=1e-6)
    accuracy = intercept_only(df, "ELIZA", outcome="accuracy")  # right in 7 of 10
    assert accuracy.estimate == pytest.approx(logit(0.7), abs=1e-8)
    human = intercept_only(df, "human", outcome="accuracy")  # human judged human in 16 of 29
    assert human.estimate == pytest.approx(logit(16 / 29), abs=1e-8)


def test_intercept_only_agrees_with_stats_wald_test() -> None:
    from turinglab.analysis.stats import wald_test

    assert intercept_only(tiny_table(), "LLAMA").z == pytest.approx(wald_test(4, 9).z, rel=1e-6)


def test_intercept_only_undefined_at_zero_or_all() -> None:
    df = tiny_table()
    df.loc[df["witness"] == "LLAMA", "judged_human"] = False
    with pytest.raises(AnalysisSkipped, match="infinite"):
        intercept_only(df, "LLAMA")
    with pytest.raises(ValueError, match="outcome"):
        intercept_only(df, "GPT", outcome="accuracy_rate")


def test_persona_mixed_model_recovers_persona_effect() -> None:
    """Four models with their own offsets, persona adds +1.0 on the logit scale for every
    model; interrogators vary (SD 0.6). The GLMM's persona effect is conditional on model and
    interrogator, i.e. exactly 1.0; it lies in its 99% interval."""
    offsets = {"A": -0.6, "B": -0.2, "C": 0.1, "D": 0.5}
    rates = {}
    for model, offset in offsets.items():
        rates[f"{model}-NO-PERSONA"] = float(1 / (1 + np.exp(-(-0.8 + offset))))
        rates[f"{model}-PERSONA"] = float(1 / (1 + np.exp(-(0.2 + offset))))
    df = simulate_study(
        rates, n_interrogators=300, games_per_interrogator=8, interrogator_sd=0.6, seed=2
    )
    result = persona_mixed_model(df)
    assert "Laplace" in result.method and "Laplace" in result.summary()
    low, high = result.term("persona PERSONA").ci(0.99)
    assert low < 1.0 < high
    assert set(result.random_sd) == {"model", "interrogator"}
    assert result.random_sd["interrogator"] == pytest.approx(0.6, abs=0.3)


def test_persona_mixed_model_skips_without_columns() -> None:
    with pytest.raises(AnalysisSkipped, match="persona"):
        persona_mixed_model(tiny_table())
    df = tiny_table().assign(persona="PERSONA", model="m")
    with pytest.raises(AnalysisSkipped, match="two persona conditions"):
        persona_mixed_model(df)


def test_trial_order_effect_recovers_round_slope_and_matches_logit() -> None:
    df = simulate_study(
        {"X": 0.4, "Y": 0.4},
        n_interrogators=400,
        games_per_interrogator=8,
        round_effect=-0.15,
        seed=9,
    )
    result = trial_order_effect(df)
    low, high = result.term("round").ci(0.99)
    assert low < -0.15 < high
    ai = df[df["witness_type"] == "ai"]
    expected = sm.Logit(
        ai["judged_human"].astype(float), sm.add_constant(ai["round"].astype(float))
    ).fit(disp=0)
    assert result.term("round").estimate == pytest.approx(expected.params["round"], abs=1e-8)
    with_witness = trial_order_effect(df, with_witness=True)
    assert [t.term for t in with_witness.terms][:2] == ["(Intercept)", "round"]
    assert len(with_witness.terms) == 3
    with pytest.raises(AnalysisSkipped, match="'round'"):
        trial_order_effect(df.drop(columns="round"))


def test_survey_regressions_recover_effect_and_adjust_with_bh() -> None:
    """A chatbot-use effect of +0.4 on the logit of judged_human is −0.4 on accuracy."""
    df = simulate_study(
        {"X": 0.4},
        n_interrogators=600,
        games_per_interrogator=4,
        seed=4,
        survey_effects={"survey_chatbot_use": 0.4},
    )
    result = survey_regressions(df)
    by_name = {v.variable: v for v in result.variables}
    chatbot = by_name["survey_chatbot_use"]
    assert chatbot.kind == "numeric"
    low, high = chatbot.result.term("survey_chatbot_use").ci(0.99)
    assert low < -0.4 < high
    gender = by_name["survey_gender"]
    ai = df[df["witness_type"] == "ai"]
    assert gender.kind == "categorical"
    assert gender.reference == ai["survey_gender"].value_counts().idxmax()
    raw = [v.p_value for v in result.variables]
    expected = multipletests(raw, method="fdr_bh")[1]
    np.testing.assert_allclose([v.p_adjusted for v in result.variables], expected, rtol=1e-10)
    # a categorical variable's p is the likelihood-ratio test against the intercept-only model
    y = 1.0 - ai["judged_human"].astype(float)
    dummies = pd.get_dummies(ai["survey_gender"]).drop(columns=gender.reference).astype(float)
    full = sm.Logit(y, sm.add_constant(dummies)).fit(disp=0)
    lr = 2 * (full.llf - full.llnull)
    assert gender.p_value == pytest.approx(scipy_stats.chi2.sf(lr, dummies.shape[1]), rel=1e-6)


def test_missing_or_bad_columns_give_clear_errors() -> None:
    df = tiny_table()
    with pytest.raises(ValueError, match="judged_human"):
        witness_vs_baseline(df.drop(columns="judged_human"))
    with pytest.raises(ValueError, match="witness_type"):
        all_regressions(df.drop(columns="witness_type"))
    bad = df.astype({"judged_human": object})
    bad.loc[0, "judged_human"] = "maybe"
    with pytest.raises(ValueError, match="judged_human must be true/false"):
        witness_vs_baseline(bad)
    with pytest.raises(AnalysisSkipped, match="survey_"):
        survey_regressions(df)


def test_all_regressions_runs_what_it_can_and_says_why_not() -> None:
    report = all_regressions(tiny_table())
    assert {"witness_vs_baseline", "trial_order_effect", "intercept_only:GPT"} <= set(
        report.results
    )
    assert "persona" in report.skipped["persona_mixed_model"]
    assert "survey_" in report.skipped["survey_regressions"]
    text = report.summary()
    assert "statsmodels Logit" in text and "skipped persona_mixed_model" in text
