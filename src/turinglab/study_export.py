"""A run of a human-style game as the study files the human-study analysis reads.

Three- and two-party runs become the study file of `turinglab report STUDY.csv` (one row per
game and witness); Strong Turing Test runs become its preference file (`--stt`). Batch
simulations and arena studies thus go through the same statistics. Each game kind writes its
own rows (`study_rows` / `stt_rows` on the game); this module only reads the store and writes
files. Flagged games and games without a usable verdict give no rows.

Each study row carries its conversation (`transcript`, as the arena's export writes it) and the
run's name as its `study`, so the report's game browser shows what was said and the report is
titled after the run.
"""

from __future__ import annotations

import csv
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from turinglab.config import ExperimentConfig
from turinglab.games.kinds import PREFERENCE_ROWS, STUDY_ROWS, game_for, kinds
from turinglab.games.spec import GameResult, Judgement, TrialSpec
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
        said[seat].append(
            {
                "sender": "interrogator" if m.sender == interrogator else "witness",
                "text": m.text,
                "t": round(m.created_at - started_at, 3),
            }
        )
    return said


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
