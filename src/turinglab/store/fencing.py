"""Writes of a live game by the one process that owns it, proven on every commit.

A live arena game's row carries an ownership epoch (`games.owner_epoch`, the fencing token).
The process that starts a game holds epoch 0; a takeover claims the game and bumps the epoch in
one UPDATE (`claim_games`). Every later write of the game (a message, the end, the verdict) is
made in a transaction that first reads the game's row under a lock (`held_games`: SELECT … FOR
SHARE on PostgreSQL, the single write lock on SQLite) and writes only if the epoch is still the
writer's. The lock makes a concurrent takeover wait for this commit, so a write either lands
before the takeover reads the game or is refused after it: a process that was paused (slow, not
dead) can never add a row to a game that is being played elsewhere.

The same read returns each game's next seq, so a message row is written only if it continues
what is stored: no hole, no second row under a seq. A row already stored with the same sender
and text (a retried commit whose first try did land) counts as written.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, and_, func, or_, select, text, update

from turinglab.store.schema import games, messages

PLAYING = "playing"


class Refused(RuntimeError):
    """A write the store refused on purpose, before writing anything (retrying cannot help)."""


class Fenced(Refused):
    """The game is no longer this writer's: another process took it over (or it has ended)."""


class OutOfSequence(Refused):
    """A message that would leave a hole in its game, or reuse a seq with other words."""


@dataclass(frozen=True)
class OwnedMessage:
    """A message row (`Store.message_row`) and the epoch its writer holds for the game."""

    row: dict[str, Any]
    epoch: int

    @property
    def game_id(self) -> int:
        return int(self.row["game_id"])


def held_games(conn: Connection, epochs: Mapping[int, int]) -> dict[int, int]:
    """Of `epochs` (game id -> the epoch the writer holds), the games still held and playing,
    each with its next seq. Their rows stay locked until the transaction ends."""
    if not epochs:
        return {}
    next_seq = (
        select(func.coalesce(func.max(messages.c.seq) + 1, 0))
        .where(messages.c.game_id == games.c.id)
        .scalar_subquery()
    )
    query = select(games.c.id, next_seq.label("next_seq")).where(
        or_(*(and_(games.c.id == g, games.c.owner_epoch == e) for g, e in epochs.items())),
        games.c.status == PLAYING,
    )
    if conn.dialect.name == "postgresql":
        query = query.with_for_update(read=True, of=games)
    return {int(r.id): int(r.next_seq) for r in conn.execute(query)}


def hold(conn: Connection, game_id: int, epoch: int) -> None:
    """Raise Fenced unless the writer still holds `game_id` (locked until the commit)."""
    if game_id not in held_games(conn, {game_id: epoch}):
        raise Fenced(f"game {game_id}: epoch {epoch} is no longer the owner's")


def add_owned_messages(
    conn: Connection, owned: Sequence[OwnedMessage], add: Any
) -> list[Refused | None]:
    """Write the messages whose writer still holds their game and that continue its stored
    seqs; `add(conn, rows)` writes plain rows (Store.add_messages: images included). Returns,
    per message, None (written, or already stored as is) or why it was refused."""
    held = held_games(conn, {m.game_id: m.epoch for m in owned})
    outcome: list[Refused | None] = []
    expected = dict(held)  # game id -> the seq the next row must have
    broken: set[int] = set()  # games with a refused row in this batch: later rows wait
    rows: list[dict[str, Any]] = []
    stored_before: list[tuple[int, OwnedMessage]] = []
    for i, m in enumerate(owned):
        gid, seq = m.game_id, int(m.row["seq"])
        if gid not in held:
            outcome.append(Fenced(f"game {gid}: not held at epoch {m.epoch}"))
        elif gid in broken or seq > expected[gid]:
            broken.add(gid)
            outcome.append(OutOfSequence(f"game {gid}: seq {seq} after {expected[gid] - 1}"))
        elif seq < expected[gid]:
            outcome.append(None)  # checked against what is stored, below
            stored_before.append((i, m))
        else:
            expected[gid] = seq + 1
            rows.append(m.row)
            outcome.append(None)
    for i, m in stored_before:
        found = conn.execute(
            select(messages.c.sender, messages.c.text).where(
                messages.c.game_id == m.game_id, messages.c.seq == m.row["seq"]
            )
        ).first()
        if found is None or (found.sender, found.text) != (m.row["sender"], m.row["text"]):
            outcome[i] = OutOfSequence(f"game {m.game_id}: seq {m.row['seq']} is taken")
    if rows:
        add(conn, rows)
    return outcome


@dataclass(frozen=True, order=True)
class Claimed:
    game_id: int
    epoch: int


def claim_games(conn: Connection, run_id: str, lost: str, me: str) -> list[Claimed]:
    """Every game of `run_id` still playing under the process `lost`, now this process's, each
    with its new epoch. One UPDATE: when several processes try at once, the database gives each
    game to exactly one of them, and the bumped epoch fences `lost` out of it."""
    if conn.dialect.name == "postgresql":  # a lock that is not given up: try again later
        conn.execute(text("SET LOCAL lock_timeout = '5s'"))
    rows = conn.execute(
        update(games)
        .where(games.c.run_id == run_id, games.c.status == PLAYING, games.c.worker == lost)
        .values(worker=me, owner_epoch=games.c.owner_epoch + 1)
        .returning(games.c.id, games.c.owner_epoch)
    ).all()
    return sorted(Claimed(int(r.id), int(r.owner_epoch)) for r in rows)
