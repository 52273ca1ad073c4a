"""The HTML report of a human-judged Turing-test study: `build_study_report`.

One function per section. Each calls the analysis modules (turinglab.human.*, the shared
statistics and tagging modules), adds tables and figures to a `Page`, and writes every figure
as PNG + SVG next to the HTML. A section whose data lack the columns it needs, or that an
analysis refuses, is replaced by a one-line note instead of failing the whole report.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from turinglab.report import figures, human_figures
from turinglab.report.cells import interval, numeric, p_cell, pct, rate_cell
from turinglab.report.html import Page, Section
from turinglab.report.human_games import browser_section

REPORT_FILE = "report.html"
LEVEL = 0.95
# codebook name → the study-table column holding people's codes for it (rows.txt §2)
CODE_COLUMNS = {"strategies": "strategies", "reasons": "reason_codes"}
# A tagger run: {codebook name: {game id: codes}} or {codebook name: [TagResult, ...]}.
TaggerRun = Mapping[str, Mapping[str, Collection[str]] | Sequence[Any]]


class SectionSkipped(Exception):
    """The data cannot support a section (a column is absent or empty); the message says why."""


@dataclass
class _Context:
    study: pd.DataFrame  # validated, before exclusions
    df: pd.DataFrame  # after exclusions: what every analysis uses
    exclusions: Any
    out_dir: Path
    page: Page
    alpha: float
    seed: int
    stt: pd.DataFrame | None
    tagger: TaggerRun | None
    figure_files: dict[str, dict[str, Path]] = field(default_factory=dict)
    _regressions: Any = None
    _win_rates: list[Any] | None = None

    def win_rates(self) -> list[Any]:
        """winrates.win_rates on the kept rows, computed once (the bootstrap is the slow part)."""
        if self._win_rates is None:
            from turinglab.human.winrates import win_rates

            self._win_rates = win_rates(self.df, seed=self.seed)
        return self._win_rates

    def regressions(self) -> Any:
        """all_regressions on the kept rows, fitted once (the GLMM is the slow part)."""
        if self._regressions is None:
            from turinglab.human.regressions import all_regressions

            self._regressions = all_regressions(self.df)
        return self._regressions

    def figure(self, section: Section, fig: Figure, name: str, caption: str) -> None:
        name = re.sub(r"[^A-Za-z0-9_.-]+", "-", name)
        files = figures.save_figure(fig, self.out_dir, name)
        self.figure_files[name] = files
        section.figure(figures.figure_svg(fig, id_prefix=name), caption, files)

    def need(self, column: str) -> pd.Series:
        """The non-missing values of a column, or SectionSkipped naming it."""
        if column not in self.df.columns or self.df[column].isna().all():
            raise SectionSkipped(f"the study has no values in column {column!r}")
        return self.df[column]


def _exact_ci(k: int, n: int) -> tuple[float, float]:
    from turinglab.analysis import stats

    if n == 0:
        return (math.nan, math.nan)
    low, high = stats.binomial_ci(k, n, level=LEVEL, method="clopper-pearson")
    return (float(low), float(high))


def game_correctness(df: pd.DataFrame) -> pd.Series:
    """Per game: was the interrogator right? (Three-party: right iff the AI was not picked.)"""
    right = df["judged_human"] == (df["witness_type"] == "human")
    # Both rows of a three-party game agree, so any row of a game gives its correctness.
    return right.groupby(df["game"], sort=False).first()


# ---- sections ---------------------------------------------------------------------------------


def _summary(ctx: _Context, section: Section) -> None:
    df = ctx.df
    games, people = df["game"].nunique(), df["interrogator"].nunique()
    formats = ", ".join(sorted(df["format"].dropna().unique())) or "none"
    section.paragraph(
        f"{games} games by {people} interrogators (after exclusions); format: {formats}; "
        f"studies: {', '.join(sorted(df['study'].unique()))}."
    )
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


def _win_rates(ctx: _Context, section: Section) -> None:
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
            human_rate = (k / len(humans), _exact_ci(k, len(humans)), len(humans))
        fig = human_figures.win_rate_plot(
            [r.witness for r in rows],
            [r.win_rate for r in rows],
            [(r.ci_low, r.ci_high) for r in rows],
            [r.n for r in rows],
            boot_ci=[(r.boot_low, r.boot_high) for r in rows],
            human_rate=human_rate,
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
                    "human witnesses",
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


def _chance_tests(ctx: _Context, section: Section) -> None:
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
                f"{r.wald_z:+.2f}",
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
                "human witnesses' rate",
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
            caption="Two-party: AI witnesses against the human witnesses of the same study",
        )


def _regressions(ctx: _Context, section: Section) -> None:
    report = ctx.regressions()
    _render_regression(section, report, "witness_vs_baseline", ctx.alpha)
    _render_regression(section, report, "persona_mixed_model", ctx.alpha)
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


def _render_regression(section: Section, report: Any, key: str, alpha: float) -> None:
    """One fitted model as a table (or the reason it was skipped), with its method stated."""
    if key not in report.results:
        section.note(f"{key}: skipped — {report.skipped.get(key, 'not fitted')}")
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
                numeric(f"{math.exp(t.estimate):.3g}"),
                f"[{math.exp(low):.3g}, {math.exp(high):.3g}]",
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


def _trial_order(ctx: _Context, section: Section) -> None:
    rounds = ctx.need("round")
    ai = ctx.df[(ctx.df["witness_type"] == "ai") & rounds.notna()]
    if ai.empty:
        raise SectionSkipped("no AI-witness games have a round number")
    by_round = ai.groupby(ai["round"].astype(int))["judged_human"].agg(["sum", "count"])
    correct = (by_round["count"] - by_round["sum"]).astype(int)
    fig = human_figures.accuracy_by_round(
        list(by_round.index),
        list(correct / by_round["count"]),
        [_exact_ci(int(k), int(n)) for k, n in zip(correct, by_round["count"], strict=True)],
        [int(n) for n in by_round["count"]],
    )
    ctx.figure(section, fig, "trial_order", "Accuracy on AI witnesses by the interrogator's round.")
    _render_regression(section, ctx.regressions(), "trial_order_effect", ctx.alpha)


def _confidence(ctx: _Context, section: Section) -> None:
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
                f"{r.mean:.1f}",
                f"{r.sd:.1f}",
                f"{r.median:.0f}",
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
                f"{c.mean_confidence:.1f}",
                f"{c.brier:.3f}",
                f"{c.ece:.3f}",
                f"{c.overconfidence:+.3f}",
            ]
            for c in calibration_summary(df)
        ],
        caption="Calibration (implied probability of being right = ½ + confidence/200)",
    )


def _codes(ctx: _Context, section: Section) -> None:
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
            codings["tagger"] = _tag_sets(ctx.tagger[book_name])
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
                f"mean over codes {kappa.mean:.3f}."
            )
    if not shown:
        raise SectionSkipped(
            "no strategy or reason codes (columns strategies / reason_codes, or a tagger run)"
        )


def _tag_sets(run: Mapping[str, Collection[str]] | Sequence[Any]) -> dict[str, frozenset[str]]:
    if isinstance(run, Mapping):
        return {str(g): frozenset(c) for g, c in run.items()}
    return {str(r.item_id): frozenset(r.codes) for r in run if getattr(r, "error", None) is None}


def _strong(ctx: _Context, section: Section) -> None:
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


def _criteria(ctx: _Context, section: Section) -> None:
    from turinglab.human.criteria import format_intervals, pass_criteria

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
    yes = {True: "pass", False: "fail"}
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
                pct(r.reference_rate),
                p_cell(r.absolute_p_two_sided, ctx.alpha),
                yes[r.absolute_pass_05],
                yes[r.absolute_pass_01],
                format_intervals(r.compatible_p_05),
                format_intervals(r.compatible_p_01),
                f"{r.humanness:.3f}",
                format_intervals(r.humanness_range_05),
                format_intervals(r.humanness_range_01),
                r.relative_verdict,
            ]
            for r in results
        ],
        caption="Pass criteria per AI witness",
    )


def _audit(ctx: _Context, section: Section) -> None:
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


def _survey(ctx: _Context, section: Section) -> None:
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


SECTIONS: tuple[tuple[str, str, Callable[[_Context, Section], None]], ...] = (
    ("Study summary and exclusions", "summary", _summary),
    ("Win rates", "win-rates", _win_rates),
    ("Tests against chance", "chance", _chance_tests),
    ("Witnesses vs ELIZA and the mixed model", "regressions", _regressions),
    ("Trial order", "trial-order", _trial_order),
    ("Confidence and calibration", "confidence", _confidence),
    ("Strategies and reasons", "codes", _codes),
    ("Strong Turing Test", "stt", _strong),
    ("Pass criteria", "criteria", _criteria),
    ("Design audit and power", "audit", _audit),
    ("Exploratory survey regressions", "survey", _survey),
    ("Game browser", "games", browser_section),
)


def _run_section(ctx: _Context, title: str, anchor: str, build: Callable[..., None]) -> None:
    section = ctx.page.section(title, anchor)
    try:
        build(ctx, section)
    except SectionSkipped as err:
        section.note(f"Skipped: {err}.")
    except (ValueError, KeyError, np.linalg.LinAlgError) as err:  # an analysis refused the data
        section.note(
            f"Skipped: the analysis could not run on these data ({type(err).__name__}: {err})."
        )


def build_study_report(
    df: pd.DataFrame,
    out_dir: Path | str,
    *,
    title: str | None = None,
    stt: pd.DataFrame | None = None,
    alpha: float = 0.05,
    seed: int = 0,
    tagger: TaggerRun | None = None,
) -> Path:
    """Write `out_dir`/report.html (self-contained) and every figure as PNG + SVG beside it;
    return the HTML path. `df` is a study table (rows.txt §2; validated here, ValueError if
    bad); `stt` an optional STT preference table; `tagger` optional codes from a tagger run,
    {"strategies" | "reasons": {game: codes} or [TagResult]}."""
    from turinglab.human.exclusions import apply_exclusions
    from turinglab.human.schema import validate_study

    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie in (0, 1), not {alpha}")
    study = validate_study(df)
    kept, exclusions = apply_exclusions(study)
    if kept.empty:
        raise ValueError("every game was excluded: nothing to report")
    out = Path(out_dir)
    studies = ", ".join(sorted(kept["study"].unique()))
    page = Page(
        title or f"Turing-test study report — {studies}",
        metadata={
            "studies": studies,
            "games": kept["game"].nunique(),
            "interrogators": kept["interrogator"].nunique(),
            "α": alpha,
            "seed": seed,
        },
    )
    ctx = _Context(study, kept, exclusions, out, page, alpha, seed, stt, tagger)
    for title_, anchor, build in SECTIONS:
        _run_section(ctx, title_, anchor, build)
    return page.write(out / REPORT_FILE)
