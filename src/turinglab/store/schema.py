"""Tables. A trial is planned once; each try at playing it is an attempt; a finished attempt
writes the trial's one outcome. Failed attempts keep their error and partial transcript."""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Column,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
)

metadata = MetaData()

# Bump when a table changes shape; a store written with another version is refused, not misread.
SCHEMA_VERSION = 2

meta = Table(
    "meta",
    metadata,
    Column("key", String(40), primary_key=True),
    Column("value", String(200), nullable=False),
)

runs = Table(
    "runs",
    metadata,
    Column("id", String(32), primary_key=True),  # hash of what determines the results
    Column("name", String(200), nullable=False),
    Column("game", String(40), nullable=False),
    Column("status", String(30), nullable=False),
    Column("config", JSON, nullable=False),
    Column("identity", JSON, nullable=False),
    Column("n_planned", Integer, nullable=False),
    Column("created_at", Float, nullable=False),
    Column("updated_at", Float, nullable=False),
)

trials = Table(
    "trials",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("run_id", String(32), ForeignKey("runs.id"), nullable=False),
    Column("idx", Integer, nullable=False),
    Column("key", String(300), nullable=False),
    Column("variant", String(40), nullable=False),
    Column("actor", String(200), nullable=False),
    Column("distinguisher", String(200), nullable=False),
    Column("target", String(200), nullable=False),
    Column("x_is_target", Boolean, nullable=False),
    Column("budget", Integer),
    Column("seed", BigInteger, nullable=False),
    UniqueConstraint("run_id", "idx"),
)

environments = Table(
    "environments",
    metadata,
    Column("id", String(32), primary_key=True),  # hash of the block
    Column("data", JSON, nullable=False),
)

attempts = Table(
    "attempts",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("trial_id", Integer, ForeignKey("trials.id"), nullable=False),
    Column("attempt_no", Integer, nullable=False),
    Column("status", String(20), nullable=False),  # "ok" | "failed"
    Column("error_kind", String(40)),
    Column("error_message", Text),
    Column("started_at", Float, nullable=False),
    Column("finished_at", Float, nullable=False),
    Column("calls", Integer, nullable=False),
    Column("tokens_in", Integer),
    Column("tokens_out", Integer),
    Column("environment_id", String(32), ForeignKey("environments.id")),
    Index("ix_attempts_trial", "trial_id"),
)

messages = Table(
    "messages",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("attempt_id", Integer, ForeignKey("attempts.id"), nullable=False),
    Column("seq", Integer, nullable=False),
    Column("sender", String(60), nullable=False),  # a seat ("distinguisher", ...) or "game"
    Column("visible_to", String(300), nullable=False),  # comma-separated seats
    Column("phase", String(40), nullable=False),
    Column("text", Text, nullable=False),
    Column("created_at", Float, nullable=False),
    Column("latency_s", Float),
    Column("tokens_in", Integer),
    Column("tokens_out", Integer),
    Column("backend", String(40)),
    Column("model", String(300)),
    Column("provider", String(200)),
    Index("ix_messages_attempt", "attempt_id"),
)

outcomes = Table(
    "outcomes",
    metadata,
    # The primary key on trial_id is what makes "finished exactly once" a database fact.
    Column("trial_id", Integer, ForeignKey("trials.id"), primary_key=True),
    Column("attempt_id", Integer, ForeignKey("attempts.id"), nullable=False),
    Column("status", String(30), nullable=False),  # answered | opening-answer | no-answer
    Column("verdict", Integer),  # parsed answer, 0/1, or NULL
    Column("correct", Boolean),
    Column("distinguisher_turns", Integer, nullable=False),
    Column("unknown_turns", Integer, nullable=False),
    Column("first_distinguisher_message", Text),
    Column("raw_final_message", Text),
    Column("actor_prompt", Text),
    Column("histories", JSON, nullable=False),  # seat -> [{role, content}], each seat's own view
    Column("routes", JSON, nullable=False),  # seat -> {agent, backend, model, base_url, provider}
    Column("details", JSON, nullable=False),
    Column("finished_at", Float, nullable=False),
)
