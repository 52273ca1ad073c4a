"""A live game's control events in the store (games/control_log.py), fenced as its messages are.

Each row is written in a transaction that first holds the game's row at the writer's epoch
(store/fencing.py `held_games`), so a process that lost the game to a takeover adds nothing,
and only if it continues the game's stored numbering: `idx` equal to the next one. A row
already stored under that `idx` with the same kind and data (a retried commit whose first try
landed) counts as written; one with other content is refused (OutOfSequence).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, func, insert, select

from turinglab.games.control_log import Logged, event_from, event_json
from turinglab.store.fencing import Fenced, OutOfSequence, held_games
from turinglab.store.schema import control_events

_INSERT = insert(control_events)


@dataclass(frozen=True)
class OwnedControl:
    """A control event of game `game_id`, written only while `epoch` is still the game's."""

    game_id: int
    epoch: int
    logged: Logged


def control_row(game_id: int, logged: Logged) -> dict[str, Any]:
    return {
        "game_id": game_id,
        "idx": logged.idx,
        "after_seq": logged.after_seq,
        "kind": logged.event.kind,
        "data": event_json(logged.event),
        "created_at": logged.created_at,
    }


def add_owned_controls(conn: Connection, owned: Sequence[OwnedControl]) -> None:
    """Write the events (in order), or raise Fenced / OutOfSequence before writing any."""
    held = held_games(conn, {o.game_id: o.epoch for o in owned})
    for o in owned:
        if o.game_id not in held:
            raise Fenced(f"game {o.game_id}: not held at epoch {o.epoch}")
    rows: list[dict[str, Any]] = []
    expected: dict[int, int] = {}
    for o in owned:
        gid, idx = o.game_id, o.logged.idx
        if gid not in expected:
            expected[gid] = _next_idx(conn, gid)
        row = control_row(gid, o.logged)
        if idx < expected[gid]:
            _check_stored(conn, row)
            continue
        if idx > expected[gid]:
            raise OutOfSequence(f"game {gid}: control event {idx} after {expected[gid] - 1}")
        expected[gid] = idx + 1
        rows.append(row)
    if rows:
        conn.execute(_INSERT, rows)


def _next_idx(conn: Connection, gid: int) -> int:
    query = select(func.coalesce(func.max(control_events.c.idx) + 1, 0)).where(
        control_events.c.game_id == gid
    )
    return int(conn.execute(query).scalar_one())


def _check_stored(conn: Connection, row: dict[str, Any]) -> None:
    found = conn.execute(
        select(control_events.c.kind, control_events.c.data).where(
            control_events.c.game_id == row["game_id"], control_events.c.idx == row["idx"]
        )
    ).first()
    if found is None or (found.kind, dict(found.data)) != (row["kind"], row["data"]):
        raise OutOfSequence(f"game {row['game_id']}: control event {row['idx']} is taken")


def load_controls(conn: Connection, ids: Sequence[int]) -> dict[int, list[Logged]]:
    """Each game's control events, in order (a few queries for all games, not per game)."""
    out: dict[int, list[Logged]] = {gid: [] for gid in ids}
    if not ids:
        return out
    query = (
        select(control_events)
        .where(control_events.c.game_id.in_(list(ids)))
        .order_by(control_events.c.game_id, control_events.c.idx)
    )
    for r in conn.execute(query):
        event = event_from(r.kind, r.data)
        out[r.game_id].append(Logged(r.idx, r.after_seq, event, r.created_at))
    return out
