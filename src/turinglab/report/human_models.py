"""Study report sections: regressions, trial order, confidence, exploratory survey models."""

from __future__ import annotations

import math
from typing import Any

from turinglab.report import human_figures
from turinglab.report.cells import numeric, p_cell, pct
from turinglab.report.html import Section
from turinglab.report.human_context import (
    LEVEL,
    SectionSkipped,
    StudyContext,
    exact_ci,
    shown,
)


def regressions_section(ctx: StudyContext, section: Section) -> None:
    report = ctx.regressions()
    render_regression(section, report, "witness_vs_baseline", ctx.alpha)
    render_regression(section, report, "persona_mixed_model", ctx.alpha)
    intercepts = [r.terms[0] for k, r in report.results.items() if k.startswith("intercept_only:")]
    if intercepts:
        section.table(
            ["witness", "games", "log-odds", "SE", "Wald z (vs 50%)", "p (two-sided)"],
            [
                [
                    t.term.split(" win_rate")[0],
                    t.n,
                    f"{t.estimate:+.3f}",
                    f"{t.se:.3f}",
                    f"{t.z:+.3f}",
                    p_cell(t.p, ctx.alpha),
                ]
                for t in intercepts
            ],
            caption=f"Intercept-only models of each win rate ({intercepts[0].method})",
        )
    for key, why in report.skipped.items():
        if key.startswith("intercept_only:"):
            section.note(f"{key}: {why}")


def odds_text(log_odds: float) -> str:
    """An odds ratio for a table; a separated fit (e.g. every game one way, in a small study)
    has log-odds or CI bounds far beyond what exp can hold, shown as such, not an error."""
    if math.isnan(log_odds):
        return "n/a"
    if log_odds > 700:
        return "> 1e300"
    if log_odds < -700:
        return "< 1e-300"
    return f"{math.exp(log_odds):.3g}"


def render_regression(section: Section, report: Any, key: str, alpha: float) -> None:
    """One fitted model as a table (or the reason it was skipped), with its method stated."""
    if key not in report.results:
        why = report.skipped.get(key, "not fitted").removeprefix(f"{key}: ")
        section.note(
            f"{key}: {why}" if why.startswith("not estimable") else f"{key}: skipped — {why}"
        )
        return
    result = report.results[key]
    section.heading(result.formula)
    section.paragraph(f"Method: {result.method}; n = {result.n} AI-witness games.")
    rows = []
    for t in result.terms:
        low, high = t.ci(LEVEL)
        rows.append(
            [
                t.term,
                numeric(f"{t.estimate:+.3f}"),
                numeric(f"{t.se:.3f}"),
                numeric(f"{t.z:+.3f}"),
                p_cell(t.p, alpha),
                numeric(odds_text(t.estimate)),
                f"[{odds_text(low)}, {odds_text(high)}]",
            ]
        )
    section.table(
        ["term", "log-odds", "SE", "z", "p (two-sided)", "odds ratio", "95% CI of OR"],
        rows,
        caption=f"{result.analysis}",
    )
    if result.random_sd:
        section.paragraph(
            "Random-intercept SDs (log-odds): "
            + ", ".join(f"{name} {sd:.3f}" for name, sd in result.random_sd.items())
        )
    for note in result.notes:
        section.note(note)


def trial_order_section(ctx: StudyContext, section: Section) -> None:
    rounds = ctx.need("round")
    ai = ctx.df[(ctx.df["witness_type"] == "ai") & rounds.notna()]
    if ai.empty:
        raise SectionSkipped("no AI-witness games have a round number")
    by_round = ai.groupby(ai["round"].astype(int))["judged_human"].agg(["sum", "count"])
    correct = (by_round["count"] - by_round["sum"]).astype(int)
    fig = human_figures.accuracy_by_round(
        list(by_round.index),
        list(correct / by_round["count"]),
        [exact_ci(int(k), int(n)) for k, n in zip(correct, by_round["count"], strict=True)],
        [int(n) for n in by_round["count"]],
    )
    ctx.figure(section, fig, "trial_order", "Accuracy on AI witnesses by the interrogator's round.")
    render_regression(section, ctx.regressions(), "trial_order_effect", ctx.alpha)


def confidence_section(ctx: StudyContext, section: Section) -> None:
    from turinglab.human.confidence import (
        calibration_bins,
        calibration_summary,
        confidence_summary,
    )

    ctx.need("confidence")
    # Three-party: the human row repeats the AI row's verdict, so AI rows say it all.
    df = ctx.df
    if (df["format"] == "three-party").all():
        df = df[df["witness_type"] == "ai"]
    rated = df[df["confidence"].notna()]
    values = {
        w: {
            v: g.loc[g["judged_human"] == (v == "judged human"), "confidence"].tolist()
            for v in human_figures.VERDICT_COLORS
        }
        for w, g in rated.groupby("witness", sort=True)
    }
    ctx.figure(
        section,
        human_figures.confidence_distributions(values),
        "confidence",
        "Confidence by witness and verdict (the verdict on that witness).",
    )
    summary = confidence_summary(df)
    section.table(
        ["study", "witness", "verdict", "n", "mean", "SD", "median"],
        [
            [
                r.study,
                r.witness,
                r.verdict,
                int(r.n),
                shown(r.mean, ".1f"),
                shown(r.sd, ".1f"),
                shown(r.median, ".0f"),
            ]
            for r in summary.itertuples()
        ],
        caption="Confidence (0–100) by verdict",
    )
    bins = calibration_bins(df)
    curves = {
        w: {
            "confidence": g["mean_confidence"].tolist(),
            "accuracy": g["accuracy"].tolist(),
            "low": g["ci_low"].tolist(),
            "high": g["ci_high"].tolist(),
            "n": g["n"].tolist(),
        }
        for w, g in bins.groupby("witness", sort=True)
    }
    ctx.figure(
        section,
        human_figures.calibration_plot(curves),
        "calibration",
        "Calibration per witness: share of correct verdicts per confidence bin.",
    )
    section.table(
        [
            "study",
            "witness",
            "verdicts",
            "accuracy",
            "mean confidence",
            "Brier",
            "ECE",
            "overconfidence",
        ],
        [
            [
                c.study,
                c.witness,
                c.n,
                pct(c.accuracy),
                shown(c.mean_confidence, ".1f"),
                shown(c.brier, ".3f"),
                shown(c.ece, ".3f"),
                shown(c.overconfidence, "+.3f"),
            ]
            for c in calibration_summary(df)
        ],
        caption="Calibration (implied probability of being right = ½ + confidence/200)",
    )


def survey_section(ctx: StudyContext, section: Section) -> None:
    if not any(c.startswith("survey_") for c in ctx.df.columns):
        raise SectionSkipped("the study has no survey_* columns")
    report = ctx.regressions()
    if "survey_regressions" not in report.results:
        raise SectionSkipped(report.skipped.get("survey_regressions", "no survey model fitted"))
    survey = report.results["survey_regressions"]
    section.paragraph(
        "Exploratory: one logistic regression of the interrogator's accuracy on AI witnesses on "
        f"each exit-survey variable, separately; p adjusted with {survey.adjustment}."
    )
    section.table(
        ["variable", "kind", "reference", "games", "p", "p (BH)", "terms (log-odds ± SE)"],
        [
            [
                v.variable,
                v.kind,
                v.reference or "–",
                v.result.n,
                p_cell(v.p_value, ctx.alpha),
                p_cell(v.p_adjusted, ctx.alpha),
                "; ".join(
                    f"{t.term} {t.estimate:+.3f} ± {t.se:.3f}"
                    for t in v.result.terms
                    if t.term != "(Intercept)"
                ),
            ]
            for v in survey.variables
        ],
        caption=f"Method: {survey.variables[0].result.method}" if survey.variables else None,
    )
    for variable, why in survey.skipped.items():
        section.note(f"{variable} skipped: {why}")
