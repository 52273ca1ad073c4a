"""Writes that cannot be duplicated or made by a stale owner: `messages` gets a unique
`(game_id, seq)` (it replaces the plain index on the same columns), and `games` an
`owner_epoch`, the fencing token a takeover bumps (store/database.py, `hold_games`).

A store written before this revision may hold duplicate `(game_id, seq)` rows (a paused arena
process that woke up after its game was taken over wrote a second row under a seq already
used). The first row of each seq (lowest id: the one every reader ordered first) stays; the
later ones are not deleted silently: each is kept in its game's `setup` under
`duplicate_messages` and the game is flagged, so analyses leave it out and a person can see it.

Revision ID: 0004_fencing
Revises: 0003_media
"""

from __future__ import annotations

import json

import sqlalchemy as sa
from alembic import op

revision = "0004_fencing"
down_revision = "0003_media"
branch_labels = None
depends_on = None

DUPLICATES_FLAG = "store: duplicate messages set aside (0004)"


def _set_aside_duplicates(bind: sa.Connection) -> None:
    dupes = bind.execute(
        sa.text(
            "SELECT m.id, m.game_id, m.seq, m.sender, m.channel, m.text, m.created_at "
            "FROM messages m WHERE EXISTS (SELECT 1 FROM messages f WHERE f.game_id = m.game_id "
            "AND f.seq = m.seq AND f.id < m.id) ORDER BY m.id"
        )
    ).all()
    by_game: dict[int, list[dict[str, object]]] = {}
    for d in dupes:
        by_game.setdefault(d.game_id, []).append(
            {"seq": d.seq, "sender": d.sender, "channel": d.channel, "text": d.text,
             "created_at": d.created_at}
        )  # fmt: skip
    for gid, rows in by_game.items():
        game = bind.execute(
            sa.text("SELECT setup, flags FROM games WHERE id = :g"), {"g": gid}
        ).one()
        setup, flags = (json.loads(v) if isinstance(v, str) else (v or {}) for v in game)
        setup = {**setup, "duplicate_messages": [*setup.get("duplicate_messages", []), *rows]}
        flags = [*flags, DUPLICATES_FLAG] if DUPLICATES_FLAG not in flags else flags
        games = sa.table("games", sa.column("id"), sa.column("setup", sa.JSON),
                         sa.column("flags", sa.JSON))  # fmt: skip
        bind.execute(games.update().where(games.c.id == gid).values(setup=setup, flags=flags))
    if dupes:
        ids = [d.id for d in dupes]
        for i in range(0, len(ids), 1000):
            bind.execute(
                sa.text("DELETE FROM messages WHERE id IN :ids").bindparams(
                    sa.bindparam("ids", expanding=True)
                ),
                {"ids": ids[i : i + 1000]},
            )


def upgrade() -> None:
    _set_aside_duplicates(op.get_bind())
    op.drop_index("ix_messages_game", table_name="messages")
    op.create_index("uq_messages_game_seq", "messages", ["game_id", "seq"], unique=True)
    op.add_column("games", sa.Column("owner_epoch", sa.Integer, nullable=False, server_default="0"))
    op.execute("UPDATE meta SET value = '5' WHERE key = 'schema_version'")


def downgrade() -> None:
    op.drop_column("games", "owner_epoch")
    op.drop_index("uq_messages_game_seq", table_name="messages")
    op.create_index("ix_messages_game", "messages", ["game_id", "seq"])
    op.execute("UPDATE meta SET value = '4' WHERE key = 'schema_version'")
