"""The store: SQLite by default, PostgreSQL (or anything SQLAlchemy speaks) by URL.

Writes are synchronous and small: one transaction per finished attempt, so a crash loses at
most the conversations still in flight. The runner calls them from one writer thread.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event, func, insert, inspect, select, update
from sqlalchemy.exc import IntegrityError

from turinglab.games.table import TranscriptMessage
from turinglab.runner.plan import TrialSpec
from turinglab.store.schema import (
    SCHEMA_VERSION,
    attempts,
    environments,
    messages,
    meta,
    metadata,
    outcomes,
    runs,
    trials,
)

DEFAULT_STORE = "turinglab.db"


class StoreError(RuntimeError):
    """The store cannot be used as it is (e.g. written by an incompatible version)."""


def store_url(location: str | None) -> str:
    """A database URL from a URL or a plain file path (a path means SQLite)."""
    location = location or DEFAULT_STORE
    if "://" not in location:
        return f"sqlite:///{Path(location).expanduser()}"
    # Plain postgresql:// would pick psycopg2, which we do not ship; psycopg 3 is installed.
    for prefix in ("postgresql://", "postgres://"):
        if location.startswith(prefix):
            return "postgresql+psycopg://" + location[len(prefix) :]
    return location


@dataclass
class AttemptRecord:
    trial_id: int
    attempt_no: int
    started_at: float
    finished_at: float
    messages: list[TranscriptMessage]
    environment_id: str | None
    error_kind: str | None = None
    error_message: str | None = None
    outcome: dict[str, Any] | None = None  # present iff the attempt finished the trial

    @property
    def ok(self) -> bool:
        return self.outcome is not None


@dataclass
class PendingTrial:
    trial_id: int
    spec: TrialSpec
    failed_attempts: int


@dataclass
class RunInfo:
    id: str
    name: str
    game: str
    status: str
    n_planned: int
    created_at: float
    updated_at: float
    finished: int = 0
    failed_attempts: int = 0
    config: dict[str, Any] = field(default_factory=dict)


class Store:
    def __init__(self, location: str | None = None) -> None:
        self.url = store_url(location)
        self.engine: Engine = create_engine(self.url, future=True)
        if self.engine.dialect.name == "sqlite":
            event.listen(self.engine, "connect", _sqlite_pragmas)
        self._check_schema()

    def _check_schema(self) -> None:
        existing = set(inspect(self.engine).get_table_names())
        metadata.create_all(self.engine)
        with self.engine.begin() as conn:
            row = conn.execute(select(meta.c.value).where(meta.c.key == "schema_version")).first()
            if row is None and "runs" in existing:
                found = "1"  # stores from before the version row
            elif row is None:
                conn.execute(insert(meta).values(key="schema_version", value=str(SCHEMA_VERSION)))
                return
            else:
                found = row.value
        if found != str(SCHEMA_VERSION):
            raise StoreError(
                f"{self.url} was written with store schema {found}; this turinglab uses schema "
                f"{SCHEMA_VERSION}. Use a new store (--store) or export it with the version "
                "that wrote it."
            )

    def close(self) -> None:
        self.engine.dispose()

    # ---- runs -------------------------------------------------------------------------------

    def find_run(self, run_id: str) -> RunInfo | None:
        found = self.list_runs(runs.c.id == run_id)
        return found[0] if found else None

    def runs_named(self, name: str) -> list[RunInfo]:
        return self.list_runs(runs.c.name == name)

    def create_run(
        self,
        run_id: str,
        name: str,
        game: str,
        config: dict[str, Any],
        identity: dict[str, Any],
        specs: list[TrialSpec],
    ) -> None:
        now = time.time()
        with self.engine.begin() as conn:
            conn.execute(
                insert(runs).values(
                    id=run_id,
                    name=name,
                    game=game,
                    status="planned",
                    config=config,
                    identity=identity,
                    n_planned=len(specs),
                    created_at=now,
                    updated_at=now,
                )
            )
            conn.execute(insert(trials), [_trial_row(run_id, s) for s in specs])

    def add_trials(self, run_id: str, specs: list[TrialSpec]) -> None:
        """Plan more trials into an existing run (adaptive sampling)."""
        if not specs:
            return
        with self.engine.begin() as conn:
            conn.execute(insert(trials), [_trial_row(run_id, s) for s in specs])
            conn.execute(
                update(runs)
                .where(runs.c.id == run_id)
                .values(n_planned=runs.c.n_planned + len(specs), updated_at=time.time())
            )

    def planned_per_cell(self, run_id: str) -> dict[tuple[Any, ...], int]:
        """Trials planned per (variant, actor, distinguisher, target, budget)."""
        cols = (trials.c.variant, trials.c.actor, trials.c.distinguisher, trials.c.target)
        query = (
            select(*cols, trials.c.budget, func.count().label("n"))
            .where(trials.c.run_id == run_id)
            .group_by(*cols, trials.c.budget)
        )
        with self.engine.connect() as conn:
            return {tuple(row[:5]): int(row.n) for row in conn.execute(query)}

    def set_run_status(self, run_id: str, status: str) -> None:
        with self.engine.begin() as conn:
            conn.execute(
                update(runs)
                .where(runs.c.id == run_id)
                .values(status=status, updated_at=time.time())
            )

    def list_runs(self, *where: Any) -> list[RunInfo]:
        """Runs with their finished and failed counts; `where` narrows them in SQL."""
        finished = (
            select(trials.c.run_id, func.count().label("n"))
            .join(outcomes, outcomes.c.trial_id == trials.c.id)
            .group_by(trials.c.run_id)
            .subquery()
        )
        failed = (
            select(trials.c.run_id, func.count().label("n"))
            .join(attempts, attempts.c.trial_id == trials.c.id)
            .where(attempts.c.status == "failed")
            .group_by(trials.c.run_id)
            .subquery()
        )
        query = (
            select(runs, finished.c.n.label("finished"), failed.c.n.label("failed"))
            .outerjoin(finished, finished.c.run_id == runs.c.id)
            .outerjoin(failed, failed.c.run_id == runs.c.id)
            .where(*where)
            .order_by(runs.c.created_at)
        )
        with self.engine.connect() as conn:
            return [
                RunInfo(
                    id=row.id,
                    name=row.name,
                    game=row.game,
                    status=row.status,
                    n_planned=row.n_planned,
                    created_at=row.created_at,
                    updated_at=row.updated_at,
                    finished=row.finished or 0,
                    failed_attempts=row.failed or 0,
                    config=row.config,
                )
                for row in conn.execute(query)
            ]

    def resolve_run(self, ref: str) -> RunInfo:
        """A run by id, unique id prefix, or name (the newest run of that name)."""
        all_runs = self.list_runs()
        exact = [r for r in all_runs if r.id == ref]
        by_prefix = [r for r in all_runs if r.id.startswith(ref)]
        by_name = [r for r in all_runs if r.name == ref]
        if exact:
            return exact[0]
        if len(by_prefix) == 1:
            return by_prefix[0]
        if by_name:
            return by_name[-1]
        if len(by_prefix) > 1:
            raise KeyError(f"run id prefix {ref!r} is ambiguous: {[r.id for r in by_prefix]}")
        raise KeyError(f"no run {ref!r} in {self.url} (see `turinglab runs`)")

    # ---- trials and attempts ------------------------------------------------------------------

    def pending_trials(self, run_id: str, max_attempts: int) -> tuple[list[PendingTrial], int]:
        """Unfinished trials that still have attempts left, and how many have none left."""
        failed = (
            select(attempts.c.trial_id, func.count().label("n"))
            .where(attempts.c.status == "failed")
            .group_by(attempts.c.trial_id)
            .subquery()
        )
        query = (
            select(trials, failed.c.n.label("failed"))
            .outerjoin(failed, failed.c.trial_id == trials.c.id)
            .outerjoin(outcomes, outcomes.c.trial_id == trials.c.id)
            .where(trials.c.run_id == run_id, outcomes.c.trial_id.is_(None))
            .order_by(trials.c.idx)
        )
        pending: list[PendingTrial] = []
        exhausted = 0
        with self.engine.connect() as conn:
            for row in conn.execute(query):
                n_failed = row.failed or 0
                if n_failed >= max_attempts:
                    exhausted += 1
                    continue
                spec = TrialSpec(
                    index=row.idx,
                    key=row.key,
                    actor=row.actor,
                    distinguisher=row.distinguisher,
                    x_is_target=row.x_is_target,
                    seed=row.seed,
                    variant=row.variant,
                    target=row.target,
                    budget=row.budget,
                )
                pending.append(PendingTrial(row.id, spec, n_failed))
        return pending, exhausted

    def save_environment(self, data: dict[str, Any]) -> str:
        env_id = hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]
        with self.engine.begin() as conn:
            exists = conn.execute(select(environments.c.id).where(environments.c.id == env_id))
            if exists.first() is None:
                # Another process may write the same block meanwhile: same content, no harm.
                with contextlib.suppress(IntegrityError):
                    conn.execute(insert(environments).values(id=env_id, data=data))
        return env_id

    def record_attempt(self, rec: AttemptRecord) -> int:
        """One transaction: the attempt, its transcript and, if it finished, the outcome."""
        tokens_in = sum(m.tokens_in or 0 for m in rec.messages)
        tokens_out = sum(m.tokens_out or 0 for m in rec.messages)
        with self.engine.begin() as conn:
            inserted = conn.execute(
                insert(attempts).values(
                    trial_id=rec.trial_id,
                    attempt_no=rec.attempt_no,
                    status="ok" if rec.ok else "failed",
                    error_kind=rec.error_kind,
                    error_message=rec.error_message,
                    started_at=rec.started_at,
                    finished_at=rec.finished_at,
                    calls=sum(1 for m in rec.messages if m.route is not None),
                    tokens_in=tokens_in,
                    tokens_out=tokens_out,
                    environment_id=rec.environment_id,
                )
            ).inserted_primary_key
            assert inserted is not None
            attempt_id = int(inserted[0])
            if rec.messages:
                conn.execute(insert(messages), list(_message_rows(attempt_id, rec.messages)))
            if rec.outcome is not None:
                conn.execute(
                    insert(outcomes).values(
                        trial_id=rec.trial_id,
                        attempt_id=attempt_id,
                        finished_at=rec.finished_at,
                        **rec.outcome,
                    )
                )
        return attempt_id

    # ---- reading results ----------------------------------------------------------------------

    def results(self, run_id: str) -> list[dict[str, Any]]:
        """One row per finished trial: the spec joined with its outcome."""
        query = (
            select(
                trials.c.idx,
                trials.c.key,
                trials.c.variant,
                trials.c.actor,
                trials.c.distinguisher,
                trials.c.target,
                trials.c.x_is_target,
                trials.c.budget,
                trials.c.seed,
                outcomes,
                attempts.c.attempt_no,
                attempts.c.calls,
                attempts.c.tokens_in,
                attempts.c.tokens_out,
                attempts.c.started_at,
                attempts.c.environment_id,
            )
            .join(outcomes, outcomes.c.trial_id == trials.c.id)
            .join(attempts, attempts.c.id == outcomes.c.attempt_id)
            .where(trials.c.run_id == run_id)
            .order_by(trials.c.idx)
        )
        with self.engine.connect() as conn:
            return [dict(row._mapping) for row in conn.execute(query)]

    def failed_attempts(self, run_id: str) -> list[dict[str, Any]]:
        query = (
            select(trials.c.key, attempts)
            .join(attempts, attempts.c.trial_id == trials.c.id)
            .where(trials.c.run_id == run_id, attempts.c.status == "failed")
            .order_by(attempts.c.id)
        )
        with self.engine.connect() as conn:
            return [dict(row._mapping) for row in conn.execute(query)]

    def transcript(self, attempt_id: int) -> list[dict[str, Any]]:
        query = select(messages).where(messages.c.attempt_id == attempt_id).order_by(messages.c.seq)
        with self.engine.connect() as conn:
            return [dict(row._mapping) for row in conn.execute(query)]

    def environment(self, env_id: str) -> dict[str, Any] | None:
        with self.engine.connect() as conn:
            row = conn.execute(
                select(environments.c.data).where(environments.c.id == env_id)
            ).first()
        return None if row is None else dict(row.data)


def _trial_row(run_id: str, s: TrialSpec) -> dict[str, Any]:
    return {
        "run_id": run_id,
        "idx": s.index,
        "key": s.key,
        "variant": s.variant,
        "actor": s.actor,
        "distinguisher": s.distinguisher,
        "target": s.target,
        "x_is_target": s.x_is_target,
        "budget": s.budget,
        "seed": s.seed,
    }


def _message_rows(attempt_id: int, msgs: Iterable[TranscriptMessage]) -> Iterable[dict[str, Any]]:
    for m in msgs:
        yield {
            "attempt_id": attempt_id,
            "seq": m.seq,
            "sender": m.sender,
            "visible_to": ",".join(m.visible_to),
            "phase": m.phase,
            "text": m.text,
            "created_at": m.created_at,
            "latency_s": m.latency_s,
            "tokens_in": m.tokens_in,
            "tokens_out": m.tokens_out,
            "backend": m.route.backend if m.route else None,
            "model": m.route.model if m.route else None,
            "provider": m.route.provider if m.route else None,
        }


def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
    # WAL: readers never block the writer; NORMAL sync is crash-safe for a process kill.
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA synchronous=NORMAL")
    cur.execute("PRAGMA busy_timeout=10000")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.close()
