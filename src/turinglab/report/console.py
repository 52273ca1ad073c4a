"""The GTT tables printed in the terminal by `turinglab run` and `turinglab report`.

Plain GTT and GTTQ get the pair table and Turing scores; other variants are counted, and the
HTML report (`turinglab report RUN --out DIR`) has everything. `gtt_json` is the same content
as one JSON-ready object (`turinglab report RUN --json`); undefined estimates are null there
and "undefined" here, never a number.
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from rich.console import Console
from rich.table import Table

from turinglab.analysis.gtt import (
    MissingPolicy,
    ScoreEstimator,
    TrialPolicy,
    describe_estimator,
    outcome_counts,
    pair_table,
    select_variant,
    turing_scores,
)
from turinglab.variants import MATRIX_VARIANTS

TABLE_VARIANTS = MATRIX_VARIANTS


UNDEFINED = "undefined"


def _fmt(x: float, digits: int = 2, signed: bool = False) -> str:
    if math.isnan(x):
        return UNDEFINED
    return f"{x:+.{digits}f}" if signed else f"{x:.{digits}f}"


def print_gtt_report(
    console: Console,
    rows: Sequence[Mapping[str, Any]],
    *,
    title: str,
    planned: int | None = None,
    universe: list[str] | None = None,
    missing: MissingPolicy = "wrong",
    estimator: ScoreEstimator = "paper",
) -> None:
    counts = outcome_counts(rows)
    done = f"{len(rows)} finished trials" + (f" of {planned} planned" if planned else "")
    summary = ", ".join(f"{k}: {v}" for k, v in sorted(counts.items())) or "none yet"
    console.print(f"[bold]{title}[/] — {done} ({summary})")
    console.print(TrialPolicy(missing).describe().capitalize(), style="dim")
    console.print(
        f"Turing scores: estimator {estimator} — {describe_estimator(estimator)}", style="dim"
    )
    variants = Counter(r.get("variant", "gtt") for r in rows)
    for variant in TABLE_VARIANTS:
        if variant in variants:
            _print_variant(
                console, select_variant(rows, variant), variant, universe, missing, estimator
            )
    others = {v: n for v, n in variants.items() if v not in TABLE_VARIANTS}
    if others:
        listed = ", ".join(f"{v}: {n}" for v, n in sorted(others.items()))
        console.print(f"Also finished ({listed}); `turinglab report RUN --out DIR` analyses them.")


def _print_variant(
    console: Console,
    rows: Sequence[Mapping[str, Any]],
    variant: str,
    universe: list[str] | None,
    missing: MissingPolicy,
    estimator: ScoreEstimator,
) -> None:
    label = "GTT" if variant == "gtt" else "GTTQ"
    pairs = Table(title=f"{label}(A, B): can distinguisher B tell a fresh B from A imitating B?")
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
    suffix = "" if variant == "gtt" else "^q"
    scores = Table(
        title=f"Turing scores: F{suffix} fooling, D{suffix} distinguishing, T{suffix} = ½F + ½D"
    )
    for col in ("agent", "F", "D", "T", "opponents with data"):
        scores.add_column(col, justify="left" if col == "agent" else "right")
    for s in sorted(
        turing_scores(rows, universe, missing, estimator=estimator),
        key=lambda s: -1 if math.isnan(s.total) else s.total,
        reverse=True,
    ):
        scores.add_row(
            s.agent, _fmt(s.fooling), _fmt(s.distinguishing), _fmt(s.total), str(s.opponents)
        )
    console.print(scores)


def _json_value(value: Any) -> Any:
    """NaN (an undefined estimate) to None, tuples to lists, policies to their fields."""
    if isinstance(value, float):
        return None if math.isnan(value) else value
    if isinstance(value, (list, tuple)):
        return [_json_value(v) for v in value]
    if isinstance(value, dict):
        return {k: _json_value(v) for k, v in value.items()}
    return value


def gtt_json(
    rows: Sequence[Mapping[str, Any]],
    *,
    planned: int | None = None,
    universe: list[str] | None = None,
    missing: MissingPolicy = "wrong",
    estimator: ScoreEstimator = "paper",
) -> dict[str, Any]:
    """The console report as one JSON-ready dict: policy, estimator, pairs and scores."""
    policy = TrialPolicy(missing)
    out: dict[str, Any] = {
        "finished": len(rows),
        "planned": planned,
        "outcomes": outcome_counts(rows),
        "policy": {"missing": policy.missing, "opening": policy.opening},
        "policy_text": policy.describe(),
        "estimator": estimator,
        "estimator_text": describe_estimator(estimator),
        "variants": {},
    }
    present = {r.get("variant", "gtt") for r in rows}
    for variant in TABLE_VARIANTS:
        if variant not in present:
            continue
        chosen = select_variant(rows, variant)
        pairs = []
        for p in pair_table(chosen, missing):
            fields = dataclasses.asdict(p)
            fields.pop("policy")
            pairs.append(_json_value(fields | {"d_hat": p.d_hat, "defined": p.defined}))
        scores = [
            _json_value(dataclasses.asdict(s))
            for s in turing_scores(chosen, universe, missing, estimator=estimator)
        ]
        out["variants"][variant] = {"pairs": pairs, "scores": scores}
    return out
