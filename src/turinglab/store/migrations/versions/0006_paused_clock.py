"""A live arena game's clock stands still while its messages cannot be saved (PausableClock);
`games.paused_s` keeps how long it has stood still, so a process that takes the game over
gives its people the same time left as its first owner did (store/arena_games.py).

Every game written before this revision reads 0 (its clock never stood still, or no one
knew): what such a store reports does not change.

Revision ID: 0006_paused_clock
Revises: 0005_arena_trials
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006_paused_clock"
down_revision = "0005_arena_trials"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("games", sa.Column("paused_s", sa.Float, nullable=False, server_default="0"))
    op.execute("UPDATE meta SET value = '6' WHERE key = 'schema_version'")


def downgrade() -> None:
    op.drop_column("games", "paused_s")
    op.execute("UPDATE meta SET value = '5' WHERE key = 'schema_version'")
