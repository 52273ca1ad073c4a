"""A run of an ITT game (played by `turinglab run`, with resume and several workers) as the
responses file of an ITT dataset, machine source, flagged trials left out:

- `game: conversation`: one row per message;
- `game: itt-response`: one row per answer (post-processed), with the stimulus images copied
  beside the responses file at the paths the stimuli file gave, so the folder is a study
  folder `turinglab serve --itt-study` can show.

Human responses are added beside it (chitchat-dataset conversations, `/respond` in the arena).
An arena run's topic conversations (people with people, or with an AI) become the responses
file too (itt/arena_conversations.py); its live integrative-test sessions are already judged:
they become a judgements file (one row per answerer) for `turinglab itt score`."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from turinglab.games.live_itt_judgements import live_itt_judgements
from turinglab.games.spec import GameResult
from turinglab.itt.dataset import save_dataset
from turinglab.itt.generate import Played, conversation_rows, response_rows
from turinglab.itt.judgements import save_judgements
from turinglab.itt.study import JUDGEMENTS, RESPONSES
from turinglab.store import arena_games
from turinglab.store.arena_records import ARENA_GAME
from turinglab.store.database import RunInfo, Store

ITT_GAMES = ("conversation", "itt-response")
FINISHED = ("finished", "finished-with-failures")


class NotAnITTRun(ValueError):
    """Only runs of the ITT games have dataset responses."""


@dataclass(frozen=True)
class DatasetExport:
    path: Path
    responses: int
    trials: int  # conversations or answers kept
    flagged: int
    unit: str  # what a trial is: "conversations" or "answers"

    def summary(self) -> str:
        return (
            f"wrote {self.path}: {self.responses} machine responses from {self.trials} "
            f"{self.unit} ({self.flagged} flagged ones left out)"
        )


def export_itt_run(store: Store, run: RunInfo, out: Path) -> DatasetExport:
    if run.game not in ITT_GAMES:
        raise NotAnITTRun(
            f"run {run.id} plays {run.game!r}; --format itt is for {' and '.join(ITT_GAMES)} "
            "runs and arena runs with live-itt sessions"
        )
    if run.status not in FINISHED:
        # a dataset cut short would quietly under-represent the trials still to play
        raise NotAnITTRun(
            f"run {run.id} is {run.status} ({run.finished} of {run.n_planned} trials done); "
            "finish it (turinglab run --resume) before exporting it for ITT"
        )
    played = []
    for r in store.results(run.id, include_flagged=True):
        played.append(Played(r.spec, GameResult(r.status, details=r.details, flags=list(r.flags))))
    if not played:
        raise NotAnITTRun(f"run {run.id}: no trial results to export")
    prefix = f"run-{run.id[:8]}"
    out.mkdir(parents=True, exist_ok=True)
    if run.game == "conversation":
        rows, unit = conversation_rows(played, prefix=prefix), "conversations"
    else:
        rows, unit = response_rows(played, prefix=prefix), "answers"
        _copy_images(played, out)
    path = out / RESPONSES
    save_dataset(path, rows)
    flagged = sum(1 for p in played if p.result.flags)
    return DatasetExport(path, len(rows), len(played) - flagged, flagged, unit)


def _copy_images(played: list[Played], out: Path) -> None:
    """Each stimulus image once, at its stimuli-file path under `out` (refusing paths that
    would leave it; the stimuli loader already refused them when the run was planned)."""
    root = out.resolve()
    for p in played:
        source, relative = p.spec.params.get("image_path"), p.spec.params.get("stimulus_file")
        if not source or not relative:
            continue
        target = (root / relative).resolve()
        if not target.is_relative_to(root):
            raise ValueError(f"stimulus_file {relative} would be written outside {out}")
        if target.exists():
            continue
        if not Path(source).is_file():
            raise ValueError(f"stimulus image {source} is gone; the export needs it")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)


@dataclass(frozen=True)
class JudgementsExport:
    path: Path
    judgements: int
    sessions: int  # live-itt study sessions that gave judgements

    def summary(self) -> str:
        return (
            f"wrote {self.path}: {self.judgements} judgements from {self.sessions} "
            "live integrative-test sessions (for turinglab itt score)"
        )


def export_live_itt(store: Store, run: RunInfo, out: Path) -> JudgementsExport:
    """An arena run's finished live-itt study sessions as `judgements.csv` in `out`."""
    if run.game != ARENA_GAME:
        raise NotAnITTRun(f"run {run.id} plays {run.game!r}, not live sessions")
    rows = live_itt_judgements(arena_games.records(store, run.id))
    if not rows:
        raise NotAnITTRun(
            f"run {run.id}: no finished live-itt study session to export "
            "(practice and flagged sessions are left out)"
        )
    out.mkdir(parents=True, exist_ok=True)
    path = out / JUDGEMENTS
    save_judgements(path, rows)
    return JudgementsExport(path, len(rows), len({r.item.rsplit("/", 1)[0] for r in rows}))


@dataclass(frozen=True)
class ConversationsExport:
    path: Path
    responses: int
    conversations: int
    kinds: dict[str, int]
    left_out: int

    def summary(self) -> str:
        kinds = ", ".join(f"{n} {k}" for k, n in sorted(self.kinds.items()))
        return (
            f"wrote {self.path}: {self.responses} messages from {self.conversations} arena "
            f"conversations ({kinds}; {self.left_out} unfinished, flagged or practice ones "
            "left out)"
        )


@dataclass(frozen=True)
class ArenaExport:
    parts: list[ConversationsExport | JudgementsExport]

    def summary(self) -> str:
        return "\n".join(p.summary() for p in self.parts)


def export_arena(store: Store, run: RunInfo, out: Path) -> ArenaExport:
    """An arena run's topic conversations as `responses.csv` and its live-itt sessions as
    `judgements.csv` in `out` (whichever it has)."""
    from turinglab.itt.arena_conversations import arena_conversations

    records = arena_games.records(store, run.id)
    judged = live_itt_judgements(records)
    talks = arena_conversations(records, prefix=f"arena-{run.id.removeprefix('arena-')[:8]}")
    if not judged and not talks.rows:
        raise NotAnITTRun(
            f"run {run.id}: no finished topic conversation or live-itt study session to "
            "export (practice, flagged and unfinished ones are left out)"
        )
    parts: list[ConversationsExport | JudgementsExport] = []
    out.mkdir(parents=True, exist_ok=True)
    if talks.rows:
        path = out / RESPONSES
        save_dataset(path, talks.rows)
        parts.append(
            ConversationsExport(
                path, len(talks.rows), talks.conversations, talks.kinds(), talks.left_out
            )
        )
    if judged:
        path = out / JUDGEMENTS
        save_judgements(path, judged)
        sessions = len({r.item.rsplit("/", 1)[0] for r in judged})
        parts.append(JudgementsExport(path, len(judged), sessions))
    return ArenaExport(parts)


def export_itt(
    store: Store, run: RunInfo, out: Path
) -> DatasetExport | JudgementsExport | ArenaExport:
    """What `turinglab export --format itt` writes: an ITT game run's responses, or an arena
    run's topic conversations (responses) and live-itt sessions (judgements)."""
    if run.game == ARENA_GAME:
        return export_arena(store, run, out)
    return export_itt_run(store, run, out)
