"""Study report sections: strategy and reason codes, Strong Turing Test, pass criteria, design
audit."""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from typing import Any

import numpy as np

from turinglab.report import human_figures
from turinglab.report.cells import interval, p_cell, pct, rate_cell
from turinglab.report.html import Section
from turinglab.report.human_context import (
    CODE_COLUMNS,
    UNDEFINED,
    SectionSkipped,
    StudyContext,
    game_correctness,
    shown,
)


def codes_section(ctx: StudyContext, section: Section) -> None:
    from turinglab.tagging.codebooks import load_codebook
    from turinglab.tagging.summaries import code_summaries, kappa_per_code, parse_codes

    correct = game_correctness(ctx.df)
    shown = 0
    for book_name, column in CODE_COLUMNS.items():
        book = load_codebook(book_name)
        codings: dict[str, dict[str, frozenset[str]]] = {}
        if column in ctx.df.columns and ctx.df[column].notna().any():
            per_game = ctx.df.groupby("game", sort=False)[column].agg(
                lambda s: frozenset().union(*(parse_codes(v) for v in s))
            )
            codings["people"] = per_game.to_dict()
        if ctx.tagger and book_name in ctx.tagger:
            codings["tagger"] = tag_sets(ctx.tagger[book_name])
        for coder, sets in codings.items():
            games = [g for g in correct.index if g in sets]
            summaries = code_summaries(
                [sets[g] for g in games], [bool(correct[g]) for g in games], book
            )
            used = [s for s in summaries if s.k]
            if not used:
                continue
            shown += 1
            labels = [f"{book.category_of(s.code)}: {book.code(s.code).label}" for s in used]
            fig = human_figures.code_shares_plot(
                labels,
                [s.share for s in used],
                [s.share_ci for s in used],
                [s.accuracy for s in used],
                [s.accuracy_ci for s in used],
                overall_accuracy=float(np.mean([bool(correct[g]) for g in games])),
                title=f"{book_name.capitalize()} ({coder}'s codes, {len(games)} games)",
            )
            ctx.figure(
                section,
                fig,
                f"codes_{book_name}_{coder}",
                f"{book_name.capitalize()}: share of games per code and accuracy there.",
            )
            section.table(
                ["category", "code", "games", "share", "accuracy where it occurs"],
                [
                    [
                        lab.split(": ")[0],
                        book.code(s.code).label,
                        s.k,
                        rate_cell(s.share, *s.share_ci),
                        rate_cell(s.accuracy, *s.accuracy_ci),
                    ]
                    for lab, s in zip(labels, used, strict=True)
                ],
                caption=f"{book_name} — {coder}; {len(summaries) - len(used)} codes never used",
            )
        if len(codings) == 2:
            both = [g for g in codings["people"] if g in codings["tagger"]]
            kappa = kappa_per_code(
                [codings["people"][g] for g in both], [codings["tagger"][g] for g in both], book
            )
            section.paragraph(
                f"{book_name}: Cohen's κ tagger vs people over {len(both)} games, "
                "mean over codes "
                + (
                    f"{kappa.mean:.3f}."
                    if math.isfinite(kappa.mean)
                    else "undefined (no code was used by one coder and not the other)."
                )
            )
    if not shown:
        raise SectionSkipped(
            "no strategy or reason codes (columns strategies / reason_codes, or a tagger run)"
        )


def tag_sets(run: Mapping[str, Collection[str]] | Sequence[Any]) -> dict[str, frozenset[str]]:
    if isinstance(run, Mapping):
        return {str(g): frozenset(c) for g, c in run.items()}
    return {str(r.item_id): frozenset(r.codes) for r in run if getattr(r, "error", None) is None}


def strong_section(ctx: StudyContext, section: Section) -> None:
    from turinglab.human.strong import stt_scores, stt_verdicts, validate_stt

    if ctx.stt is None:
        raise SectionSkipped("no Strong Turing Test table was given")
    table = validate_stt(ctx.stt)
    scores = stt_scores(table)
    systems = set(table["system"])
    labels = [s.side if not s.opponent else f"{s.side} vs {s.opponent}" for s in scores]
    fig = human_figures.stt_plot(
        labels,
        [s.win_rate for s in scores],
        [(s.ci_low, s.ci_high) for s in scores],
        [s.turns for s in scores],
        is_system=[s.side in systems for s in scores],
    )
    ctx.figure(section, fig, "stt", "STT win rates (ties count ½) with the AGI and ASI lines.")
    section.table(
        ["side", "against", "turns", "wins", "ties", "dropped", "win rate", "95% CI"],
        [
            [
                s.side,
                s.opponent or "(own turns)",
                s.turns,
                s.wins,
                s.ties,
                s.dropped,
                rate_cell(s.win_rate, s.ci_low, s.ci_high),
                interval(s.ci_low, s.ci_high),
            ]
            for s in scores
        ],
        caption="Win rate = (wins + ties/2) / turns; CIs exact and conservative for half wins",
    )
    section.table(
        ["system", "against", "threshold", "p (above)", "p (below)", "verdict"],
        [
            [
                v.system,
                v.opponent,
                f"{v.label} {v.threshold:.0%}",
                p_cell(v.p_greater, ctx.alpha),
                p_cell(v.p_less, ctx.alpha),
                v.verdict,
            ]
            for v in stt_verdicts(table, alpha=ctx.alpha)
        ],
        caption=f"One-sided exact tests at α = {ctx.alpha:g}",
    )


def criteria_section(ctx: StudyContext, section: Section) -> None:
    from turinglab.human.criteria import pass_criteria

    results = pass_criteria(ctx.df)
    if not results:
        raise SectionSkipped("the study has no AI witnesses")
    section.paragraph(
        "Giunti's criteria. Absolute: the reference rate (three-party: 50%; two-party: the "
        "human witnesses' judged-human rate) lies in the compatible range of the AI's "
        "misidentification rate (p values the exact two-sided test does not reject). Relative: "
        "degree of humanness h = misidentification rate / reference rate; Turing's prediction "
        "(70% right after five minutes) is h = 0.6."
    )
    ctx.figure(
        section,
        human_figures.humanness_plot(
            [r.witness for r in results],
            [r.humanness for r in results],
            [r.humanness_range_05 for r in results],
            [r.humanness_range_01 for r in results],
            threshold=results[0].relative_threshold,
        ),
        "humanness",
        "Degree of humanness per AI witness with its compatible ranges.",
    )
    section.table(
        [
            "study",
            "witness",
            "games",
            "misidentified",
            "rate",
            "reference",
            "exact p (= ref.)",
            "absolute 5%",
            "absolute 1%",
            "compatible p 5%",
            "compatible p 1%",
            "h",
            "h range 5%",
            "h range 1%",
            f"h vs {results[0].relative_threshold:g}",
        ],
        [
            [
                r.study,
                r.witness,
                r.n,
                r.wins,
                pct(r.misidentification_rate),
                *_criteria_cells(r, ctx.alpha),
            ]
            for r in results
        ],
        caption="Pass criteria per AI witness",
    )
    few = [r for r in results if not r.enough_games]
    if few:
        section.note(
            f"{len(few)} witness(es) have fewer games than the design's minimum of "
            f"{few[0].min_games} (enough to detect ±0.15 from chance with power 0.8): not "
            "rejecting chance with so few games is not a pass, so none is declared."
        )


def _criteria_cells(r: Any, alpha: float) -> list[Any]:
    """From the reference rate on. Without one (a two-party study with no human-witness
    games) the criteria are undefined, and say so: not "fail", "nan" or an empty set."""
    from turinglab.human.criteria import format_intervals

    if not math.isfinite(r.reference_rate):
        return [UNDEFINED] * 6 + [shown(r.humanness, ".3f")] + [UNDEFINED] * 3
    return [
        pct(r.reference_rate),
        p_cell(r.absolute_p_two_sided, alpha),
        r.absolute(),
        r.absolute(at_01=True),
        format_intervals(r.compatible_p_05),
        format_intervals(r.compatible_p_01),
        shown(r.humanness, ".3f"),
        format_intervals(r.humanness_range_05),
        format_intervals(r.humanness_range_01),
        r.relative_verdict,
    ]


def audit_section(ctx: StudyContext, section: Section) -> None:
    from turinglab.human.audit import audit_study

    audit = audit_study(ctx.df, alpha=ctx.alpha)
    mark = {True: "yes", False: "no", None: "?"}
    section.table(
        ["criterion", "met", "detail"],
        [[c.name, mark[c.met], c.detail] for c in audit.criteria],
        caption="Validity criteria claimed for Turing tests (? = not stated / unknown)",
    )
    section.table(
        ["AI witness", "games", "difference from 50%", "power", "games needed for 80%"],
        [
            [r.witness, int(r.n), f"±{r.delta:g}", pct(r.power), int(r.games_needed)]
            for r in audit.power.itertuples()
        ],
        caption=f"Exact one-sided binomial power at α = {ctx.alpha:g}",
    )
