"""An index on `seats.participant`: a person's games are looked up as they reconnect (the game
they are in, when Redis has lost their route) and as their round book is rebuilt.

Revision ID: 0007_seats_participant
Revises: 0006_paused_clock
"""

from __future__ import annotations

from alembic import op

revision = "0007_seats_participant"
down_revision = "0006_paused_clock"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_seats_participant", "seats", ["participant"])
    op.execute("UPDATE meta SET value = '7' WHERE key = 'schema_version'")


def downgrade() -> None:
    op.drop_index("ix_seats_participant", "seats")
    op.execute("UPDATE meta SET value = '6' WHERE key = 'schema_version'")
