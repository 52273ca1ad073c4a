"""A `game: conversation` run (played by `turinglab run`, with resume and several workers) as
the responses file of an ITT dataset: one row per message, machine source, flagged
conversations left out. Human conversations are added beside it (e.g. from chitchat-dataset)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from turinglab.games.spec import GameResult, TrialSpec
from turinglab.itt.dataset import save_dataset
from turinglab.itt.generate import Played, conversation_rows
from turinglab.itt.study import RESPONSES
from turinglab.store.database import RunInfo, Store


class NotAConversationRun(ValueError):
    """Only conversation runs have ITT responses."""


@dataclass(frozen=True)
class DatasetExport:
    path: Path
    responses: int
    conversations: int
    flagged: int


def export_conversations(store: Store, run: RunInfo, out: Path) -> DatasetExport:
    if run.game != "conversation":
        raise NotAConversationRun(
            f"run {run.id} plays {run.game!r}; --format itt is for conversation runs"
        )
    played = []
    for r in store.results(run.id, include_flagged=True):
        spec = TrialSpec(r["idx"], r["key"], r["game"], r["seed"], r["seats"])
        result = GameResult(r["status"], details=r["details"], flags=list(r["flags"] or []))
        played.append(Played(spec, result))
    rows = conversation_rows(played, prefix=f"run-{run.id[:8]}")
    out.mkdir(parents=True, exist_ok=True)
    path = out / RESPONSES
    save_dataset(path, rows)
    flagged = sum(1 for p in played if p.result.flags)
    return DatasetExport(path, len(rows), len(played) - flagged, flagged)
