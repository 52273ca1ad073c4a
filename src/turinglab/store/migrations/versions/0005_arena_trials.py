"""Arena games become trials: each game of an arena run stored without a trial (its result's
status and `correct` packed into `games.setup`) gets the trial it played, appended to its run
(index: the game's id, as store/arena_games.py appends them now), and, when it has ended, the
outcome row a batch game would have written. `setup` keeps only the design facts. Nothing
else changes: the records, exports and study files read the same
(tests/arena/core/test_arena_trials.py opens a store written before this revision);
`turinglab runs` now counts the arena's games.

Data only: the tables keep their shape, so the schema version stays 5.

Revision ID: 0005_arena_trials
Revises: 0004_fencing
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005_arena_trials"
down_revision = "0004_fencing"
branch_labels = None
depends_on = None

ARENA_GAME, SURVEY_GAME, PLAYING, FLAGGED = "arena", "arena-survey", "playing", "flagged"
RESULT_STATUS = "arena_status"  # store/arena_records.py: the status flags turned "flagged"
# Lightweight tables as of this revision (JSON columns read and written as JSON).
runs = sa.table("runs", sa.column("id"), sa.column("game"), sa.column("n_planned"))
trials = sa.table(
    "trials",
    sa.column("id"),
    sa.column("run_id"),
    sa.column("idx"),
    sa.column("key"),
    sa.column("game"),
    sa.column("seed"),
    sa.column("seats", sa.JSON),
    sa.column("params", sa.JSON),
)
games = sa.table(
    "games",
    sa.column("id"),
    sa.column("run_id"),
    sa.column("trial_id"),
    sa.column("game"),
    sa.column("status"),
    sa.column("started_at"),
    sa.column("finished_at"),
    sa.column("setup", sa.JSON),
    sa.column("flags", sa.JSON),
)
outcomes = sa.table(
    "outcomes",
    sa.column("trial_id"),
    sa.column("game_id"),
    sa.column("status"),
    sa.column("correct"),
    sa.column("routes", sa.JSON),
    sa.column("details", sa.JSON),
    sa.column("flags", sa.JSON),
    sa.column("finished_at"),
)


def upgrade() -> None:
    bind = op.get_bind()
    arena_runs = sa.select(runs.c.id).where(runs.c.game == ARENA_GAME)
    found = bind.execute(
        sa.select(games)
        .where(
            games.c.run_id.in_(arena_runs),
            games.c.trial_id.is_(None),
            games.c.game != SURVEY_GAME,
        )
        .order_by(games.c.id)
    ).all()
    touched: set[str] = set()
    for g in found:
        setup = dict(g.setup or {})
        trial = setup.get("trial")
        if not trial:
            continue  # not a game row of the arena (nothing to plan it from)
        tid = bind.execute(
            trials.insert()
            .values(
                run_id=g.run_id,
                idx=g.id,
                key=str(trial["key"]),
                game=str(trial["game"]),
                seed=int(trial["seed"]),
                seats=dict(trial["seats"]),
                params=dict(trial.get("params") or {}),
            )
            .returning(trials.c.id)
        ).scalar_one()
        status, correct = setup.pop("status", None), setup.pop("correct", None)
        bind.execute(games.update().where(games.c.id == g.id).values(trial_id=tid, setup=setup))
        touched.add(g.run_id)
        if g.status == PLAYING:
            continue  # it ends later, through the store, with its outcome
        flags = list(g.flags or [])
        status = status or g.status
        stored = FLAGGED if flags else status
        bind.execute(
            outcomes.insert().values(
                trial_id=tid,
                game_id=g.id,
                status=stored,
                correct=correct,
                routes={},
                details={} if stored == status else {RESULT_STATUS: status},
                flags=flags,
                finished_at=g.finished_at if g.finished_at is not None else g.started_at,
            )
        )
    for run_id in touched:
        count = sa.select(sa.func.count()).where(trials.c.run_id == run_id).scalar_subquery()
        bind.execute(runs.update().where(runs.c.id == run_id).values(n_planned=count))


def downgrade() -> None:
    """Back to games without trials, their result in `setup` again."""
    bind = op.get_bind()
    arena_runs = sa.select(runs.c.id).where(runs.c.game == ARENA_GAME)
    rows = bind.execute(
        sa.select(
            games, outcomes.c.status.label("o_status"), outcomes.c.correct, outcomes.c.details
        )
        .outerjoin(outcomes, outcomes.c.game_id == games.c.id)
        .where(games.c.run_id.in_(arena_runs), games.c.trial_id.is_not(None))
    ).all()
    for g in rows:
        setup = dict(g.setup or {})
        if g.o_status is not None:
            setup["status"] = (g.details or {}).get(RESULT_STATUS, g.o_status)
            setup["correct"] = g.correct
        bind.execute(games.update().where(games.c.id == g.id).values(trial_id=None, setup=setup))
        bind.execute(outcomes.delete().where(outcomes.c.trial_id == g.trial_id))
        bind.execute(trials.delete().where(trials.c.id == g.trial_id))
    bind.execute(runs.update().where(runs.c.game == ARENA_GAME).values(n_planned=0))
