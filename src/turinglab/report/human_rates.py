"""Study report sections: summary and exclusions, win rates, tests against chance."""

from __future__ import annotations

import math

from turinglab.report import human_figures
from turinglab.report.cells import interval, p_cell, pct, rate_cell
from turinglab.report.html import Section
from turinglab.report.human_context import (
    SectionSkipped,
    StudyContext,
    exact_ci,
    stand_in_note,
)


def summary_section(ctx: StudyContext, section: Section) -> None:
    df = ctx.df
    games, people = df["game"].nunique(), df["interrogator"].nunique()
    formats = ", ".join(sorted(df["format"].dropna().unique())) or "none"
    section.paragraph(
        f"{games} games by {people} interrogators (after exclusions); format: {formats}; "
        f"studies: {', '.join(sorted(df['study'].unique()))}."
    )
    simulated = stand_in_note(df)
    if simulated:
        section.note(simulated)
    ai = df[df["witness_type"] == "ai"]
    rows = [
        [study, witness, len(g), g["interrogator"].nunique()]
        for (study, witness), g in ai.groupby(["study", "witness"], sort=True)
    ]
    section.table(
        ["study", "AI witness", "games", "interrogators"], rows, caption="Games per AI witness"
    )
    rep = ctx.exclusions
    section.paragraph(
        f"Exclusions: {rep.games_excluded} of {rep.games_before} games "
        f"({rep.rows_excluded} of {rep.rows_before} rows) removed; {rep.games_after} games kept."
    )
    section.table(
        [
            "rule",
            "games failing",
            "rows failing",
            "games not checkable (missing values)",
            "meaning",
        ],
        [[r.rule, r.games, r.rows, r.games_unknown, r.description] for r in rep.rules],
        caption="Exclusion rules (a game is dropped whole; a game may fail several rules)",
    )


def win_rates_section(ctx: StudyContext, section: Section) -> None:
    results = ctx.win_rates()
    if not results:
        raise SectionSkipped("the study has no AI witnesses")
    section.paragraph(
        "Win rate = share of an AI witness's games in which the interrogator judged it human; "
        "interrogator accuracy = 1 − win rate. Exact: Clopper–Pearson; bootstrap: percentile "
        "interval resampling interrogators as clusters (2,000 resamples)."
    )
    for study in sorted({r.study for r in results}):
        rows = [r for r in results if r.study == study]
        humans = ctx.df[(ctx.df["study"] == study) & (ctx.df["witness_type"] == "human")]
        human_rate = None
        if rows[0].format == "two-party" and len(humans):
            k = int(humans["judged_human"].sum())
            human_rate = (k / len(humans), exact_ci(k, len(humans)), len(humans))
        fig = human_figures.win_rate_plot(
            [r.witness for r in rows],
            [r.win_rate for r in rows],
            [(r.ci_low, r.ci_high) for r in rows],
            [r.n for r in rows],
            boot_ci=[(r.boot_low, r.boot_high) for r in rows],
            human_rate=human_rate,
            human_label=ctx.human_label,
            title=f"Win rates — {study} ({rows[0].format})",
        )
        ctx.figure(section, fig, f"win_rates_{study}", f"Win rate per AI witness, study {study}.")
        table = [
            [
                r.witness,
                r.n,
                r.wins,
                r.n_interrogators,
                rate_cell(r.win_rate, r.ci_low, r.ci_high),
                interval(r.ci_low, r.ci_high),
                interval(r.boot_low, r.boot_high),
                pct(r.interrogator_accuracy),
            ]
            for r in rows
        ]
        if human_rate is not None:
            rate, (low, high), n = human_rate
            table.append(
                [
                    ctx.human_label,
                    n,
                    int(humans["judged_human"].sum()),
                    humans["interrogator"].nunique(),
                    rate_cell(rate, low, high),
                    interval(low, high),
                    "–",
                    pct(1 - rate),
                ]
            )
        section.table(
            [
                "witness",
                "games",
                "judged human",
                "interrogators",
                "win rate",
                "95% exact CI",
                "95% bootstrap CI",
                "interrogator accuracy",
            ],
            table,
            caption=f"Study {study}",
        )


def chance_tests_section(ctx: StudyContext, section: Section) -> None:
    results = ctx.win_rates()
    if not results:
        raise SectionSkipped("the study has no AI witnesses")
    section.paragraph(
        "Exact one-sided binomial tests of the win rate against chance (50%) in both "
        "directions, and the Wald z of the intercept-only logistic model. Corrections over the "
        "AI witnesses of a study: reverse Bonferroni (p / m, for claims that a witness is NOT "
        "distinguishable from chance), Holm, and Benjamini–Hochberg (FDR). "
        f"* = at or below α = {ctx.alpha:g}."
    )
    directions = {"greater": "win rate > 50%", "less": "win rate < 50%"}
    for direction, meaning in directions.items():
        rows = [
            [
                r.study,
                r.witness,
                r.n,
                pct(r.win_rate),
                p_cell(getattr(r, f"p_{direction}"), ctx.alpha),
                p_cell(r.adjusted.get(f"{direction}_reverse_bonferroni", math.nan), ctx.alpha),
                p_cell(r.adjusted.get(f"{direction}_holm", math.nan), ctx.alpha),
                p_cell(r.adjusted.get(f"{direction}_fdr_bh", math.nan), ctx.alpha),
                f"{r.wald_z:+.2f}" if math.isfinite(r.wald_z) else "undefined",
                p_cell(getattr(r, f"wald_p_{direction}"), ctx.alpha),
            ]
            for r in results
        ]
        section.table(
            [
                "study",
                "witness",
                "games",
                "win rate",
                "exact p",
                "reverse Bonferroni",
                "Holm",
                "BH (FDR)",
                "Wald z",
                "Wald p",
            ],
            rows,
            caption=f"H1: {meaning}",
        )
    two_party = [r for r in results if r.format == "two-party" and r.n_human]
    if two_party:
        section.table(
            [
                "study",
                "witness",
                "win rate",
                f"{ctx.human_label}' rate",
                "Fisher p (AI > human)",
                "Fisher p (AI < human)",
            ],
            [
                [
                    r.study,
                    r.witness,
                    pct(r.win_rate),
                    pct(r.human_rate),
                    p_cell(r.p_greater_vs_human, ctx.alpha),
                    p_cell(r.p_less_vs_human, ctx.alpha),
                ]
                for r in two_party
            ],
            caption=f"Two-party: AI witnesses against the {ctx.human_label} of the same study",
        )
