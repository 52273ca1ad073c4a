"""The transcript browser of the GTT report: one record per finished trial, slimmed to what the
page shows, with filters by pair, variant, outcome and correctness.

Records are made one at a time from the store's result rows and each trial's message rows, and
the two bulky fields (each seat's view and the message log) are compressed into the page in
chunks (html.RecordBrowser.lazy): a 16,200-trial run never exists as page objects all at once.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Protocol

from turinglab.report.html import Filter, Panel, RecordBrowser
from turinglab.store.records import MessageRecord
from turinglab.variants import FD_VARIANTS

MESSAGE_FIELDS = ("seq", "phase", "sender", "visible_to", "text")
# What the detail view needs but the list does not: compressed in the page, inflated on click.
LAZY_FIELDS = ("histories", "messages")


class TranscriptSource(Protocol):
    """The one store call the browser makes (store.database.Store has it)."""

    def transcript(self, attempt_id: int) -> list[MessageRecord]: ...


def pair_label(record: Mapping[str, Any]) -> str:
    """'A → B' (A imitates the distinguisher B); FD: 'A as target → D'."""
    if record["variant"] in FD_VARIANTS:
        return f"{record['actor']} as {record['target']} → {record['distinguisher']}"
    return f"{record['actor']} → {record['distinguisher']}"


def transcript_view(record: Mapping[str, Any], messages: Iterable[MessageRecord]) -> dict[str, Any]:
    """What the browser needs of one finished trial: its result row (store.results) and its
    message rows (store.transcript); environment blocks left out."""
    routes = record.get("routes") or {}
    return {
        "trial": record["idx"],
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
        "messages": [_message(m) for m in messages],
    }


def _message(m: MessageRecord) -> dict[str, Any]:
    out = {k: getattr(m, k) for k in MESSAGE_FIELDS}
    out["visible_to"] = list(m.visible_to)  # JSON in the page
    return out


def transcript_views(
    store: TranscriptSource, rows: Iterable[Mapping[str, Any]]
) -> Iterator[dict[str, Any]]:
    """Each finished trial's view, reading its messages from the store only when reached."""
    for row in rows:
        yield transcript_view(row, store.transcript(row["attempt_id"]))


def transcript_browser(
    views: Iterable[Mapping[str, Any]], *, compress: bool = True
) -> RecordBrowser:
    """The browser over `views` (read once, when the page is rendered). `compress=False` puts
    the transcripts in the page as plain JSON, as before (bigger, but greppable)."""
    return RecordBrowser(
        views,
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
        lazy=LAZY_FIELDS if compress else (),
    )
