"""`arena_processes`: an arena process cut off from Redis says in the store that it is alive,
and one that reaches Redis and finds it missing there notes that it did (arena/cluster,
`ClusterHeartbeat._cut_off`), so a process cut off alone is told apart from Redis down for all.

Revision ID: 0010_arena_processes
Revises: 0009_control_events
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010_arena_processes"
down_revision = "0009_control_events"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "arena_processes",
        sa.Column("run_id", sa.String(32), primary_key=True),
        sa.Column("process", sa.String(100), primary_key=True),
        sa.Column("silent_at", sa.Float),
        sa.Column("noticed_at", sa.Float),
    )
    op.execute("UPDATE meta SET value = '10' WHERE key = 'schema_version'")


def downgrade() -> None:
    op.drop_table("arena_processes")
    op.execute("UPDATE meta SET value = '9' WHERE key = 'schema_version'")
