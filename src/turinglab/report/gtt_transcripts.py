"""The transcript browser of the GTT report: records from store.export.transcript_records,
slimmed to what the page shows, with filters by pair, variant, outcome and correctness."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from turinglab.games.variants import FD_VARIANTS
from turinglab.report.html import Filter, Panel, RecordBrowser

MESSAGE_FIELDS = ("seq", "phase", "sender", "visible_to", "text")


def pair_label(record: Mapping[str, Any]) -> str:
    """'A → B' (A imitates the distinguisher B); FD: 'A as target → D'."""
    if record["variant"] in FD_VARIANTS:
        return f"{record['actor']} as {record['target']} → {record['distinguisher']}"
    return f"{record['actor']} → {record['distinguisher']}"


def transcript_view(record: Mapping[str, Any]) -> dict[str, Any]:
    """What the browser needs of one transcript record (environment blocks left out)."""
    routes = record.get("routes") or {}
    return {
        "trial": record["trial"],
        "key": record["key"],
        "variant": record["variant"],
        "pair": pair_label(record),
        "actor": record["actor"],
        "distinguisher": record["distinguisher"],
        "target": record["target"],
        "x": "target" if record["x_is_target"] else "actor",
        "budget": record["budget"],
        "seed": record["seed"],
        "outcome": record["status"],
        "verdict": record["verdict"],
        "correct": record["correct"],
        "turns": record["distinguisher_turns"],
        "no_answer_reason": (record.get("details") or {}).get("no_answer_reason"),
        "models": {seat: (route or {}).get("model") for seat, route in routes.items()},
        "histories": record.get("histories") or {},
        "messages": [{k: m.get(k) for k in MESSAGE_FIELDS} for m in record.get("messages", [])],
    }


def transcript_browser(records: Sequence[Mapping[str, Any]]) -> RecordBrowser:
    return RecordBrowser(
        [transcript_view(r) for r in records],
        columns=[
            ("trial", "trial"),
            ("variant", "variant"),
            ("pair", "pair"),
            ("x", "X was"),
            ("outcome", "outcome"),
            ("verdict", "verdict"),
            ("correct", "judge right"),
            ("turns", "judge turns"),
        ],
        filters=[
            Filter("pair", "pair"),
            Filter("variant", "variant"),
            Filter("outcome", "outcome"),
            Filter("correct", "judge right"),
        ],
        panels=[
            Panel(
                "fields",
                "Trial",
                keys=(
                    "key",
                    "actor",
                    "distinguisher",
                    "target",
                    "x",
                    "budget",
                    "seed",
                    "outcome",
                    "verdict",
                    "correct",
                    "no_answer_reason",
                    "models",
                ),
            ),
            Panel("conversations", "Each participant's own view", key="histories"),
            Panel(
                "log",
                "Message log (visible_to: who could see it)",
                key="messages",
                keys=MESSAGE_FIELDS,
            ),
        ],
    )
