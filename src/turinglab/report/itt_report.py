"""`turinglab report` on an ITT study folder (itt/study.py): confusion matrices, detectability
per model with human and AI judges side by side, length curves, extrapolation, LLM judges,
text statistics and the dataset itself."""

from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path
from typing import Any

from turinglab.itt.judgements import JudgementRow
from turinglab.itt.metrics import Confusion, confusion, grouped, judge_family, per_model
from turinglab.itt.study import load_study
from turinglab.report.figures import figure_svg, line_chart
from turinglab.report.html import Cell, Filter, Page, Panel, RecordBrowser, Section
from turinglab.report.itt_figures import confusion_grid, detectability_bars


def _fmt(x: float | None) -> str:
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.2f}"


def _d_cell(c: Confusion) -> Cell:
    lo, hi = c.detectability_ci()
    hover = None if math.isnan(lo) else f"95% CI {lo:.2f}–{hi:.2f}"
    return Cell(_fmt(c.detectability), hover=hover, numeric=True)


def _confusion_rows(groups: dict[str, Confusion]) -> list[list[Any]]:
    return [
        [
            name,
            c.n_human,
            c.n_machine,
            _fmt(c.p_h_given_h),
            _fmt(c.p_m_given_h),
            _fmt(c.p_h_given_m),
            _fmt(c.p_m_given_m),
            _d_cell(c),
        ]
        for name, c in groups.items()
    ]


CONFUSION_COLUMNS = [
    "judges",
    "n H",
    "n M",
    "p(H|H)",
    "p(M|H)",
    "p(H|M)",
    "p(M|M)",
    "detectability",
]


def _matrices(section: Section, rows: list[JudgementRow]) -> dict[str, list[JudgementRow]]:
    families: dict[str, list[JudgementRow]] = defaultdict(list)
    for r in rows:
        families[judge_family(r)].append(r)
    groups = {k: confusion(v) for k, v in sorted(families.items())}
    section.table(CONFUSION_COLUMNS, _confusion_rows(groups))
    section.figure(
        figure_svg(
            confusion_grid(
                {
                    k: [[c.p_h_given_h, c.p_m_given_h], [c.p_h_given_m, c.p_m_given_m]]
                    for k, c in groups.items()
                }
            ),
            "itt-confusion",
        ),
        "Confusion matrices: rows are the true source, columns the judges' label.",
    )
    return families


def _per_model(section: Section, families: dict[str, list[JudgementRow]]) -> None:
    values: dict[str, dict[str, tuple[float, float, float]]] = defaultdict(dict)
    table: list[list[Any]] = []
    for family, rows in families.items():
        for model, c in per_model(rows).items():
            lo, hi = c.detectability_ci()
            values[model][family] = (c.detectability, lo, hi)
            table.append([model, family, c.n_machine, _fmt(c.p_h_given_m), _d_cell(c)])
    if not table:
        section.note("No machine responses were judged.")
        return
    section.table(["model", "judges", "n M", "p(H|M)", "detectability"], table)
    section.figure(
        figure_svg(detectability_bars(values, title="Detectability per model"), "itt-models"),
        "Each model against all human responses, per kind of judge (human judges beside AI).",
    )


def _lengths(section: Section, families: dict[str, list[JudgementRow]]) -> None:
    series: dict[str, dict[str, list[float]]] = {}
    for family, rows in families.items():
        by_length = grouped(rows, lambda r: r.length)
        if len(by_length) < 2:
            continue
        xs, ys, lows, highs = [], [], [], []
        for length, c in by_length.items():
            if math.isnan(c.detectability):
                continue
            lo, hi = c.detectability_ci()
            xs.append(float(length))
            ys.append(c.detectability)
            lows.append(lo)
            highs.append(hi)
        series[family] = {"x": xs, "y": ys, "low": lows, "high": highs}
    if not series:
        section.note("Not enough data: no judges saw conversations cut to two or more lengths.")
        return
    fig = line_chart(
        series,
        title="Detectability by conversation length",
        xlabel="exchanges shown",
        ylabel="detectability",
        reference=0.5,
        unit_interval=True,
        integer_x=True,
    )
    section.figure(figure_svg(fig, "itt-lengths"), "Conversations cut to their first exchanges.")


def _extrapolation(section: Section, facts: dict[str, Any]) -> None:
    extra = facts.get("extrapolation") or {}
    rows = []
    for mode, per in extra.items():
        for model, s in per.items():
            rows.append(
                [
                    mode,
                    model,
                    _fmt(s["p_H_given_H"]),
                    _fmt(s["p_M_given_M"]),
                    _fmt(s["detectability"]),
                ]
            )
    if not rows:
        section.note("Not enough data: extrapolation needs two or more machine agents.")
        return
    section.paragraph(
        "train-one: trained on humans and the named model, tested on the other models; "
        "leave-one-out: trained on humans and every other model, tested on the named one. "
        "Held-out human conversations are in every test."
    )
    section.table(["mode", "model", "p(H|H)", "p(M|M)", "detectability"], rows)


def _text_stats(section: Section, facts: dict[str, Any]) -> None:
    tests = facts.get("text_statistics") or []
    if not tests:
        section.note("Not computed for this study.")
        return
    section.table(
        ["feature", "human mean", "machine mean", "t (Welch)", "p (two-tailed)"],
        [
            [
                t["feature"],
                f"{t['human_mean']:.3f}",
                f"{t['machine_mean']:.3f}",
                f"{t['t']:.2f}",
                f"{t['p']:.3g}",
            ]
            for t in tests
        ],
    )


def _quality(section: Section, study: Any) -> None:
    """BLEU and CIDEr of each model's responses against their human references, beside the
    model's detectability (all judges), with Spearman ρ across models."""
    from turinglab.itt.quality import correlate

    by_model: dict[str, tuple[list[str], list[list[str]]]] = defaultdict(lambda: ([], []))
    for r in study.responses:
        if r.source == "machine" and r.reference:
            by_model[r.agent][0].append(r.text)
            by_model[r.agent][1].append([r.reference])
    if not by_model:
        section.note("Not computed: no machine response has a human reference.")
        return
    detect = {m: c.detectability for m, c in per_model(study.judgements).items()}
    out = correlate(by_model, detect)
    section.table(
        ["model", "BLEU", "CIDEr", "detectability"],
        [
            [m, f"{v['bleu']:.1f}", f"{v['cider']:.3f}", _fmt(v["detectability"])]
            for m, v in out.per_model.items()
        ],
    )
    section.paragraph(
        f"Spearman ρ with detectability: BLEU {_fmt(out.spearman_bleu)}, "
        f"CIDEr {_fmt(out.spearman_cider)} (needs three or more models)."
    )


def _anova(section: Section, rows: list[JudgementRow], given: list[str] | None) -> None:
    """Two-way ANOVA (type II) of human judges' accuracy over two demographic columns: named
    by the researcher (`report --anova A --anova B`, or `anova_factors` in study.json), or
    the first two common ones with at least two levels each."""
    from turinglab.itt.demographics import anova_factors, with_age_groups
    from turinglab.itt.textstats import demographics_anova

    humans = with_age_groups([r for r in rows if r.judge_type == "human"])
    if not humans:
        section.note("Skipped: no human judgements (demographics come from human judges).")
        return
    chosen = anova_factors(humans, given)
    if isinstance(chosen, str):
        section.note(f"Skipped: {chosen}.")
        return
    try:
        table = demographics_anova(humans, *chosen)
    except ValueError as err:  # fewer than four judges, or levels only one judge shows
        section.note(f"Skipped: {err}.")
        return
    section.paragraph(
        f"Accuracy of each human judge (share of labels right) ~ {chosen[0]} + {chosen[1]}; "
        "type II sums of squares. A small p says judges differ in accuracy by that factor."
    )
    section.table(
        ["term", "df", "F", "p"],
        [[r["term"], f"{r['df']:g}", _fmt(float(r["F"])), _fmt_p(float(r["p"]))] for r in table],
    )


def _fmt_p(p: float) -> str:
    return "–" if math.isnan(p) else f"{p:.3g}"


def itt_report(path: Path, out: Path, *, anova: list[str] | None = None) -> Path:
    """Write the HTML report of the ITT study folder `path` to `out` (a file or folder)."""
    study = load_study(path)
    if out.suffix != ".html":
        out = out / "itt_report.html"
    facts = study.facts
    page = Page(
        "Integrative Turing test",
        metadata={
            "study": str(path),
            "responses": len(study.responses),
            "judgements": len(study.judgements),
            "human source": facts.get("human_source"),
            "machine source": facts.get("machine_source"),
        },
    )
    summary = page.section("Summary")
    summary.paragraph(
        "Imitation detectability = ½(p(H|H) + p(M|M)): 0.5 means judges cannot tell the "
        "machine from people, 1.0 that they always can. AI-judge figures are cross-validated: "
        "no conversation or stimulus is in both training and test folds."
    )
    overall = grouped(study.judgements, lambda r: r.judge_type)
    summary.table(CONFUSION_COLUMNS, _confusion_rows(overall))
    families = _matrices(page.section("Confusion matrices"), study.judgements)
    _per_model(page.section("Detectability per model and judge type"), families)
    _lengths(page.section("Length curves"), families)
    _extrapolation(page.section("Extrapolation across agents"), facts)
    llm = facts.get("llm_judges")
    if llm:
        page.section("LLM judges").table(
            ["prompt", "conversations judged", "unparsed", "errors"],
            [
                [k, v["judged"], len(v["unparsed"]), len(v["errors"])]
                for k, v in llm.items()
                if isinstance(v, dict)
            ],
        )
    _anova(
        page.section("Judge demographics (two-way ANOVA)"),
        study.judgements,
        anova or facts.get("anova_factors"),
    )
    _text_stats(page.section("Text statistics (human vs machine)"), facts)
    _quality(page.section("Quality metrics and detectability"), study)
    timing = facts.get("ai_judges") or {}
    if timing:
        page.section("AI-judge timing").table(
            ["what", "value"],
            [[k, str(v)] for k, v in timing.items() if k not in ("notes", "cv_seconds")]
            + [[f"CV seconds: {k}", v] for k, v in (timing.get("cv_seconds") or {}).items()],
        )
    records = [
        {
            "item": r.item,
            "source": r.source,
            "agent": r.agent,
            "conversation": r.conversation or "",
            "turn": r.turn,
            "speaker": r.speaker or "",
            "text": r.text,
            "topic": r.topic or "",
        }
        for r in study.responses
    ]
    page.section("Responses").records(
        RecordBrowser(
            records,
            columns=[
                ("conversation", "conversation"),
                ("turn", "turn"),
                ("speaker", "speaker"),
                ("agent", "agent"),
                ("text", "text"),
            ],
            filters=[Filter("source", "source"), Filter("agent", "agent")],
            panels=[Panel("fields", "response", keys=("item", "source", "agent", "topic", "text"))],
        )
    )
    return page.write(out)
