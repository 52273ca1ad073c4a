"""`turinglab report` on an ITT study folder (itt/study.py): confusion matrices, detectability
per model with human and AI judges side by side, length curves, extrapolation, LLM judges,
text statistics and the dataset itself."""

from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path
from typing import Any

from turinglab.itt.judgements import JudgementRow
from turinglab.itt.metrics import (
    confusion,
    conversation_type_split,
    four_way,
    judge_family,
    per_model_rows,
    split_rows,
    summarise,
)
from turinglab.itt.study import load_study
from turinglab.report.figures import figure_svg, line_chart
from turinglab.report.html import Cell, Filter, Page, Panel, RecordBrowser, Section
from turinglab.report.itt_figures import confusion_grid, detectability_bars


def _fmt(x: float | None) -> str:
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.2f}"


def _ci(summary: dict[str, Any], key: str = "detectability_ci") -> tuple[float, float]:
    got = summary.get(key)
    return (math.nan, math.nan) if not got else (float(got[0]), float(got[1]))


def _d_cell(summary: dict[str, Any]) -> Cell:
    lo, hi = _ci(summary)
    d = summary["detectability"]
    if math.isnan(lo):
        return Cell(_fmt(d), numeric=True)
    # printed, not only hovered: the interval must survive print and PDF
    text = f"{_fmt(d)} [{lo:.2f}, {hi:.2f}]"
    return Cell(text, hover=f"95% cluster-bootstrap CI {lo:.2f}–{hi:.2f}", numeric=True)


def _confusion_rows(groups: dict[str, list[JudgementRow]]) -> list[list[Any]]:
    out = []
    for name, rows in groups.items():
        c, s = confusion(rows), summarise(rows)
        out.append(
            [
                name,
                _whole(c.n_human),
                _whole(c.n_machine),
                s["units"],
                _fmt(c.p_h_given_h),
                _fmt(c.p_m_given_h),
                _fmt(c.p_h_given_m),
                _fmt(c.p_m_given_m),
                _d_cell(s),
            ]
        )
    return out


def _whole(x: float) -> str:
    return f"{x:.0f}" if float(x).is_integer() else f"{x:.1f}"


CONFUSION_COLUMNS = [
    "judges",
    "n H",
    "n M",
    "units",
    "p(H|H)",
    "p(M|H)",
    "p(H|M)",
    "p(M|M)",
    "detectability [95% CI]",
]


def _matrices(section: Section, rows: list[JudgementRow]) -> dict[str, list[JudgementRow]]:
    families: dict[str, list[JudgementRow]] = defaultdict(list)
    for r in rows:
        families[judge_family(r)].append(r)
    families = dict(sorted(families.items()))
    section.table(CONFUSION_COLUMNS, _confusion_rows(families))
    groups = {k: confusion(v) for k, v in families.items()}
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
        "Confusion matrices: rows are the true source, columns the judges' label. AI judges' "
        "cross-validation seeds are averaged per response.",
    )
    return families


def _task(r: JudgementRow) -> str:
    return r.task or "(no task)"


def _per_model(section: Section, families: dict[str, list[JudgementRow]]) -> None:
    """Each model per judge family *and* task: never pooled over judge types or tasks."""
    values: dict[str, dict[str, tuple[float, float, float]]] = defaultdict(dict)
    table: list[list[Any]] = []
    for family, rows in families.items():
        tasks = split_rows(rows, _task)
        for task, task_rows in tasks.items():
            label = family if len(tasks) == 1 else f"{family} · {task}"
            for model, got in per_model_rows(task_rows).items():
                s = summarise(got)
                lo, hi = _ci(s)
                values[model][label] = (float(s["detectability"] or math.nan), lo, hi)
                n_m = confusion(got).n_machine
                p_hm = s["p_H_given_M"]
                table.append([model, family, task, _whole(n_m), _fmt(p_hm), _d_cell(s)])
    if not table:
        section.note("No machine responses were judged.")
        return
    section.table(["model", "judges", "task", "n M", "p(H|M)", "detectability [95% CI]"], table)
    section.figure(
        figure_svg(detectability_bars(values, title="Detectability per model"), "itt-models"),
        "Each model against the human responses the same judges saw in the same task, per "
        "kind of judge (human judges beside AI); bars are 95% cluster-bootstrap intervals.",
    )


def _lengths(section: Section, families: dict[str, list[JudgementRow]]) -> None:
    series: dict[str, dict[str, list[float]]] = {}
    for family, rows in families.items():
        by_length = split_rows(rows, lambda r: r.length)
        if len(by_length) < 2:
            continue
        xs, ys, lows, highs = [], [], [], []
        for length, got in by_length.items():
            s = summarise(got)
            if s["detectability"] is None:
                continue
            lo, hi = _ci(s)
            xs.append(float(length))
            ys.append(float(s["detectability"]))
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
    section.figure(
        figure_svg(fig, "itt-lengths"),
        "Conversations cut to their first exchanges; bands are 95% cluster-bootstrap intervals.",
    )


def _four_way(section: Section, families: dict[str, list[JudgementRow]]) -> None:
    """The paper's 4-way answers (HH, HAI, AIH, AIAI) per judge family, as row rates with
    their cluster-bootstrap intervals."""
    shown = False
    for family, rows in families.items():
        got = four_way(rows)
        if not got:
            continue
        shown = True
        section.paragraph(
            f"{family}: {got['trials']} conversations judged on both sides; 4-way accuracy "
            f"{_fmt(got['accuracy'])} ({_interval(got['accuracy_ci'])})."
        )
        section.table(
            ["truth \\ answer", *got["counts"]],
            [
                [truth]
                + [
                    Cell(_fmt(rate), hover=_interval(got["rates_ci"][truth][a]), numeric=True)
                    for a, rate in row.items()
                ]
                for truth, row in got["rates"].items()
            ],
        )
        split = conversation_type_split(rows)
        if split:
            section.paragraph(
                f"{family}, split by conversation type as in the paper's Figure S4E: a "
                "speaker's rate when the other speaker is of the same kind vs of the other kind."
            )
            section.table(
                ["rate", "speakers judged", "rate value"],
                [[k, str(v["n"]), _fmt(v["rate"])] for k, v in split.items()],
            )
    if not shown:
        section.note("No judge labelled both speakers of a conversation.")


def _interval(ci: list[float] | None) -> str:
    return "no interval" if not ci else f"95% CI {ci[0]:.2f}–{ci[1]:.2f}"


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
    """BLEU-4 and CIDEr-D (COCO) of each model's responses against *all* human responses to
    the same stimulus, beside the model's detectability per judge type, with Spearman ρ per
    judge type (per task where a study has several)."""
    from turinglab.itt.quality import correlate, model_scores, tokenizer_name

    humans: dict[tuple[str, str], list[str]] = defaultdict(list)
    for r in study.responses:
        if r.source == "human" and r.task != "conversation":
            humans[(r.task, r.stimulus_id)].append(r.text)
    by_task: dict[str, dict[str, tuple[list[str], list[list[str]]]]] = defaultdict(dict)
    for r in study.responses:
        if r.source != "machine" or r.task == "conversation":
            continue
        refs = humans.get((r.task, r.stimulus_id)) or ([r.reference] if r.reference else [])
        if refs:
            hyps, all_refs = by_task[r.task].setdefault(r.agent, ([], []))
            hyps.append(r.text)
            all_refs.append(refs)
    if not by_task:
        section.note("Not computed: no machine response has a human reference.")
        return
    section.paragraph(
        f"Tokenizer: {tokenizer_name()}. References: every human response to the same "
        "stimulus (the `reference` column only where the dataset has none)."
    )
    for task, by_model in sorted(by_task.items()):
        scores = model_scores(by_model)
        task_rows = [r for r in study.judgements if (r.task or task) == task]
        for jt, rows in split_rows(task_rows, lambda r: r.judge_type).items():
            detect = {
                m: d
                for m, got in per_model_rows(rows).items()
                if (d := confusion(got).detectability) == d  # not NaN
            }
            out = correlate(by_model, detect, scores)
            if not out.per_model:
                continue
            section.paragraph(f"{task}, {jt} judges:")
            section.table(
                ["model", "BLEU-4", "CIDEr-D", "detectability"],
                [
                    [m, f"{v['bleu']:.1f}", f"{v['cider']:.3f}", _fmt(v["detectability"])]
                    for m, v in out.per_model.items()
                ],
            )
            section.paragraph(
                f"Spearman ρ with {jt} judges' detectability: BLEU-4 {_fmt(out.spearman_bleu)}, "
                f"CIDEr-D {_fmt(out.spearman_cider)} (needs three or more models)."
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
    summary.paragraph(
        "Intervals: 95% studentized cluster bootstrap (1000 replicates) resampling stimuli or "
        "conversations and judges, with t quantiles on G−1 degrees of freedom (honest with few "
        "clusters); an AI judge's cross-validation seeds count once per response."
    )
    overall = split_rows(study.judgements, lambda r: r.judge_type)
    summary.table(CONFUSION_COLUMNS, _confusion_rows(overall))
    families = _matrices(page.section("Confusion matrices"), study.judgements)
    _per_model(page.section("Detectability per model and judge type"), families)
    _lengths(page.section("Length curves"), families)
    _four_way(page.section("4-way answers (conversations)"), families)
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
