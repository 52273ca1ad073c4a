"""A `game: conversation` run (played by `turinglab run`, with resume and several workers) as
the responses file of an ITT dataset: one row per message, machine source, flagged
conversations left out. Human conversations are added beside it (e.g. from chitchat-dataset).

An arena run's live integrative-test sessions are already judged: they become a judgements
file (one row per answerer) for `turinglab itt score`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from turinglab.games.spec import GameResult, TrialSpec
from turinglab.itt.dataset import save_dataset
from turinglab.itt.generate import Played, conversation_rows
from turinglab.itt.judgements import save_judgements
from turinglab.itt.study import JUDGEMENTS, RESPONSES
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
            f"run {run.id} plays {run.game!r}; --format itt is for conversation runs "
            "and arena runs with live-itt sessions"
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


@dataclass(frozen=True)
class JudgementsExport:
    path: Path
    judgements: int
    sessions: int  # live-itt study sessions that gave judgements


def export_live_itt(store: Store, run: RunInfo, out: Path) -> JudgementsExport:
    """An arena run's finished live-itt study sessions as `judgements.csv` in `out`."""
    from turinglab.arena.live_itt_mode import live_itt_judgements
    from turinglab.arena.store_bridge import ARENA_GAME, arena_records

    if run.game != ARENA_GAME:
        raise NotAConversationRun(f"run {run.id} plays {run.game!r}, not live sessions")
    rows = live_itt_judgements(arena_records(store, run.id))
    if not rows:
        raise NotAConversationRun(
            f"run {run.id}: no finished live-itt study session to export "
            "(practice and flagged sessions are left out)"
        )
    out.mkdir(parents=True, exist_ok=True)
    path = out / JUDGEMENTS
    save_judgements(path, rows)
    return JudgementsExport(path, len(rows), len({r.item.rsplit("/", 1)[0] for r in rows}))


def export_itt(store: Store, run: RunInfo, out: Path) -> str:
    """What `turinglab export --format itt` writes for a run; returns the line to print."""
    from turinglab.arena.store_bridge import ARENA_GAME

    if run.game == ARENA_GAME:
        judged = export_live_itt(store, run, out)
        return (
            f"wrote {judged.path}: {judged.judgements} judgements from {judged.sessions} "
            "live integrative-test sessions (for turinglab itt score)"
        )
    made = export_conversations(store, run, out)
    return (
        f"wrote {made.path}: {made.responses} machine responses from {made.conversations} "
        f"conversations ({made.flagged} flagged ones left out)"
    )
