"""`itt score` as tables for people: one table per judge (all people are one judge, each AI
judge family another), never pooled; each rate printed with its bootstrap SD and 95% interval
and detectability with its significance mark against 0.5 (the paper's Figure S3C); the 4-way and
Figure S4E conversation tables with their intervals. Undefined values print "undefined"."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

UNDEFINED = "undefined"


def number(x: float | int | None, digits: int = 3) -> str:
    """A rate to `digits` places, a count as a whole number, None as "undefined"."""
    if x is None:
        return UNDEFINED
    if digits == 0:  # a count: whole unless cross-validation seeds split a response
        return str(int(x)) if float(x).is_integer() else f"{x:.2f}"
    return f"{x:.{digits}f}"


def interval(ci: list[float] | None) -> str:
    return "no interval" if not ci else f"[{ci[0]:.2f}, {ci[1]:.2f}]"


def mark(s: dict[str, Any]) -> str:
    """'*' when detectability differs from 0.5 (p < 0.05), '' when not, '?' when untested."""
    if s.get("significant") is None:
        return "?"
    return "*" if s["significant"] else ""


def rate_cell(s: dict[str, Any], key: str, ci_key: str, sd_key: str) -> str:
    if s.get(key) is None:
        return UNDEFINED
    sd = (s.get("sd") or {}).get(sd_key)
    text = f"{s[key]:.3f}" + ("" if sd is None else f" ± {sd:.2f}")
    return f"{text} {interval(s.get(ci_key))}"


COLUMNS = (
    "group", "n", "units", "judges", "p(H|H) ± SD [95% CI]", "p(M|M) ± SD [95% CI]",
    "detectability ± SD [95% CI]", "≠ 0.5", "p", "paper SD",
)  # fmt: skip


def summary_table(title: str, groups: dict[str, Any], first: str = "group") -> Table:
    table = Table(title=title, title_justify="left")
    for col in (first, *COLUMNS[1:]):
        table.add_column(col, justify="left" if col == first else "right")
    for name, s in groups.items():
        table.add_row(
            name,
            number(s["n"], 0),
            number(s["units"], 0),
            number(s["judges"], 0),
            rate_cell(s, "p_H_given_H", "ci_H_given_H", "p_H_given_H"),
            rate_cell(s, "p_M_given_M", "ci_M_given_M", "p_M_given_M"),
            rate_cell(s, "detectability", "detectability_ci", "detectability"),
            mark(s),
            number(s.get("p_vs_chance")),
            number(s.get("detectability_sd_paper")),
        )
    return table


def four_way_table(judge: str, got: dict[str, Any]) -> Table:
    table = Table(
        title=f"4-way confusion, {judge} ({got['trials']} trials; row rates [95% CI])",
        title_justify="left",
    )
    table.add_column("truth \\ answer")
    for answer in got["counts"]:
        table.add_column(answer, justify="right")
    for truth, row in got["rates"].items():
        cells = [
            f"{number(rate, 2)} {interval(got['rates_ci'][truth][answer])}"
            for answer, rate in row.items()
        ]
        table.add_row(truth, *cells)
    return table


def s4e_table(judge: str, split: dict[str, Any]) -> Table:
    table = Table(
        title=f"By conversation type (Figure S4E), {judge}: same-kind vs mixed conversations",
        title_justify="left",
    )
    ai = any("label_free" in cell for cell in split.values())
    if ai:  # an AI judge's cells count what it judged: messages, or sides at each length
        table.title = (
            f"By conversation type (Figure S4E), {judge}: same-kind vs mixed conversations; "
            "permutation intervals, p against label-free prediction"
        )
    judged = "judged (messages or sides × lengths)" if ai else "speakers judged"
    columns = ["rate", judged, "conversations", "value ± SD [95% CI]"]
    for col in columns + (["label-free", "p"] if ai else []):
        table.add_column(col, justify="left" if col == "rate" else "right")
    for name, cell in split.items():
        value = UNDEFINED if not cell["n"] else f"{cell['rate']:.3f}"
        if cell["n"] and cell.get("sd") is not None:
            value += f" ± {cell['sd']:.3f}"
        row = [name, str(cell["n"]), str(cell["units"]), f"{value} {interval(cell['ci'])}"]
        if ai:  # an AI judge's: permutation interval, p against label-free prediction
            row += [number(cell.get("label_free")), number(cell.get("p_value"))]
        table.add_row(*row)
    return table


def ai_line(s: dict[str, Any]) -> str:
    """An AI family's p values: detectability's, then each per-class rate's beside its
    label-free value."""
    text = f"p = {number(s.get('p_value'))}"
    for key, name in (("p_H_given_H", "p(H|H)"), ("p_M_given_M", "p(M|M)")):
        got = (s.get("rates") or {}).get(key)
        if got is not None:
            text += (
                f"; {name} {number(got['rate'])} vs label-free {number(got['label_free'])}, "
                f"p = {number(got['p_value'])}"
            )
    return text + (f" — {s['note']}" if s.get("note") else "")


def print_score(result: dict[str, Any], width: int | None = 120) -> None:
    console = Console(width=width)
    console.print(result["intervals"])
    console.print(
        "Columns: ≠ 0.5 is * where detectability differs from 0.5 (p < 0.05); paper SD is the "
        "SD the paper's own code gives (half-samples of responses, clusters ignored)."
    )
    console.print(summary_table("Per judge (never pooled)", result["per_judge_family"], "judge"))
    if "ai_inference" in result:
        console.print(
            "AI judge families: 95% intervals and p from the permutation test (the grouped CV "
            "re-run on relabelled conversations; SD = the null's), not the cluster bootstrap — "
            "for detectability against 0.5, for p(H|H) and p(M|M) against the rate label-free "
            "prediction gives (shown below); per model, length, task and conversation type too"
        )
        for family, s in result["ai_inference"].items():
            console.print(f"  {family}: {ai_line(s)}")
    for judge, tasks in result["per_judge_model"].items():
        several = len(tasks) > 1
        rows = {
            (f"{model} · {task}" if several else model): s
            for task, models in tasks.items()
            for model, s in models.items()
        }
        title = f"Per model, {judge} (against their human responses)"
        console.print(summary_table(title, rows, "model"))
    for judge, lengths in result["per_judge_family_and_length"].items():
        if len(lengths) > 1:
            console.print(summary_table(f"Per conversation length, {judge}", lengths, "length"))
    for judge, tasks in result["per_judge_family_and_task"].items():
        if len(tasks) > 1:
            console.print(summary_table(f"Per task, {judge}", tasks, "task"))
    for column, groups in result["per_judge_group"].items():
        console.print(summary_table(f"Per judge group: {column}", groups))
    for judge, got in result["four_way"].items():
        console.print(four_way_table(judge, got))
        console.print(f"4-way accuracy {number(got['accuracy'])} {interval(got['accuracy_ci'])}")
    for judge, split in result.get("conversation_types", {}).items():
        console.print(s4e_table(judge, split))
