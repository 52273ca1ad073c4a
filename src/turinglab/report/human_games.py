"""The game browser of the study report: one record per game, its transcript and verdict."""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from turinglab.report.html import Filter, Panel, RecordBrowser, Section
from turinglab.report.human_context import STAND_IN

if TYPE_CHECKING:
    from turinglab.report.human_context import StudyContext


def browser_section(ctx: StudyContext, section: Section) -> None:
    records = game_records(ctx.df)
    section.paragraph("Click a game to read its transcript, verdict, confidence and reason.")
    section.records(
        RecordBrowser(
            records,
            columns=[
                ("game", "game"),
                ("witness", "AI witness"),
                ("verdict", "verdict on it"),
                ("result", "interrogator"),
                ("confidence", "confidence"),
                ("round", "round"),
            ],
            filters=[
                Filter("witness", "witness"),
                Filter("verdict", "verdict"),
                Filter("result", "interrogator was"),
                Filter("study", "study"),
            ],
            panels=[
                Panel(
                    "fields",
                    "Game",
                    keys=(
                        "game",
                        "study",
                        "format",
                        "interrogator",
                        "witness",
                        "human_witness",
                        "verdict",
                        "result",
                        "confidence",
                        "reason",
                        "round",
                        "duration_s",
                        "strategies",
                        "reason_codes",
                    ),
                ),
                Panel(
                    "log",
                    "Transcript",
                    key="messages",
                    keys=("conversation", "t", "sender", "text"),
                ),
            ],
        )
    )


_RECORD_COLUMNS = (
    "game",
    "study",
    "format",
    "interrogator",
    "witness",
    "witness_type",
    "judged_human",
    "transcript",
    "confidence",
    "reason",
    "round",
    "duration_s",
    "strategies",
    "reason_codes",
)


def game_records(df: pd.DataFrame) -> list[dict[str, Any]]:
    """One browser record per game: its AI witness (or "human"), the verdict on that witness,
    whether the interrogator was right, and the transcript(s) as one message list."""
    # Plain dicts of the columns shown, built from column lists: far faster than per-game
    # frames or DataFrame.to_dict (100,000 games in a few seconds).
    keys = [c for c in _RECORD_COLUMNS if c in df.columns]
    by_game: dict[str, list[dict[str, Any]]] = {}
    for values in zip(*(df[c].tolist() for c in keys), strict=True):
        row = dict(zip(keys, values, strict=True))
        by_game.setdefault(str(row["game"]), []).append(row)
    records = []
    for game, rows in by_game.items():
        rows.sort(key=lambda r: r["witness_type"])  # "ai" before "human"
        focus = rows[0]  # the AI witness, or the only (human) witness of a two-party game
        right = bool(focus["judged_human"]) == (focus["witness_type"] == "human")
        messages: list[dict[str, Any]] = []
        for row in rows:
            messages += _messages(
                row.get("transcript"), f"{row['witness']} ({row['witness_type']})"
            )
        records.append(
            {
                "game": game,
                "study": focus["study"],
                "format": focus["format"],
                "interrogator": focus["interrogator"],
                "witness": str(focus["witness"]),
                # who played the human side: a person, or a stand-in (never mistaken for one)
                "human_witness": next(
                    (
                        "stand-in" if r["witness"] == STAND_IN else "person"
                        for r in rows
                        if r["witness_type"] == "human"
                    ),
                    None,
                ),
                "verdict": "judged human" if focus["judged_human"] else "judged AI",
                "result": "correct" if right else "incorrect",
                **{
                    key: _plain(focus.get(key), integer=key == "round")
                    for key in (
                        "confidence",
                        "reason",
                        "round",
                        "duration_s",
                        "strategies",
                        "reason_codes",
                    )
                },
                "messages": messages,
            }
        )
    return records


def _plain(value: Any, integer: bool = False) -> Any:
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA:
        return None
    if isinstance(value, np.generic):
        value = value.item()
    return int(value) if integer else value


def _messages(raw: Any, conversation: str) -> list[dict[str, Any]]:
    if raw is None or (isinstance(raw, float) and math.isnan(raw)):
        return []
    try:
        items = json.loads(raw) if isinstance(raw, str) else raw
        return [
            {
                "conversation": conversation,
                "t": m.get("t"),
                "sender": m.get("sender"),
                "text": m.get("text"),
            }
            for m in items
        ]
    except (ValueError, TypeError, AttributeError):  # keep unreadable transcripts visible
        return [{"conversation": conversation, "t": None, "sender": "(unparsed)", "text": str(raw)}]


# ---- the report -------------------------------------------------------------------------------
