"""The GTT tables printed in the terminal by `turinglab run` and `turinglab report`."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from rich.console import Console
from rich.table import Table

from turinglab.analysis.gtt import MissingPolicy, outcome_counts, pair_table, turing_scores


def _fmt(x: float, digits: int = 2, signed: bool = False) -> str:
    if math.isnan(x):
        return "–"
    return f"{x:+.{digits}f}" if signed else f"{x:.{digits}f}"


def print_gtt_report(
    console: Console,
    rows: Sequence[Mapping[str, Any]],
    *,
    title: str,
    planned: int | None = None,
    universe: list[str] | None = None,
    missing: MissingPolicy = "wrong",
) -> None:
    counts = outcome_counts(rows)
    done = f"{len(rows)} finished trials" + (f" of {planned} planned" if planned else "")
    summary = ", ".join(f"{k}: {v}" for k, v in sorted(counts.items())) or "none yet"
    console.print(f"[bold]{title}[/] — {done} ({summary})")
    console.print(
        "Trials without a verdict (no-answer) are counted as the distinguisher being wrong"
        if missing == "wrong"
        else "Trials without a verdict (no-answer) are left out of p̂",
        style="dim",
    )
    pairs = Table(title="GTT(A, B): can distinguisher B tell a fresh B from A imitating B?")
    for col in ("actor A", "distinguisher B", "n", "ŝ_B", "ŝ_B,A", "p̂(A,B)", "d̂(A,B)", "± SE"):
        pairs.add_column(col, justify="left" if "A" in col and "ŝ" not in col else "right")
    pairs.add_column("no answer", justify="right")
    for p in pair_table(rows, missing):
        pairs.add_row(
            p.actor,
            p.distinguisher,
            str(p.n),
            _fmt(p.s_self),
            _fmt(p.s_actor),
            _fmt(p.p_hat),
            _fmt(p.d_hat, signed=True),
            _fmt(p.se),
            str(p.no_answers),
        )
    console.print(pairs)
    scores = Table(title="Turing scores: F fooling, D distinguishing, T = ½F + ½D")
    for col in ("agent", "F", "D", "T", "opponents with data"):
        scores.add_column(col, justify="left" if col == "agent" else "right")
    for s in sorted(
        turing_scores(rows, universe, missing),
        key=lambda s: -1 if math.isnan(s.total) else s.total,
        reverse=True,
    ):
        scores.add_row(
            s.agent, _fmt(s.fooling), _fmt(s.distinguishing), _fmt(s.total), str(s.opponents)
        )
    console.print(scores)
