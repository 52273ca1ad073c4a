"""Arena games as a study file `turinglab report` reads (human/schema.py: one row per
(game, witness) judgement, JSONL).

Only finished study games count: practice games are never study data. Abandoned games (a
person left) and flagged ones (a failed AI witness, no verdict in time) give one row each with
an `excluded_reason` and nothing else to analyse; the report lists them among its exclusions
(human/exclusions.py: not_finished), and the JSON export gives each game its `exclude_reason`.
Participants appear under their anonymous ids only.

Exclusions (SPEC §2) are flagged, not applied: `exclude_prior_participation` (the interrogator
said in the exit survey they took part before; empty when they have not answered) and
`exclude_few_messages` (the interrogator sent fewer than 2 messages to a witness of the game).
The report applies the same rules itself from `prior_participation` and
`interrogator_messages` (human/exclusions.py), so the file needs no hand editing.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

PRIOR = "Took part before"  # the survey's answer that marks prior participation
SURVEY_PRIOR = "prior_awareness"  # the exit-survey question that asks
MIN_MESSAGES = 2  # the report's few_messages rule (human/exclusions.py)
Survey = Mapping[str, Any] | None


def _witness_info(game: Mapping[str, Any], seat: str) -> Mapping[str, Any]:
    """What the game's plan recorded about a witness seat (engine games; else {})."""
    info = ((game.get("trial") or {}).get("params") or {}).get("witnesses", {}).get(seat)
    return info if isinstance(info, Mapping) else {}


def witness_label(game: Mapping[str, Any], seat: str) -> str:
    """An AI witness's group as the study names it ("SMOLLM2-PERSONA"), else its agent."""
    name = _witness_info(game, seat).get("name")
    return str(name) if name else str(game["seats"][seat].get("agent", seat))


def prior_participation(survey: Survey) -> bool | None:
    """From the exit survey; None (unknown: the report never excludes on it) if unanswered."""
    answer = (survey or {}).get(SURVEY_PRIOR)
    return None if not answer else answer == PRIOR


def _verdict(game: Mapping[str, Any]) -> Mapping[str, Any] | None:
    return next((j for j in game["judgements"] if j["kind"] == "verdict"), None)


def _said(game: Mapping[str, Any], seat: str) -> list[Mapping[str, Any]]:
    return [m for m in game["messages"] if seat in m["visible_to"] and m["sender"] != "game"]


def exclusion_flags(game: Mapping[str, Any], surveys: Mapping[str, Survey]) -> dict[str, Any]:
    """The game's exclusion flags (a game is excluded whole); {} for games without a verdict
    of an interrogator (the Strong Turing Test, unfinished games)."""
    verdict = _verdict(game)
    if verdict is None:
        return {}
    judge_seat = verdict["judge"]
    judge = game["seats"][judge_seat].get("participant", judge_seat)
    sent = [
        sum(1 for m in _said(game, seat) if m["sender"] == judge_seat)
        for seat in game["seats"]
        if seat != judge_seat
    ]
    return {
        "exclude_prior_participation": prior_participation(surveys.get(judge)),
        "exclude_few_messages": any(n < MIN_MESSAGES for n in sent),
    }


NOT_CHAT = ("strong", "gtt", "live-itt")  # game kinds with their own export files


def exclusion_reason(game: Mapping[str, Any]) -> str | None:
    """Why a study chat game gives no usable verdict, in plain words; None if it does (or it
    is not a chat game, or still playing)."""
    if game.get("status") is None or (game.get("trial") or {}).get("game") in NOT_CHAT:
        return None
    flags = [str(f).removeprefix("arena: ") for f in game.get("flags") or []]
    if game.get("status") == "abandoned":
        return "; ".join(flags) or "abandoned"
    if flags:
        return "flagged: " + "; ".join(flags)
    return None if _verdict(game) is not None else "no verdict"


def flag_exclusions(export: dict[str, Any]) -> dict[str, Any]:
    """The JSON export with each study game's exclusion flags and reason added."""
    surveys = {p["participant"]: p.get("survey") for p in export.get("participants", [])}
    for game in export.get("games", []):
        game.update(exclusion_flags(game, surveys))
        game["exclude_reason"] = exclusion_reason(game)
    return export


def study_rows(
    games: Iterable[Mapping[str, Any]], surveys: Mapping[str, Mapping[str, Any] | None]
) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    rounds: dict[str, int] = {}
    for game in sorted(games, key=lambda g: g["started_at"]):
        verdict = _verdict(game)
        if game["solo"]:
            continue
        reason = exclusion_reason(game)
        if reason is not None:
            rows.append({"game": game["game"], "excluded_reason": reason})
            continue
        if verdict is None:
            continue
        judge_seat = verdict["judge"]
        judge = game["seats"][judge_seat].get("participant", judge_seat)
        witnesses = {s: v for s, v in game["seats"].items() if s != judge_seat}
        rounds[judge] = rounds.get(judge, 0) + 1
        survey = surveys.get(judge) or {}
        flags = exclusion_flags(game, surveys)
        for seat, who in witnesses.items():
            if len(witnesses) == 1:
                judged_human = verdict["verdict"] == "human"
            else:
                judged_human = verdict["verdict"] == seat
            said = _said(game, seat)
            row: dict[str, Any] = {
                "game": game["game"],
                "interrogator": judge,
                "witness": "human" if who["kind"] == "human" else witness_label(game, seat),
                "witness_type": who["kind"],
                "judged_human": judged_human,
                "format": "two-party" if len(witnesses) == 1 else "three-party",
                "confidence": verdict["confidence"],
                "reason": verdict["reason"] or "",
                "round": rounds[judge],
                "interrogator_messages": sum(1 for m in said if m["sender"] == judge_seat),
                "witness_messages": sum(1 for m in said if m["sender"] == seat),
                "duration_s": round(game["ended_at"] - game["started_at"], 3),
                "prior_participation": flags["exclude_prior_participation"],
                **flags,
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
                persona = _witness_info(game, seat).get("persona")
                if persona:
                    row["persona"] = persona
            for key, value in survey.items():
                row[f"survey_{key}"] = value
            rows.append(row)
    return rows


def study_jsonl(
    games: Iterable[Mapping[str, Any]], surveys: Mapping[str, Mapping[str, Any] | None]
) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in study_rows(games, surveys))
