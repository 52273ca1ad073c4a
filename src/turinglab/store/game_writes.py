"""Writes made while games are played: a game starts (with its seats), messages are said, a
game ends (with its trial's outcome and its judgements). Each is a function of a
`Connection`, so that the runner's writer thread can commit many of them in one transaction
(store/writer.py)."""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Connection, bindparam, insert, select, update
from sqlalchemy.exc import IntegrityError

from turinglab.games.table import TranscriptMessage
from turinglab.store.connection import StoreBase
from turinglab.store.media import save_images
from turinglab.store.records import (
    FAILED,
    FINISHED,
    FLAGGED,
    IMAGE_PARTS,
    PLAYING,
    SUPERSEDED,
    GameEnd,
    GameStart,
    judgement_row,
    message_row,
    seat_row,
)
from turinglab.store.schema import (
    OUTCOME_EXTRA_COLUMNS,
    environments,
    games,
    judgements,
    messages,
    outcomes,
    seats,
    trials,
)

# Built once: constructing a statement and computing its cache key costs more CPU than
# executing it on SQLite, and the writer runs these for every group commit.
_INSERT_GAMES = insert(games).returning(games.c.id, sort_by_parameter_order=True)
_INSERT_SEATS = insert(seats)
_INSERT_MESSAGES = insert(messages)
_INSERT_JUDGEMENTS = insert(judgements)
_OUTCOME_OWNERS = select(outcomes.c.trial_id, outcomes.c.game_id).where(
    outcomes.c.trial_id.in_(bindparam("trial_ids", expanding=True))
)
_END_GAMES = (
    update(games)
    .where(games.c.id == bindparam("gid"))
    .values(
        status=bindparam("status"),
        finished_at=bindparam("finished_at"),
        calls=bindparam("calls"),
        tokens_in=bindparam("tokens_in"),
        tokens_out=bindparam("tokens_out"),
        error_kind=bindparam("error_kind"),
        error_message=bindparam("error_message"),
        flags=bindparam("flags", type_=games.c.flags.type),
    )
)
_RELEASE_TRIALS = (
    update(trials)
    .where(trials.c.id == bindparam("tid"), trials.c.lease_owner == bindparam("owner"))
    .values(lease_owner=None, lease_expires_at=None)
)


def _insert_outcome_unless_taken(dialect: str) -> Any:
    if dialect == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as pg_insert

        return pg_insert(outcomes).on_conflict_do_nothing(index_elements=["trial_id"])
    if dialect == "sqlite":
        from sqlalchemy.dialects.sqlite import insert as sqlite_insert

        return sqlite_insert(outcomes).on_conflict_do_nothing(index_elements=["trial_id"])
    return insert(outcomes).prefix_with("IGNORE")  # MySQL-style fallback


_OUTCOME_INSERTS: dict[str, Any] = {}


class GameWritesMixin(StoreBase):
    def start_game(self, conn: Connection, start: GameStart) -> int:
        """The game row (status playing) and its seats, before the first message."""
        return self.start_games(conn, [start])[0]

    def start_games(self, conn: Connection, starts: Sequence[GameStart]) -> list[int]:
        """Many games at once (the writer's group commit): one INSERT … RETURNING for the
        games, one for their seats."""
        rows: list[dict[str, Any]] = [
            {
                "run_id": st.run_id,
                "trial_id": st.trial_id,
                "attempt_no": st.attempt_no,
                "game": st.game,
                "status": PLAYING,
                "started_at": st.started_at,
                "calls": 0,
                "environment_id": st.environment_id,
                "worker": st.worker,
                "setup": st.setup,
                "flags": [],
            }
            for st in starts
        ]
        result = conn.execute(_INSERT_GAMES, rows)
        ids = [int(row.id) for row in result]
        seat_rows = [
            seat_row(game_id, s) for game_id, st in zip(ids, starts, strict=True) for s in st.seats
        ]
        if seat_rows:
            conn.execute(_INSERT_SEATS, seat_rows)
        return ids

    @staticmethod
    def message_row(game_id: int, m: TranscriptMessage) -> dict[str, Any]:
        """A said message as the row `add_messages` takes."""
        return message_row(game_id, m)

    def add_messages(self, conn: Connection, rows: list[dict[str, Any]]) -> None:
        """Message rows (`message_row`); the images they carry are stored once, by content."""
        parts = [image for row in rows for image in row.get(IMAGE_PARTS, ())]
        if parts:
            save_images(conn, parts)
            rows = [{k: v for k, v in row.items() if k != IMAGE_PARTS} for row in rows]
        if rows:
            conn.execute(_INSERT_MESSAGES, rows)

    def end_game(self, conn: Connection, end: GameEnd) -> str:
        return self.end_games(conn, [end])[0]

    def end_games(self, conn: Connection, ends: Sequence[GameEnd]) -> list[str]:
        """Close games; a finished one writes its trial's outcome. Returns each game's final
        status: finished | flagged | failed | superseded (another worker finished the trial
        first: its outcome insert found the trial's row taken, which is not an error).

        Batched for the writer's group commit: one INSERT … ON CONFLICT DO NOTHING for the
        outcomes, one executemany UPDATE for the games."""
        statuses: list[str] = []
        outcome_rows: list[dict[str, Any]] = []
        judgement_rows: list[dict[str, Any]] = []
        game_rows: list[dict[str, Any]] = []
        released: list[dict[str, Any]] = []
        for end in ends:
            result = end.result
            row: dict[str, Any] = {
                "gid": end.game_id,
                "finished_at": end.finished_at,
                "calls": end.calls,
                "tokens_in": end.tokens_in,
                "tokens_out": end.tokens_out,
                "error_kind": end.error_kind,
                "error_message": end.error_message,
                "flags": [],
            }
            if result is None:
                statuses.append(FAILED)
            else:
                statuses.append(FLAGGED if result.flags else FINISHED)
                row["flags"] = list(result.flags)
                judgement_rows += [judgement_row(end.game_id, j) for j in result.judgements]
                if end.trial_id is not None:
                    outcome_rows.append(
                        {
                            "trial_id": end.trial_id,
                            "game_id": end.game_id,
                            "status": FLAGGED if result.flags else result.status,
                            "verdict": result.verdict,
                            "correct": result.correct,
                            "routes": end.routes,
                            "details": result.details,
                            "flags": list(result.flags),
                            "finished_at": end.finished_at,
                            **{col: end.extra.get(col) for col in OUTCOME_EXTRA_COLUMNS},
                        }
                    )
            game_rows.append(row)
            if end.release and end.trial_id is not None and end.worker is not None:
                released.append({"tid": end.trial_id, "owner": end.worker})
        if outcome_rows:
            conn.execute(self._insert_outcome_unless_taken(), outcome_rows)
            trial_ids = [r["trial_id"] for r in outcome_rows]
            winners = dict(conn.execute(_OUTCOME_OWNERS, {"trial_ids": trial_ids}).all())
            lost = {
                r["game_id"] for r in outcome_rows if winners.get(r["trial_id"]) != r["game_id"]
            }
            statuses = [
                SUPERSEDED if end.game_id in lost else st
                for end, st in zip(ends, statuses, strict=True)
            ]
        for row, st in zip(game_rows, statuses, strict=True):
            row["status"] = st
        if judgement_rows:
            conn.execute(_INSERT_JUDGEMENTS, judgement_rows)
        conn.execute(_END_GAMES, game_rows)
        if released:
            conn.execute(_RELEASE_TRIALS, released)
        return statuses

    def _insert_outcome_unless_taken(self) -> Any:
        statement = _OUTCOME_INSERTS.get(self.dialect)
        if statement is None:
            statement = _OUTCOME_INSERTS[self.dialect] = _insert_outcome_unless_taken(self.dialect)
        return statement

    def save_environment(self, data: dict[str, Any]) -> str:
        env_id = hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]
        with self.writing() as conn:
            exists = conn.execute(select(environments.c.id).where(environments.c.id == env_id))
            if exists.first() is None:
                # Another process may write the same block meanwhile: same content, no harm.
                with contextlib.suppress(IntegrityError), conn.begin_nested():
                    conn.execute(insert(environments).values(id=env_id, data=data))
        return env_id
