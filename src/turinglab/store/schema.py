"""Tables, the same for every game. A trial is planned once; each try at playing it is a game;
the game that finishes the trial writes the trial's one outcome. Every message is a row the
moment it is said, so a transcript is stored once and survives a crash mid-game.

The shape changes only through a migration in `store/migrations/` (Alembic); this module is the
head those migrations arrive at, and what a new store is created from.
"""

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
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
)

metadata = MetaData()

# Kept in `meta` for readers of the file; Alembic's revision is what upgrades act on.
SCHEMA_VERSION = 10

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
    Column("updated_at", Float, nullable=False),  # also a heartbeat while a worker runs it
)

trials = Table(
    "trials",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("run_id", String(32), ForeignKey("runs.id"), nullable=False),
    Column("idx", Integer, nullable=False),
    Column("key", String(300), nullable=False),
    Column("game", String(40), nullable=False),
    Column("seed", BigInteger, nullable=False),
    Column("seats", JSON, nullable=False),  # seat -> agent name
    # Game-specific design facts (GTT: variant, actor, distinguisher, target, x_is_target,
    # budget): JSON, so that a new game needs no new columns.
    Column("params", JSON, nullable=False),
    # A row lease: the worker playing the trial and until when its claim holds.
    Column("lease_owner", String(80)),
    Column("lease_expires_at", Float),
    # A hash of what the trial is (its agents as they answer, prompts, rules, seats, seed,
    # key; runner/plan.py): a run finds here the trials another run of the store already
    # played, so a study that grows plays only its new ones. NULL: planned before schema 8.
    Column("content_hash", String(64)),
    UniqueConstraint("run_id", "idx", name="uq_trials_run_idx"),
    Index("ix_trials_run_lease", "run_id", "lease_expires_at"),
    Index("ix_trials_content_hash", "content_hash"),
)

environments = Table(
    "environments",
    metadata,
    Column("id", String(32), primary_key=True),  # hash of the block
    Column("data", JSON, nullable=False),
)

games = Table(
    "games",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("run_id", String(32), ForeignKey("runs.id"), nullable=False),
    Column("trial_id", Integer, ForeignKey("trials.id")),  # NULL: an arena survey-only row
    Column("attempt_no", Integer, nullable=False),
    Column("game", String(40), nullable=False),
    # playing | finished | failed | flagged | superseded | interrupted
    Column("status", String(20), nullable=False),
    Column("error_kind", String(40)),
    Column("error_message", Text),
    Column("started_at", Float, nullable=False),
    Column("finished_at", Float),
    Column("calls", Integer, nullable=False),
    Column("tokens_in", Integer),
    Column("tokens_out", Integer),
    Column("environment_id", String(32), ForeignKey("environments.id")),
    Column("worker", String(80)),
    Column("setup", JSON, nullable=False),
    Column("flags", JSON, nullable=False),
    # The fencing token of a live arena game: a takeover bumps it in the UPDATE that claims the
    # game, and every later write of the game is made only by whoever holds the current value.
    Column("owner_epoch", Integer, nullable=False, server_default="0"),
    # Seconds a live arena game's clock stood still while saving was delayed: a takeover
    # restores them, so the game's time limit does not shrink with its owner.
    Column("paused_s", Float, nullable=False, server_default="0"),
    Index("ix_games_trial", "trial_id"),
    Index("ix_games_run", "run_id"),
)

seats = Table(
    "seats",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("game_id", Integer, ForeignKey("games.id"), nullable=False),
    Column("seat", String(60), nullable=False),
    Column("agent", String(200), nullable=False),
    Column("kind", String(20), nullable=False),  # agent | human | stand-in
    Column("participant", String(200)),  # a person's id, for human seats
    Column("details", JSON, nullable=False),
    UniqueConstraint("game_id", "seat", name="uq_seats_game_seat"),
    # A person's games (their rounds, the game they are in): looked up as they reconnect.
    Index("ix_seats_participant", "participant"),
)

messages = Table(
    "messages",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("game_id", Integer, ForeignKey("games.id"), nullable=False),
    Column("seq", Integer, nullable=False),
    Column("channel", String(60), nullable=False),
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
    Column("images", JSON),  # references into `media` of the images it carried; NULL: none
    # Unique: a seq is said once; a second row under it (a stale writer) is refused.
    Index("uq_messages_game_seq", "game_id", "seq", unique=True),
)

# A live game's control events (games/control_log.py): what it decided besides its messages,
# numbered per game from 0 (`idx`, unique: a stale writer's second row is refused), each after
# the `after_seq` messages said before it, so a rebuilt game replays both in order.
control_events = Table(
    "control_events",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("game_id", Integer, ForeignKey("games.id"), nullable=False),
    Column("idx", Integer, nullable=False),
    Column("after_seq", Integer, nullable=False),
    Column("kind", String(30), nullable=False),
    Column("data", JSON, nullable=False),
    Column("created_at", Float, nullable=False),
    Index("uq_control_events_game_idx", "game_id", "idx", unique=True),
)

# An arena process that cannot reach Redis says here that it lives (`silent_at`, each
# heartbeat while Redis refuses it); a process that reaches Redis and finds its heartbeat
# missing there notes that it saw so (`noticed_at`). Redis-wide outage: nobody notices.
arena_processes = Table(
    "arena_processes",
    metadata,
    Column("run_id", String(32), primary_key=True),
    Column("process", String(100), primary_key=True),
    Column("silent_at", Float),
    Column("noticed_at", Float),
)

# Images of messages, stored once under their content hash ("<sha256>.png|.jpg"), in the same
# database as the messages, so every process of a multi-process arena can serve them.
media = Table(
    "media",
    metadata,
    Column("ref", String(80), primary_key=True),
    Column("media_type", String(20), nullable=False),
    Column("size", Integer, nullable=False),
    Column("data", LargeBinary, nullable=False),
    Column("created_at", Float, nullable=False),
)

judgements = Table(
    "judgements",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("game_id", Integer, ForeignKey("games.id"), nullable=False),
    Column("judge", String(60), nullable=False),
    Column("kind", String(20), nullable=False),  # verdict | preference
    Column("verdict", String(60)),
    Column("confidence", Float),
    Column("reason", Text),
    Column("choice", String(60)),
    Column("tie", Boolean, nullable=False),
    Column("turn", Integer),
    Column("created_at", Float),
    Column("details", JSON, nullable=False),
    Index("ix_judgements_game", "game_id"),
)

outcomes = Table(
    "outcomes",
    metadata,
    # The primary key on trial_id is what makes "finished exactly once" a database fact.
    Column("trial_id", Integer, ForeignKey("trials.id"), primary_key=True),
    Column("game_id", Integer, ForeignKey("games.id"), nullable=False),
    Column("status", String(30), nullable=False),  # the game's; "flagged" is excluded
    Column("verdict", Integer),  # GTT: the parsed answer, 0/1, or NULL
    Column("correct", Boolean),
    # GTT's summary columns (NULL for other games): kept as columns because every GTT
    # analysis reads them and they are small; the transcript itself is only in `messages`.
    Column("distinguisher_turns", Integer),
    Column("unknown_turns", Integer),
    Column("first_distinguisher_message", Text),
    Column("raw_final_message", Text),
    Column("actor_prompt", Text),
    Column("routes", JSON, nullable=False),  # seat -> {agent, backend, model, base_url, provider}
    Column("details", JSON, nullable=False),
    Column("flags", JSON, nullable=False),
    Column("finished_at", Float, nullable=False),
)

# The outcome columns that only some games fill (GTT); the rest of a result goes to `details`.
OUTCOME_EXTRA_COLUMNS = (
    "distinguisher_turns",
    "unknown_turns",
    "first_distinguisher_message",
    "raw_final_message",
    "actor_prompt",
)
