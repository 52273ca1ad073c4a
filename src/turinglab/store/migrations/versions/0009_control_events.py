"""`control_events`: a live arena game's typed control events (games/control_log.py), stored
through the same fenced writer as its messages, so a process that takes the game over rebuilds
everything it decided (preferences, verdict requests, ends, pauses, input ids, random draws).

Stores written before this revision have no such rows: their games rebuild from messages only,
as they did.

Revision ID: 0009_control_events
Revises: 0008_trial_content_hash
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009_control_events"
down_revision = "0008_trial_content_hash"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "control_events",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("game_id", sa.Integer, sa.ForeignKey("games.id"), nullable=False),
        sa.Column("idx", sa.Integer, nullable=False),
        sa.Column("after_seq", sa.Integer, nullable=False),
        sa.Column("kind", sa.String(30), nullable=False),
        sa.Column("data", sa.JSON, nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
    )
    op.create_index("uq_control_events_game_idx", "control_events", ["game_id", "idx"], unique=True)
    op.execute("UPDATE meta SET value = '9' WHERE key = 'schema_version'")


def downgrade() -> None:
    op.drop_index("uq_control_events_game_idx", "control_events")
    op.drop_table("control_events")
    op.execute("UPDATE meta SET value = '8' WHERE key = 'schema_version'")
