"""`turinglab report` on an ITT study folder (itt/study.py): confusion matrices, detectability
per model with human and AI judges side by side, length curves, extrapolation, LLM judges,
text statistics and the dataset itself."""

from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path
from typing import Any

from turinglab.itt.ai_marks import NO_CUT, calibrated_marks, inferred_types
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

UNDEFINED = "undefined"


def _fmt(x: float | None) -> str:
    return UNDEFINED if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.2f}"


def _ci(summary: dict[str, Any], key: str = "detectability_ci") -> tuple[float, float]:
    got = summary.get(key)
    return (math.nan, math.nan) if not got else (float(got[0]), float(got[1]))


def _rate_cell(summary: dict[str, Any], key: str, ci_key: str, sd_key: str) -> Cell:
    """The estimate ± its bootstrap SD and its 95% interval, printed (not only hovered: the
    interval must survive print and PDF)."""
    value = summary.get(key)
    if value is None:
        return Cell(UNDEFINED, numeric=True)
    sd = (summary.get("sd") or {}).get(sd_key)
    text = _fmt(value) + ("" if sd is None else f" ± {sd:.2f}")
    lo, hi = _ci(summary, ci_key)
    if math.isnan(lo):
        return Cell(f"{text} (no interval)", numeric=True)
    return Cell(f"{text} [{lo:.2f}, {hi:.2f}]", hover=f"95% CI {lo:.2f}–{hi:.2f}", numeric=True)


def _d_cell(summary: dict[str, Any]) -> Cell:
    return _rate_cell(summary, "detectability", "detectability_ci", "detectability")


def _mark(summary: dict[str, Any]) -> Cell:
    """Figure S3C's asterisk: detectability differs from 0.5 at p < 0.05."""
    p = summary.get("p_vs_chance")
    if summary.get("significant") is None or p is None:
        return Cell("untested", numeric=True)
    return Cell(("* " if summary["significant"] else "") + f"p = {_fmt_p(p)}", numeric=True)


def _summary_row(name: str, s: dict[str, Any], c: Any) -> list[Any]:
    # detectability first: on a phone the table scrolls, and it is the number read first
    return [
        name,
        _d_cell(s),
        _mark(s),
        _rate_cell(s, "p_H_given_H", "ci_H_given_H", "p_H_given_H"),
        _rate_cell(s, "p_M_given_M", "ci_M_given_M", "p_M_given_M"),
        _whole(c.n_human),
        _whole(c.n_machine),
        str(s["units"]),
        str(s["judges"]),
        _fmt3(s.get("detectability_sd_paper")),
    ]


def _judge_summary(
    family: str, rows: list[JudgementRow], inference: dict[str, Any] | None
) -> dict[str, Any]:
    """summarise(), with an AI judge's marks from its permutation inference when the study
    has it (the cluster bootstrap of fixed predictions is too narrow for a trained judge)."""
    s = summarise(rows)
    if family != "human judges" and inference is not None:
        calibrated_marks(s, inference.get(family))
    return s


def _confusion_rows(
    groups: dict[str, list[JudgementRow]], inference: dict[str, Any] | None
) -> list[list[Any]]:
    return [
        _summary_row(name, _judge_summary(name, rows, inference), confusion(rows))
        for name, rows in groups.items()
    ]


def _whole(x: float) -> str:
    """A count: whole (three seeds of 1/3 sum to 0.9999…, still one response), else 2 places."""
    return f"{round(x)}" if abs(x - round(x)) < 1e-6 else f"{x:.2f}"


CONFUSION_COLUMNS = [
    "judge",
    "detectability",
    "≠ 0.5",
    "p(H|H)",
    "p(M|M)",
    "n H",
    "n M",
    "units",
    "judges",
    "paper SD",
]
S3C_NOTE = (
    "Each estimate reads value ± SD [95% CI]: ± is the bootstrap SD (conversations or "
    "stimuli, and judges, resampled), the error bar of "
    "the paper's Figure S3C; [95% CI] the studentized interval; \u201c*\u201d marks a "
    "detectability that differs from 0.5 (two-sided, p < 0.05; for AI judges the permutation "
    "test). \u201cpaper SD\u201d is the SD the paper's released code computes (half-samples "
    "of single responses, clusters ignored), shown for comparison."
)


def _families(rows: list[JudgementRow]) -> dict[str, list[JudgementRow]]:
    families: dict[str, list[JudgementRow]] = defaultdict(list)
    for r in rows:
        families[judge_family(r)].append(r)
    return dict(sorted(families.items()))


def _matrices(section: Section, families: dict[str, list[JudgementRow]]) -> None:
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


def _task(r: JudgementRow) -> str:
    return r.task or "(no task)"


def _per_model(
    section: Section, families: dict[str, list[JudgementRow]], inference: dict[str, Any] | None
) -> None:
    """One table per judge (people, each AI judge), a row per model (and task): never pooled
    over judges or tasks."""
    values: dict[str, dict[str, tuple[float, float, float]]] = defaultdict(dict)
    shown = False
    for family, rows in families.items():
        tasks = split_rows(rows, _task)
        table: list[list[Any]] = []
        for task, task_rows in tasks.items():
            label = family if len(tasks) == 1 else f"{family} · {task}"
            models = per_model_rows(task_rows)
            per_model = ((inference or {}).get(family) or {}).get("per_model")
            for model, got in models.items():
                s = summarise(got)
                if family != "human judges" and inference is not None:
                    alone = per_model is None and len(models) == 1
                    found = inference.get(family) if alone else (per_model or {}).get(model)
                    calibrated_marks(s, found)
                lo, hi = _ci(s)
                d = s["detectability"]
                values[model][label] = (math.nan if d is None else float(d), lo, hi)
                name = model if len(tasks) == 1 else f"{model} · {task}"
                table.append(_summary_row(name, s, confusion(got)))
        if table:
            shown = True
            section.heading(f"{family}: per model")
            section.table(["model", *CONFUSION_COLUMNS[1:]], table, css_class="estimates")
    if not shown:
        section.note("No machine responses were judged.")
        return
    section.figure(
        figure_svg(detectability_bars(values, title="Detectability per model"), "itt-models"),
        "Each model against the human responses the same judges saw in the same task, per "
        "judge (people beside each AI judge); bars are 95% intervals, none where there is no "
        "interval.",
    )


def _lengths(
    section: Section, families: dict[str, list[JudgementRow]], inference: dict[str, Any] | None
) -> None:
    series: dict[str, dict[str, list[float]]] = {}
    for family, rows in families.items():
        by_length = split_rows(rows, lambda r: r.length)
        if len(by_length) < 2:
            continue
        xs, ys, lows, highs = [], [], [], []
        per_length = ((inference or {}).get(family) or {}).get("per_length") or {}
        for length, got in by_length.items():
            s = summarise(got)
            if family != "human judges" and inference is not None:
                calibrated_marks(s, per_length.get(length), NO_CUT)
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
        "Conversations cut to their first exchanges; bands are 95% intervals: cluster "
        "bootstrap for people, for an AI judge its permutation interval at that length (the "
        "grouped CV re-run on relabelled conversations; none without permutation inference).",
    )


def _four_way(
    section: Section, families: dict[str, list[JudgementRow]], inference: dict[str, Any] | None
) -> None:
    """The paper's 4-way answers (HH, HAI, AIH, AIAI) per judge, as row rates with their
    cluster-bootstrap intervals, and its Figure S4E split by conversation type (an AI judge's
    from its permutation inference)."""
    shown = False
    for family, rows in families.items():
        ai_split = (
            None if family == "human judges" else inferred_types((inference or {}).get(family))
        )
        if ai_split:
            shown = True
            _split_table(section, family, ai_split, ai=True)
        got = four_way(rows)
        if not got:
            continue
        shown = True
        section.heading(f"{family}: 4-way answers")
        section.paragraph(
            f"{got['trials']} trials with both speakers judged; 4-way accuracy "
            f"{_fmt(got['accuracy'])} {_bracket(got['accuracy_ci'])} (chance 0.25). Row rates "
            "with their 95% intervals."
        )
        section.table(
            ["truth \\ answer", *got["counts"]],
            [
                [truth]
                + [
                    Cell(f"{_fmt(rate)} {_bracket(got['rates_ci'][truth][a])}", numeric=True)
                    for a, rate in row.items()
                ]
                for truth, row in got["rates"].items()
            ],
            css_class="estimates",
        )
        split = conversation_type_split(rows)
        if split and not ai_split:
            _split_table(section, family, split, ai=family != "human judges")
    if not shown:
        section.note("No judge labelled both speakers of a conversation.")


def _split_table(section: Section, family: str, split: dict[str, Any], *, ai: bool) -> None:
    section.heading(f"{family}: by conversation type (Figure S4E)")
    how = (
        "± the permutation null's SD and the 95% permutation interval; p against the rate "
        "label-free prediction gives (the same CV on relabelled conversations)"
        if ai
        else "± bootstrap SD and 95% interval, conversations and judges resampled"
    )
    section.paragraph(
        "A speaker's rate when the other speaker is of the same kind vs of the other "
        "kind: p(H|H) of human speakers in HH and in mixed (HAI, AIH) conversations, "
        f"p(AI|AI) of machine speakers in AIAI and in mixed ones; {how}."
    )
    judged = "judged (messages or sides × lengths)" if ai else "speakers judged"
    columns = ["rate", "value ± SD [95% CI]", judged, "conversations", "judges"]
    rows: list[list[Cell | str]] = [
        [k, Cell(_split_value(v), numeric=True), str(v["n"]), str(v["units"]), str(v["judges"])]
        for k, v in split.items()
    ]
    if ai:
        columns += ["label-free", "p", "note"]
        for row, v in zip(rows, split.values(), strict=True):
            p = v.get("p_value")
            row += [
                Cell(_fmt(v.get("label_free")), numeric=True),
                Cell("untested" if p is None else _fmt_p(p), numeric=True),
                v.get("note") or "",
            ]
    section.table(columns, rows, css_class="estimates")


def _split_value(cell: dict[str, Any]) -> str:
    if not cell["n"]:
        return UNDEFINED
    sd = "" if cell.get("sd") is None else f" ± {cell['sd']:.2f}"
    return f"{cell['rate']:.2f}{sd} {_bracket(cell['ci'])}"


def _bracket(ci: list[float] | None) -> str:
    return "(no interval)" if not ci else f"[{ci[0]:.2f}, {ci[1]:.2f}]"


def _extrapolation(section: Section, facts: dict[str, Any]) -> None:
    extra = facts.get("extrapolation") or {}
    rows = []
    for mode, per in extra.items():
        for model, s in per.items():
            rows.append(
                [
                    mode,
                    model,
                    f"{_fmt(s['p_H_given_H'])} {_bracket(s.get('ci_H_given_H'))}",
                    f"{_fmt(s['p_M_given_M'])} {_bracket(s.get('ci_M_given_M'))}",
                    f"{_fmt(s['detectability'])} {_bracket(s.get('detectability_ci'))}",
                ]
            )
    if not rows:
        section.note("Not enough data: extrapolation needs two or more machine agents.")
        return
    section.paragraph(
        "train-one: trained on humans and the named model, tested on the other models; "
        "leave-one-out: trained on humans and every other model, tested on the named one. "
        "Held-out human conversations are in every test. 95% intervals: the permutation "
        "test inverted (each relabelling refitted; per-class rates against the rate "
        "label-free prediction gives), or the cluster bootstrap when judged without it."
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
    return UNDEFINED if math.isnan(p) else f"{p:.3g}"


def itt_report(path: Path, out: Path, *, anova: list[str] | None = None) -> Path:
    """Write the HTML report of the ITT study folder `path` to `out` (a file or folder)."""
    study = load_study(path)
    if out.suffix != ".html":
        out = out / "itt_report.html"
    facts = study.facts
    people = {r.judge for r in study.judgements if r.judge_type == "human"}
    counts = facts.get("counts") or {}
    page = Page(
        "Integrative Turing test",
        metadata={
            "study": str(path),
            "responses": len(study.responses),
            "judgements": len(study.judgements),
            # who is in the scores, beside how many the export held (an import's study.json)
            "people scored": len(people),
            "participants in the export": counts.get("participants"),
            "human source": facts.get("human_source"),
            "machine source": facts.get("machine_source"),
        },
    )
    inference = (facts.get("ai_judges") or {}).get("inference")
    inference = inference if isinstance(inference, dict) else None
    summary = page.section("Summary")
    summary.paragraph(
        "Imitation detectability = ½(p(H|H) + p(M|M)): 0.5 means judges cannot tell the "
        "machine from people, 1.0 that they always can. AI-judge figures are cross-validated: "
        "no conversation or stimulus is in both training and test folds."
    )
    summary.paragraph(
        "Intervals: 95% studentized cluster bootstrap (1000 replicates) resampling stimuli or "
        "conversations and judges, with t quantiles on G−1 degrees of freedom (honest with few "
        "clusters); an AI judge's cross-validation seeds count once per response; AI judges "
        "with permutation inference in study.json get its interval, SD and p instead. "
        "One row per judge: all people are one judge, each AI judge another; never pooled."
    )
    summary.paragraph(S3C_NOTE)
    families = _families(study.judgements)
    summary.table(CONFUSION_COLUMNS, _confusion_rows(families, inference), css_class="estimates")
    _matrices(page.section("Confusion matrices"), families)
    _per_model(page.section("Detectability per model, per judge"), families, inference)
    _lengths(page.section("Length curves"), families, inference)
    _four_way(page.section("4-way answers (conversations)"), families, inference)
    _extrapolation(page.section("Extrapolation across agents"), facts)
    llm = facts.get("llm_judges")
    if llm:
        page.section("LLM judges").table(
            ["prompt", "conversations judged", "unparsed", "errors"],
            [
                [k, str(v["judged"]), str(len(v["unparsed"])), str(len(v["errors"]))]
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
            [
                [k, str(v)]
                for k, v in timing.items()
                if k not in ("notes", "cv_seconds", "inference")
            ]
            + [[f"CV seconds: {k}", v] for k, v in (timing.get("cv_seconds") or {}).items()],
        )
    if not study.responses:
        page.section("Responses").note(
            "None in this folder: an itt import holds the judgements only (each names the "
            "conversation it judged as its unit)."
        )
        return page.write(out)
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


def _fmt3(x: float | None) -> str:
    return UNDEFINED if x is None else f"{x:.3f}"
