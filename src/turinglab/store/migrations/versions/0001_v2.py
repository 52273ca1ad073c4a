"""Baseline: the store schema v2 that the first release wrote (runs, trials with GTT columns,
attempts, messages, outcomes with a second copy of every transcript in `histories`).

Nothing to do: such stores exist already and are stamped at this revision when first opened.

Revision ID: 0001_v2
Revises:
"""

from __future__ import annotations

revision = "0001_v2"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    raise NotImplementedError("0001_v2 is the oldest schema")
