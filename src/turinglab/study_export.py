"""A run of a human-style game as the study files the human-study analysis reads.

Three- and two-party runs become the study file of `turinglab report STUDY.csv` (one row per
game and witness); Strong Turing Test runs become its preference file (`--stt`). Batch
simulations and arena studies thus go through the same statistics.

One builder writes every study row (games/study_rows.py: columns, exclusions, transcript,
clock); this module only feeds it, with one adapter per source:

- a batch run's trials (`export_study`): each finished trial, flagged ones included, through
  its game kind's STUDY_ROWS capability, with its stored transcript and seat kinds;
- an arena study's games (`arena_study_game`), from their records (store/arena_records.py),
  whether read back from the store (`export_study` of an arena run) or still in a server's
  memory (the admin page's study.jsonl), with the interrogator's exit survey and the ids
  their recruitment link carried.

Each row carries its conversation (`transcript`) and, in a file, the run's name as its `study`,
so the report's game browser shows what was said and the report is titled after the run.
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
from turinglab.csv_cells import neutralised
from turinglab.games.kinds import PREFERENCE_ROWS, STUDY_ROWS, game_for, kinds
from turinglab.games.spec import GameResult, Judgement
from turinglab.games.study_rows import (
    Said,
    StudyGame,
    StudyWitness,
    Survey,
    between,
    exclusion_flags,
    exclusion_reason,
    study_rows,
)
from turinglab.store import arena_games
from turinglab.store.arena_records import ARENA_GAME
from turinglab.store.database import JudgementRecord, ResultRecord, RunInfo, Store


class NotAStudyRun(ValueError):
    """The run's game has no study file (e.g. a GTT run)."""


@dataclass(frozen=True)
class StudyExport:
    path: Path
    kind: str  # "study" | "stt"
    rows: int  # exclusions included (a study file's `excluded_reason` rows)
    games: int  # finished games read
    skipped: int  # games without a usable verdict: excluded, or no rows at all


def export_study(store: Store, run: RunInfo, out: Path) -> StudyExport:
    """Write the run's study (or STT) file into the folder `out`; returns what was written."""
    if run.game == ARENA_GAME:
        return _export_arena_study(store, run, out)
    if run.game not in study_games():
        raise NotAStudyRun(
            f"run {run.id} plays {run.game!r}; --format study is for "
            f"{', '.join(study_games())} runs"
        )
    game = game_for(ExperimentConfig.model_validate(run.config).experiment)
    study, stt = STUDY_ROWS.of(game), PREFERENCE_ROWS.of(game)
    if study is not None:
        # Flagged games too: the study file lists them among its exclusions.
        played = _played(store, run.id, include_flagged=True)
        seat_kinds = store.seat_kinds(run.id)
        seen = [
            study.study_game(
                r.spec,
                result,
                seat_kinds=seat_kinds.get(r.attempt_id, {}),
                messages=store.transcript(r.attempt_id),
                started_at=r.started_at,  # when the game kept no start of its own clock
            )
            for r, result in played
        ]
        rows = study_rows(seen, study=run.name)
        return _written(out / "study.csv", "study", rows, len(played), len(played) - _usable(rows))
    assert stt is not None  # a study game has one of the two
    played = _played(store, run.id, include_flagged=False)
    made = [stt.stt_rows(r.spec, result) for r, result in played]
    rows = [row for game_rows in made for row in game_rows]
    return _written(out / "stt.csv", "stt", rows, len(played), sum(not m for m in made))


def _played(
    store: Store, run_id: str, *, include_flagged: bool
) -> list[tuple[ResultRecord, GameResult]]:
    """Each finished trial of a batch run with its result, judgements included."""
    verdicts = _judgements_by_game(store.judgements(run_id))
    return [
        (
            r,
            GameResult(
                status=r.status,
                verdict=r.verdict,
                correct=r.correct,
                details=r.details,
                judgements=verdicts.get(r.attempt_id, []),
                flags=list(r.flags),
            ),
        )
        for r in store.results(run_id, include_flagged=include_flagged)
    ]


def _usable(rows: list[dict[str, Any]]) -> int:
    """Games with rows to analyse (not listed as exclusions)."""
    return len({row["game"] for row in rows if "excluded_reason" not in row})


def _written(
    path: Path, kind: str, rows: list[dict[str, Any]], games: int, skipped: int
) -> StudyExport:
    path.parent.mkdir(parents=True, exist_ok=True)
    _write_csv(path, rows)
    return StudyExport(path, kind, len(rows), games, skipped)


def _export_arena_study(store: Store, run: RunInfo, out: Path) -> StudyExport:
    """An arena study's run as the study file its admin page gives (study.jsonl), as CSV."""
    people = arena_games.participants(store, run.id)
    records = without_withdrawn(arena_games.records(store, run.id), withdrawn_ids(people))
    finished = [g for g in records if g["status"] is not None]
    surveys = {pid: p["survey"] for pid, p in people.items()}
    recruited = interrogator_facts(people)
    rows = study_rows((arena_study_game(g, surveys, recruited) for g in finished), run.name)
    games = sum(not g["solo"] for g in finished)
    return _written(out / "study.csv", "study", rows, games, games - _usable(rows))


def study_games() -> list[str]:
    """The game kinds whose runs have a study (or STT) file, from the registry."""
    return [
        name for name, kind in kinds().items() if {STUDY_ROWS, PREFERENCE_ROWS} & kind.capabilities
    ]


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
            writer.writerow({c: "" if row.get(c) is None else neutralised(row[c]) for c in columns})


# ---- arena studies: games from their records ------------------------------------------------


def withdrawn_ids(people: Mapping[str, Mapping[str, Any]]) -> frozenset[str]:
    """Participants who withdrew consent after taking part (arena/web/handoff.py)."""
    return frozenset(pid for pid, p in people.items() if p.get("withdrawn"))


def without_withdrawn(
    games: Iterable[Mapping[str, Any]], gone: frozenset[str]
) -> list[dict[str, Any]]:
    """The games no withdrawn participant sat in: their data leaves every export, and a game
    without one side's words is no study data either."""
    return [
        dict(g) for g in games if not any(s.get("participant") in gone for s in g["seats"].values())
    ]


def interrogator_facts(people: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, str]]:
    """Per participant, the columns `interrogator_*` of their rows: the ids their link
    carried, and how their study ended with the rounds they had done (arena/web/handoff.py)."""
    facts: dict[str, dict[str, str]] = {}
    for pid, p in people.items():
        entry = dict(p.get("recruitment") or {})
        end = p.get("study_end")
        if isinstance(end, Mapping):
            entry["study_end"] = str(end.get("end"))
            entry["rounds_done"] = str(end.get("rounds_done"))
        facts[pid] = entry
    return facts


NOT_CHAT = ("strong", "gtt", "live-itt")  # game kinds with their own export files
JUDGE = "interrogator"  # the judging seat of a record with no verdict


def _witness_info(game: Mapping[str, Any], seat: str) -> Mapping[str, Any]:
    """What the game's plan recorded about a witness seat (engine games; else {})."""
    info = ((game.get("trial") or {}).get("params") or {}).get("witnesses", {}).get(seat)
    return info if isinstance(info, Mapping) else {}


def witness_label(game: Mapping[str, Any], seat: str) -> str:
    """An AI witness's group as the study names it ("SMOLLM2-PERSONA"), else its agent."""
    name = _witness_info(game, seat).get("name")
    return str(name) if name else str(game["seats"][seat].get("agent", seat))


def arena_study_game(
    game: Mapping[str, Any],
    surveys: Mapping[str, Survey],
    recruited: Mapping[str, Mapping[str, str]] | None = None,
) -> StudyGame:
    """An arena game's record as the study file sees it: the interrogator by anonymous id,
    with their exit survey and recruitment ids; times on the game's own clock, which stood
    still while saving was delayed."""
    judgements = tuple(Judgement.from_json(j) for j in game["judgements"])
    verdict = next((j for j in judgements if j.kind == "verdict"), None)
    judge_seat = verdict.judge if verdict is not None else JUDGE
    seats: Mapping[str, Mapping[str, Any]] = game["seats"]
    judge_who = seats.get(judge_seat, {})
    judge = str(judge_who.get("participant", judge_seat))
    started: float = game["started_at"]
    witnesses = []
    for seat, who in seats.items():
        if seat == judge_seat:
            continue
        person = who["kind"] == "human"
        said = tuple(
            Said(m["sender"] == judge_seat, m["text"], m["at"] - started)
            for m in game["messages"]
            if between(m["sender"], m["visible_to"], judge_seat, seat)
        )
        witnesses.append(
            StudyWitness(
                seat=seat,
                human=person,
                label="human" if person else witness_label(game, seat),
                model="" if person else str(who.get("agent", "")),
                persona=str(_witness_info(game, seat).get("persona") or ""),
                kind="human" if person else "agent",
                said=said,
            )
        )
    ended = game["ended_at"]
    return StudyGame(
        game=str(game["game"]),
        interrogator=judge,
        interrogator_kind="human" if judge_who.get("kind") == "human" else "agent",
        witnesses=tuple(witnesses),
        status=game["status"],
        flags=tuple(str(f) for f in game.get("flags") or ()),
        judgements=judgements,
        started_at=started,
        duration_s=None if ended is None else ended - started,
        solo=bool(game["solo"]),
        chat=(game.get("trial") or {}).get("game") not in NOT_CHAT,
        survey=surveys.get(judge),
        recruited=dict((recruited or {}).get(judge) or {}),
    )


def flag_exclusions(export: dict[str, Any]) -> dict[str, Any]:
    """The JSON export with each study game's exclusion flags and reason added."""
    surveys = {p["participant"]: p.get("survey") for p in export.get("participants", [])}
    for game in export.get("games", []):
        seen = arena_study_game(game, surveys)
        game.update(exclusion_flags(seen))
        game["exclude_reason"] = exclusion_reason(seen)
    return export


def study_jsonl(
    games: Iterable[Mapping[str, Any]],
    surveys: Mapping[str, Survey],
    recruited: Mapping[str, Mapping[str, str]] | None = None,
) -> str:
    """The admin page's study.jsonl: the study file's rows of an arena study's games."""
    rows = study_rows(arena_study_game(g, surveys, recruited) for g in games)
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
