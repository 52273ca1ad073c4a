"""A run of a human-style game as the study files the human-study analysis reads.

Three- and two-party runs become the study file of `turinglab report STUDY.csv` (one row per
game and witness); Strong Turing Test runs become its preference file (`--stt`). Batch
simulations and arena studies thus go through the same statistics. Each game kind writes its
own rows (`study_rows` / `stt_rows` on the game); this module only reads the store and writes
files. Flagged games and games without a usable verdict give no rows.

Each study row carries its conversation (`transcript`, as the arena's export writes it) and the
run's name as its `study`, so the report's game browser shows what was said and the report is
titled after the run.

An arena study's run is exported here too, from its games' records (store/arena_records.py):
one row per (game, witness) with the interrogator's anonymous id, their round and exit survey.
Only finished study games count: practice games are never study data. Abandoned games (a
person left) and flagged ones (a failed AI witness, no verdict in time) give one row each with
an `excluded_reason` and nothing else to analyse; the report lists them among its exclusions
(human/exclusions.py: not_finished), and the JSON export gives each game its `exclude_reason`.

Exclusions (SPEC §2) are flagged, not applied: `exclude_prior_participation` (the interrogator
said in the exit survey they took part before; empty when they have not answered) and
`exclude_few_messages` (the interrogator sent fewer than 2 messages to a witness of the game).
The report applies the same rules itself from `prior_participation` and
`interrogator_messages` (human/exclusions.py), so the file needs no hand editing.
"""

from __future__ import annotations

import csv
import json
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from turinglab.config import ExperimentConfig
from turinglab.games.kinds import PREFERENCE_ROWS, STUDY_ROWS, game_for, kinds
from turinglab.games.spec import GameResult, Judgement, TrialSpec
from turinglab.store import arena_games
from turinglab.store.arena_records import ARENA_GAME
from turinglab.store.database import JudgementRecord, RunInfo, Store


class NotAStudyRun(ValueError):
    """The run's game has no study file (e.g. a GTT run)."""


@dataclass(frozen=True)
class StudyExport:
    path: Path
    kind: str  # "study" | "stt"
    rows: int
    games: int  # finished games read
    skipped: int  # games that gave no rows (no usable verdict)


def export_study(store: Store, run: RunInfo, out: Path) -> StudyExport:
    """Write the run's study (or STT) file into the folder `out`; returns what was written."""
    if run.game == ARENA_GAME:
        return _export_arena_study(store, run, out)
    if run.game not in study_games():
        raise NotAStudyRun(
            f"run {run.id} plays {run.game!r}; --format study is for "
            f"{', '.join(study_games())} runs"
        )
    config = ExperimentConfig.model_validate(run.config)
    game = game_for(config.experiment)
    study, stt = STUDY_ROWS.of(game), PREFERENCE_ROWS.of(game)
    verdicts = _judgements_by_game(store.judgements(run.id))
    kinds = store.seat_kinds(run.id)
    rows: list[dict[str, Any]] = []
    games = skipped = 0
    for r in store.results(run.id):
        games += 1
        spec = TrialSpec(
            index=r["idx"],
            key=r["key"],
            game=r["game"],
            seed=r["seed"],
            seats=r["seats"],
            params=r["params"],
        )
        result = GameResult(
            status=r["status"],
            verdict=r.get("verdict"),
            correct=r.get("correct"),
            details=r["details"],
            judgements=verdicts.get(r["attempt_id"], []),
        )
        if study is not None:
            made = study.study_rows(
                spec,
                result,
                seat_kinds=kinds.get(r["attempt_id"], {}),
                # The game's own clock (simulated in batch runs) started at details.started_at.
                transcripts=_conversations(
                    store, r["attempt_id"], spec, r["details"].get("started_at", r["started_at"])
                ),
            )
            for row in made:
                row.setdefault("study", run.name)
        else:
            assert stt is not None  # a study game has one of the two
            made = stt.stt_rows(spec, result)
        skipped += not made
        rows += made
    kind = "study" if study is not None else "stt"
    path = out / f"{kind}.csv"
    out.mkdir(parents=True, exist_ok=True)
    _write_csv(path, rows)
    return StudyExport(path, kind, len(rows), games, skipped)


def _export_arena_study(store: Store, run: RunInfo, out: Path) -> StudyExport:
    """An arena study's run as the study file its admin page gives (study.jsonl), as CSV."""
    finished = [g for g in arena_games.records(store, run.id) if g["status"] is not None]
    people = arena_games.participants(store, run.id)
    surveys = {pid: p["survey"] for pid, p in people.items()}
    recruited = {pid: p.get("recruitment") or {} for pid, p in people.items()}
    rows = arena_study_rows(finished, surveys, recruited)
    for row in rows:
        row.setdefault("study", run.name)
    games = [g for g in finished if not g["solo"]]
    usable = {r["game"] for r in rows if "excluded_reason" not in r}
    path = out / "study.csv"
    out.mkdir(parents=True, exist_ok=True)
    _write_csv(path, rows)
    return StudyExport(path, "study", len(rows), len(games), len(games) - len(usable))


def study_games() -> list[str]:
    """The game kinds whose runs have a study (or STT) file, from the registry."""
    return [
        name for name, kind in kinds().items() if {STUDY_ROWS, PREFERENCE_ROWS} & kind.capabilities
    ]


# Messages that are not part of the conversation: the verdict exchange and refused messages.
_NOT_SAID = ("verdict", "refused")


def _conversations(
    store: Store, game_id: int, spec: TrialSpec, started_at: float
) -> dict[str, list[dict[str, Any]]]:
    """witness seat -> its conversation with the interrogator, as the study file's transcript
    column holds it: [{"sender": "interrogator" | "witness", "text", "t": seconds in}]."""
    interrogator = "interrogator"
    witnesses = set(spec.params.get("witnesses", {}))
    said: dict[str, list[dict[str, Any]]] = {seat: [] for seat in witnesses}
    for m in store.transcript(game_id):
        seat = m.channel
        if seat not in said or m.sender not in (interrogator, seat) or m.phase in _NOT_SAID:
            continue
        said[seat].append(_said_entry(m.sender == interrogator, m.text, m.created_at - started_at))
    return said


def _said_entry(by_interrogator: bool, text: str, seconds_in: float) -> dict[str, Any]:
    """One message of a study row's `transcript` (batch and arena rows alike)."""
    return {
        "sender": "interrogator" if by_interrogator else "witness",
        "text": text,
        "t": round(seconds_in, 3),
    }


def _judgements_by_game(found: Iterable[JudgementRecord]) -> dict[int, list[Judgement]]:
    by_game: dict[int, list[Judgement]] = defaultdict(list)
    for j in found:
        by_game[j.game_id].append(j.judgement)
    return by_game


def _write_csv(path: Path, rows: list[dict[str, Any]]) -> None:
    columns: list[str] = []
    for row in rows:
        columns += [c for c in row if c not in columns]
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=columns)
        writer.writeheader()
        for row in rows:
            writer.writerow({c: "" if row.get(c) is None else row[c] for c in columns})


# ---- arena studies: rows from the games' records ---------------------------------------------

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


def arena_study_rows(
    games: Iterable[Mapping[str, Any]],
    surveys: Mapping[str, Mapping[str, Any] | None],
    recruited: Mapping[str, Mapping[str, str]] | None = None,
) -> list[dict[str, Any]]:
    """An arena study's finished games as study rows (see the module docstring); with
    `recruited` (participant -> ids from the recruitment link), the interrogator's ids as
    `interrogator_prolific_pid`, … ."""
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
        started = game["started_at"]
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
                        _said_entry(m["sender"] == judge_seat, m["text"], m["at"] - started)
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
            given = (recruited or {}).get(judge, {})
            row.update({f"interrogator_{k.lower()}": v for k, v in given.items()})
            rows.append(row)
    return rows


def study_jsonl(
    games: Iterable[Mapping[str, Any]],
    surveys: Mapping[str, Mapping[str, Any] | None],
    recruited: Mapping[str, Mapping[str, str]] | None = None,
) -> str:
    rows = arena_study_rows(games, surveys, recruited)
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
