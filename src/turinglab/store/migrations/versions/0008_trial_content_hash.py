"""`trials.content_hash`: a hash of what a trial is, so that a run can reuse the outcome of
the same trial played by another run of the store (a study that grows plays only its new
trials; runner/plan.py says what the hash covers).

Trials planned before this revision read NULL: they are given their hash when their run is
next resumed (the config that plans them is needed to compute it). Run ids do not change.

Revision ID: 0008_trial_content_hash
Revises: 0007_seats_participant
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008_trial_content_hash"
down_revision = "0007_seats_participant"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("trials", sa.Column("content_hash", sa.String(64)))
    op.create_index("ix_trials_content_hash", "trials", ["content_hash"])
    op.execute("UPDATE meta SET value = '8' WHERE key = 'schema_version'")


def downgrade() -> None:
    op.drop_index("ix_trials_content_hash", "trials")
    if op.get_bind().dialect.name == "sqlite":
        # SQLite (>= 3.35) drops a column in place; a batch copy of `trials` would DROP the
        # table that games and seats reference, which foreign keys refuse.
        op.execute("ALTER TABLE trials DROP COLUMN content_hash")
    else:
        op.drop_column("trials", "content_hash")
    op.execute("UPDATE meta SET value = '7' WHERE key = 'schema_version'")
