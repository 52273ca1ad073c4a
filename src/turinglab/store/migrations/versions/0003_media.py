"""Images in the store: a `media` table (content-addressed image bytes) and `messages.images`
(the references a message carried), so images live with the messages they belong to.

Revision ID: 0003_media
Revises: 0002_generic_games
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003_media"
down_revision = "0002_generic_games"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("messages", sa.Column("images", sa.JSON))
    op.create_table(
        "media",
        sa.Column("ref", sa.String(80), primary_key=True),
        sa.Column("media_type", sa.String(20), nullable=False),
        sa.Column("size", sa.Integer, nullable=False),
        sa.Column("data", sa.LargeBinary, nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
    )
    op.execute("UPDATE meta SET value = '4' WHERE key = 'schema_version'")


def downgrade() -> None:
    op.drop_table("media")
    op.drop_column("messages", "images")
    op.execute("UPDATE meta SET value = '3' WHERE key = 'schema_version'")
