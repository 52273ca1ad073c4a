"""Generic games: trials with seats/params JSON and row leases; attempts become `games` (with
seats, judgements, worker, flags); messages get a channel; outcomes lose `histories` (the
transcript is kept once, in `messages`) and gain flags.

Old tables are renamed aside, the new ones created under the final names, rows copied (ids
kept, so nothing that points at a trial or game changes), then the old tables dropped. The
table definitions are frozen here: this file must keep meaning what it meant when written.

Revision ID: 0002_generic_games
Revises: 0001_v2
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0002_generic_games"
down_revision = "0001_v2"
branch_labels = None
depends_on = None

OLD = ("outcomes", "messages", "attempts", "trials")  # children first
# The GTT variants that seat a fresh specimen of the target (as of schema v2).
SPECIMEN_VARIANTS = ("gttq", "gttq-queries", "fdgttq", "gdgtt")
CHUNK = 2000


def _tables(md: sa.MetaData) -> dict[str, sa.Table]:
    runs = sa.Table("runs", md, sa.Column("id", sa.String(32), primary_key=True))
    env = sa.Table("environments", md, sa.Column("id", sa.String(32), primary_key=True))
    trials = sa.Table(
        "trials",
        md,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("run_id", sa.String(32), sa.ForeignKey(runs.c.id), nullable=False),
        sa.Column("idx", sa.Integer, nullable=False),
        sa.Column("key", sa.String(300), nullable=False),
        sa.Column("game", sa.String(40), nullable=False),
        sa.Column("seed", sa.BigInteger, nullable=False),
        sa.Column("seats", sa.JSON, nullable=False),
        sa.Column("params", sa.JSON, nullable=False),
        sa.Column("lease_owner", sa.String(80)),
        sa.Column("lease_expires_at", sa.Float),
        sa.UniqueConstraint("run_id", "idx", name="uq_trials_run_idx"),
        sa.Index("ix_trials_run_lease", "run_id", "lease_expires_at"),
    )
    games = sa.Table(
        "games",
        md,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("run_id", sa.String(32), sa.ForeignKey(runs.c.id), nullable=False),
        sa.Column("trial_id", sa.Integer, sa.ForeignKey(trials.c.id)),
        sa.Column("attempt_no", sa.Integer, nullable=False),
        sa.Column("game", sa.String(40), nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("error_kind", sa.String(40)),
        sa.Column("error_message", sa.Text),
        sa.Column("started_at", sa.Float, nullable=False),
        sa.Column("finished_at", sa.Float),
        sa.Column("calls", sa.Integer, nullable=False),
        sa.Column("tokens_in", sa.Integer),
        sa.Column("tokens_out", sa.Integer),
        sa.Column("environment_id", sa.String(32), sa.ForeignKey(env.c.id)),
        sa.Column("worker", sa.String(80)),
        sa.Column("setup", sa.JSON, nullable=False),
        sa.Column("flags", sa.JSON, nullable=False),
        sa.Index("ix_games_trial", "trial_id"),
        sa.Index("ix_games_run", "run_id"),
    )
    seats = sa.Table(
        "seats",
        md,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("game_id", sa.Integer, sa.ForeignKey(games.c.id), nullable=False),
        sa.Column("seat", sa.String(60), nullable=False),
        sa.Column("agent", sa.String(200), nullable=False),
        sa.Column("kind", sa.String(20), nullable=False),
        sa.Column("participant", sa.String(200)),
        sa.Column("details", sa.JSON, nullable=False),
        sa.UniqueConstraint("game_id", "seat", name="uq_seats_game_seat"),
    )
    messages = sa.Table(
        "messages",
        md,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("game_id", sa.Integer, sa.ForeignKey(games.c.id), nullable=False),
        sa.Column("seq", sa.Integer, nullable=False),
        sa.Column("channel", sa.String(60), nullable=False),
        sa.Column("sender", sa.String(60), nullable=False),
        sa.Column("visible_to", sa.String(300), nullable=False),
        sa.Column("phase", sa.String(40), nullable=False),
        sa.Column("text", sa.Text, nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("latency_s", sa.Float),
        sa.Column("tokens_in", sa.Integer),
        sa.Column("tokens_out", sa.Integer),
        sa.Column("backend", sa.String(40)),
        sa.Column("model", sa.String(300)),
        sa.Column("provider", sa.String(200)),
        sa.Index("ix_messages_game", "game_id", "seq"),
    )
    judgements = sa.Table(
        "judgements",
        md,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("game_id", sa.Integer, sa.ForeignKey(games.c.id), nullable=False),
        sa.Column("judge", sa.String(60), nullable=False),
        sa.Column("kind", sa.String(20), nullable=False),
        sa.Column("verdict", sa.String(60)),
        sa.Column("confidence", sa.Float),
        sa.Column("reason", sa.Text),
        sa.Column("choice", sa.String(60)),
        sa.Column("tie", sa.Boolean, nullable=False),
        sa.Column("turn", sa.Integer),
        sa.Column("created_at", sa.Float),
        sa.Column("details", sa.JSON, nullable=False),
        sa.Index("ix_judgements_game", "game_id"),
    )
    outcomes = sa.Table(
        "outcomes",
        md,
        sa.Column("trial_id", sa.Integer, sa.ForeignKey(trials.c.id), primary_key=True),
        sa.Column("game_id", sa.Integer, sa.ForeignKey(games.c.id), nullable=False),
        sa.Column("status", sa.String(30), nullable=False),
        sa.Column("verdict", sa.Integer),
        sa.Column("correct", sa.Boolean),
        sa.Column("distinguisher_turns", sa.Integer),
        sa.Column("unknown_turns", sa.Integer),
        sa.Column("first_distinguisher_message", sa.Text),
        sa.Column("raw_final_message", sa.Text),
        sa.Column("actor_prompt", sa.Text),
        sa.Column("routes", sa.JSON, nullable=False),
        sa.Column("details", sa.JSON, nullable=False),
        sa.Column("flags", sa.JSON, nullable=False),
        sa.Column("finished_at", sa.Float, nullable=False),
    )
    return {
        "trials": trials,
        "games": games,
        "seats": seats,
        "messages": messages,
        "judgements": judgements,
        "outcomes": outcomes,
    }


def _set_aside(bind: sa.Connection) -> None:
    """Rename the v2 tables to <name>_v2; on PostgreSQL also their indexes and sequences,
    whose names live in the schema and would clash with the new tables'."""
    for name in OLD:
        op.rename_table(name, f"{name}_v2")
    if bind.dialect.name != "postgresql":
        return
    for name in OLD:
        table = f"{name}_v2"
        for (index,) in bind.execute(
            sa.text("SELECT indexname FROM pg_indexes WHERE tablename = :t"), {"t": table}
        ):
            op.execute(f'ALTER INDEX "{index}" RENAME TO "{index}_v2"')
        if name == "outcomes":
            continue  # keyed by trial_id: no sequence
        seq = bind.execute(
            sa.text("SELECT pg_get_serial_sequence(:t, 'id')"), {"t": table}
        ).scalar()
        if seq:
            op.execute(f"ALTER SEQUENCE {seq} RENAME TO {name}_v2_id_seq")


def _copy_trials(bind: sa.Connection, trials: sa.Table) -> dict[int, dict[str, str]]:
    """GTT's columns become seats and params; returns trial id -> seats for the games."""
    seats_of: dict[int, dict[str, str]] = {}
    rows = bind.execute(sa.text("SELECT * FROM trials_v2 ORDER BY id")).mappings()
    batch: list[dict[str, Any]] = []
    for r in rows:
        unknown = r["target"] if r["x_is_target"] else r["actor"]
        seated = {"distinguisher": r["distinguisher"], "unknown": unknown}
        if r["variant"] in SPECIMEN_VARIANTS:
            seated["specimen"] = r["target"]
        seats_of[r["id"]] = seated
        batch.append(
            {
                "id": r["id"],
                "run_id": r["run_id"],
                "idx": r["idx"],
                "key": r["key"],
                "game": "gtt",
                "seed": r["seed"],
                "seats": seated,
                "params": {
                    "variant": r["variant"],
                    "actor": r["actor"],
                    "distinguisher": r["distinguisher"],
                    "target": r["target"],
                    "x_is_target": bool(r["x_is_target"]),
                    "budget": r["budget"],
                },
            }
        )
    for i in range(0, len(batch), CHUNK):
        bind.execute(sa.insert(trials), batch[i : i + CHUNK])
    return seats_of


def upgrade() -> None:
    bind = op.get_bind()
    # A JSON literal: PostgreSQL needs the cast; SQLite would turn CAST(... AS JSON) into 0.
    empty_obj, empty_list = (
        ("CAST('{}' AS JSON)", "CAST('[]' AS JSON)")
        if bind.dialect.name == "postgresql"
        else ("'{}'", "'[]'")
    )
    _set_aside(bind)
    tables = _tables(sa.MetaData())
    for name in ("trials", "games", "seats", "messages", "judgements", "outcomes"):
        tables[name].create(bind)

    seats_of = _copy_trials(bind, tables["trials"])
    op.execute(
        "INSERT INTO games (id, run_id, trial_id, attempt_no, game, status, error_kind, "
        "error_message, started_at, finished_at, calls, tokens_in, tokens_out, environment_id, "
        "worker, setup, flags) "
        "SELECT a.id, t.run_id, a.trial_id, a.attempt_no, 'gtt', "
        "CASE WHEN a.status = 'ok' THEN 'finished' ELSE 'failed' END, a.error_kind, "
        "a.error_message, a.started_at, a.finished_at, a.calls, a.tokens_in, a.tokens_out, "
        f"a.environment_id, NULL, {empty_obj}, {empty_list} "
        "FROM attempts_v2 a JOIN trials_v2 t ON t.id = a.trial_id"
    )
    game_trials = bind.execute(sa.text("SELECT id, trial_id FROM attempts_v2 ORDER BY id"))
    seat_rows = [
        {"game_id": gid, "seat": seat, "agent": agent, "kind": "agent", "details": {}}
        for gid, tid in game_trials
        for seat, agent in seats_of[tid].items()
    ]
    for i in range(0, len(seat_rows), CHUNK):
        bind.execute(sa.insert(tables["seats"]), seat_rows[i : i + CHUNK])
    op.execute(
        "INSERT INTO messages (id, game_id, seq, channel, sender, visible_to, phase, text, "
        "created_at, latency_s, tokens_in, tokens_out, backend, model, provider) "
        "SELECT id, attempt_id, seq, 'main', sender, visible_to, phase, text, created_at, "
        "latency_s, tokens_in, tokens_out, backend, model, provider FROM messages_v2"
    )
    # `histories` is not copied: it repeated what the messages say (Store rebuilds it).
    op.execute(
        "INSERT INTO outcomes (trial_id, game_id, status, verdict, correct, "
        "distinguisher_turns, unknown_turns, first_distinguisher_message, raw_final_message, "
        "actor_prompt, routes, details, flags, finished_at) "
        "SELECT trial_id, attempt_id, status, verdict, correct, distinguisher_turns, "
        "unknown_turns, first_distinguisher_message, raw_final_message, actor_prompt, routes, "
        f"details, {empty_list}, finished_at FROM outcomes_v2"
    )
    for name in OLD:
        op.drop_table(f"{name}_v2")
    if bind.dialect.name == "postgresql":
        # Rows were copied with their ids: move the sequences past them.
        for name in ("trials", "games", "messages"):
            op.execute(
                f"SELECT setval(pg_get_serial_sequence('{name}', 'id'), "
                f"COALESCE((SELECT MAX(id) FROM {name}), 0) + 1, false)"
            )
    op.execute("UPDATE meta SET value = '3' WHERE key = 'schema_version'")


def downgrade() -> None:
    raise NotImplementedError("the v2 store kept each transcript twice; there is no way back")
