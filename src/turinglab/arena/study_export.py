"""Arena games as a study file `turinglab report` reads (human/schema.py: one row per
(game, witness) judgement, JSONL).

Only finished study games count: practice games are never study data, and flagged games (a
failed AI witness, no verdict in time) are left out here and listed in the JSON export.
Participants appear under their anonymous ids only.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

PRIOR = "Took part before"  # the survey's answer that marks prior participation


def study_rows(
    games: Iterable[Mapping[str, Any]], surveys: Mapping[str, Mapping[str, Any] | None]
) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    rounds: dict[str, int] = {}
    for game in sorted(games, key=lambda g: g["started_at"]):
        verdict = next((j for j in game["judgements"] if j["kind"] == "verdict"), None)
        if game["solo"] or game["flags"] or verdict is None:
            continue
        judge_seat = verdict["judge"]
        judge = game["seats"][judge_seat].get("participant", judge_seat)
        witnesses = {s: v for s, v in game["seats"].items() if s != judge_seat}
        rounds[judge] = rounds.get(judge, 0) + 1
        survey = surveys.get(judge) or {}
        for seat, who in witnesses.items():
            if len(witnesses) == 1:
                judged_human = verdict["verdict"] == "human"
            else:
                judged_human = verdict["verdict"] == seat
            said = [
                m for m in game["messages"] if seat in m["visible_to"] and m["sender"] != "game"
            ]
            row: dict[str, Any] = {
                "game": game["game"],
                "interrogator": judge,
                "witness": "human" if who["kind"] == "human" else who["agent"],
                "witness_type": who["kind"],
                "judged_human": judged_human,
                "format": "two-party" if len(witnesses) == 1 else "three-party",
                "confidence": verdict["confidence"],
                "reason": verdict["reason"] or "",
                "round": rounds[judge],
                "interrogator_messages": sum(1 for m in said if m["sender"] == judge_seat),
                "witness_messages": sum(1 for m in said if m["sender"] == seat),
                "duration_s": round(game["ended_at"] - game["started_at"], 3),
                "prior_participation": survey.get("prior_awareness") == PRIOR,
                "transcript": json.dumps(
                    [
                        {
                            "sender": "interrogator" if m["sender"] == judge_seat else "witness",
                            "text": m["text"],
                            "t": round(m["at"] - game["started_at"], 3),
                        }
                        for m in said
                    ],
                    ensure_ascii=False,
                ),
            }
            if who["kind"] == "ai":
                row["model"] = who["agent"]
            for key, value in survey.items():
                row[f"survey_{key}"] = value
            rows.append(row)
    return rows


def study_jsonl(
    games: Iterable[Mapping[str, Any]], surveys: Mapping[str, Mapping[str, Any] | None]
) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in study_rows(games, surveys))
