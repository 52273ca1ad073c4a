"""The store: SQLite by default, PostgreSQL (or anything SQLAlchemy speaks) by URL.

Reads are plain methods. Writes made while games are played (a game starts, a message is
said, a game ends) are functions of a `Connection`, so that the runner's writer thread can
commit many of them in one transaction (store/writer.py). Several processes may work on one
run: trials are claimed with row leases (see `claim_trials`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import time
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import (
    Connection,
    Engine,
    bindparam,
    create_engine,
    delete,
    event,
    func,
    insert,
    inspect,
    or_,
    select,
    text,
    update,
)
from sqlalchemy.exc import IntegrityError

from turinglab.games.spec import GameResult, Judgement, TrialSpec
from turinglab.games.table import TranscriptMessage
from turinglab.store.media import media_ref, save_images
from turinglab.store.schema import (
    OUTCOME_EXTRA_COLUMNS,
    SCHEMA_VERSION,
    environments,
    games,
    judgements,
    messages,
    meta,
    metadata,
    outcomes,
    runs,
    seats,
    trials,
)

DEFAULT_STORE = "turinglab.db"
PLAYING, FINISHED, FAILED, SUPERSEDED, INTERRUPTED = (
    "playing",
    "finished",
    "failed",
    "superseded",
    "interrupted",
)
FLAGGED = "flagged"
IMAGE_PARTS = "_image_parts"  # a message row's images, stored by `add_messages` (not a column)
IDLE_IN_TRANSACTION_MS = 15_000  # PostgreSQL ends a transaction left idle this long
_MIGRATION_LOCK = 7_420_113  # PostgreSQL advisory lock id: one process migrates at a time


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
class PendingTrial:
    trial_id: int
    spec: TrialSpec
    failed_attempts: int


@dataclass(frozen=True)
class SeatRecord:
    seat: str
    agent: str
    kind: str = "agent"
    participant: str | None = None
    details: dict[str, Any] = field(default_factory=dict)


@dataclass
class GameStart:
    run_id: str
    trial_id: int | None
    attempt_no: int
    game: str
    started_at: float
    seats: list[SeatRecord]
    environment_id: str | None
    worker: str | None
    setup: dict[str, Any] = field(default_factory=dict)


@dataclass
class GameEnd:
    """How a game ended: `result` when it finished, `error_*` when the attempt failed."""

    game_id: int
    trial_id: int | None
    finished_at: float
    calls: int
    tokens_in: int
    tokens_out: int
    worker: str | None = None
    result: GameResult | None = None
    routes: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)  # outcome columns some games fill
    error_kind: str | None = None
    error_message: str | None = None
    release: bool = True  # give the trial's lease back


@dataclass(frozen=True)
class RunState:
    planned: int
    finished: int
    exhausted: int
    leased: int  # unfinished, attempts left, under a live lease (being played somewhere)
    leased_elsewhere: int = 0  # ... by a worker other than the one asking

    @property
    def open(self) -> int:
        return self.planned - self.finished - self.exhausted


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
        self.engine: Engine = create_engine(self.url, future=True, **_engine_options(self.url))
        if self.engine.dialect.name == "sqlite":
            event.listen(self.engine, "connect", _sqlite_pragmas)
            event.listen(self.engine, "begin", _sqlite_begin)
        self.session_name: str | None = None  # PostgreSQL application_name of our sessions
        if self.engine.dialect.name == "postgresql":
            event.listen(self.engine, "do_connect", self._name_new_session)
        self._prepare_schema()

    def name_sessions(self, name: str) -> None:
        """Name this process's PostgreSQL sessions (application_name), so that a process that
        claims its games after it went silent can end them (`end_sessions`): a paused process
        may hold a row lock in the middle of a transaction for as long as it is paused."""
        if self.dialect != "postgresql" or name == self.session_name:
            return
        self.session_name = name[:63]
        self.engine.dispose()  # sessions opened before carry no name: open new ones

    def _name_new_session(self, _dialect: Any, _rec: Any, _args: Any, params: Any) -> None:
        if self.session_name is not None:
            params["application_name"] = self.session_name

    def end_sessions(self, conn: Connection, name: str) -> int:
        """End every session of the process named `name` (one presumed dead): its open
        transactions roll back and its locks go. Returns how many were ended."""
        if self.dialect != "postgresql":
            return 0
        ended = conn.execute(
            text(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                "WHERE application_name = :name AND datname = current_database() "
                "AND pid <> pg_backend_pid()"
            ),
            {"name": name[:63]},
        ).scalar()
        return int(ended or 0)

    @property
    def dialect(self) -> str:
        return self.engine.dialect.name

    def _prepare_schema(self) -> None:
        """Create a new store at head, or bring an older one there (never refuse a v2 store)."""
        from turinglab.store import migrations

        upgraded_v2 = False
        with self.writing() as conn:
            if self.dialect == "postgresql":
                conn.execute(text(f"SELECT pg_advisory_xact_lock({_MIGRATION_LOCK})"))
            existing = set(inspect(conn).get_table_names())
            if "alembic_version" in existing:
                migrations.upgrade(conn)
            elif "runs" not in existing:
                metadata.create_all(conn)
                conn.execute(insert(meta).values(key="schema_version", value=str(SCHEMA_VERSION)))
                migrations.stamp(conn, "head")
            else:
                row = (
                    conn.execute(select(meta.c.value).where(meta.c.key == "schema_version")).first()
                    if "meta" in existing
                    else None
                )
                found = row.value if row is not None else "1"  # v1 had no version row
                if found != "2":
                    raise StoreError(
                        f"{self.url} was written with store schema {found}, which has no "
                        "migration (only schema 2 and later are upgraded). Export it with the "
                        "version that wrote it."
                    )
                migrations.stamp(conn, migrations.BASELINE_V2)
                migrations.upgrade(conn)
                upgraded_v2 = True
        if upgraded_v2 and self.dialect == "sqlite":
            # Give back the pages the dropped duplicate transcripts used.
            raw = self.engine.raw_connection()
            try:
                raw.cursor().execute("VACUUM")
            finally:
                raw.close()

    def ping(self) -> None:
        """One round trip to the database (a health check); raises when it cannot answer."""
        with self.engine.connect() as conn:
            conn.exec_driver_sql("SELECT 1")

    @contextlib.contextmanager
    def writing(self) -> Iterator[Connection]:
        """A write transaction. On SQLite it begins IMMEDIATE (takes the write lock first), so
        a transaction that reads before it writes cannot fail with a stale snapshot when
        another process wrote in between."""
        with self.engine.connect() as conn:
            conn.execution_options(turinglab_immediate=True)
            with conn.begin():
                yield conn

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
        specs: Sequence[TrialSpec],
    ) -> bool:
        """Plan a run; False if another process planned the same run first (same id)."""
        now = time.time()
        try:
            with self.writing() as conn:
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
                for chunk in _chunks([_trial_row(run_id, s) for s in specs]):
                    conn.execute(insert(trials), chunk)
        except IntegrityError:
            if self.find_run(run_id) is None:
                raise
            return False
        return True

    def add_trials(self, run_id: str, specs: Sequence[TrialSpec]) -> int:
        """Plan more trials into an existing run (adaptive sampling). Trials another worker
        planned already (same index) are skipped; returns how many were added."""
        if not specs:
            return 0
        with self.writing() as conn:
            have = {
                i
                for (i,) in conn.execute(
                    select(trials.c.idx).where(
                        trials.c.run_id == run_id, trials.c.idx.in_([s.index for s in specs])
                    )
                )
            }
            new = [_trial_row(run_id, s) for s in specs if s.index not in have]
            for chunk in _chunks(new):
                conn.execute(insert(trials), chunk)
            conn.execute(
                update(runs)
                .where(runs.c.id == run_id)
                .values(n_planned=runs.c.n_planned + len(new), updated_at=time.time())
            )
        return len(new)

    def planned_specs(self, run_id: str) -> list[TrialSpec]:
        query = select(trials).where(trials.c.run_id == run_id).order_by(trials.c.idx)
        with self.engine.connect() as conn:
            return [_spec(row) for row in conn.execute(query)]

    def set_run_status(self, run_id: str, status: str) -> None:
        with self.writing() as conn:
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
            .where(outcomes.c.status != FLAGGED)
            .group_by(trials.c.run_id)
            .subquery()
        )
        failed = (
            select(games.c.run_id, func.count().label("n"))
            .where(games.c.status == FAILED)
            .group_by(games.c.run_id)
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

    # ---- trials: what is left, and who plays it ---------------------------------------------

    def pending_trials(self, run_id: str, max_attempts: int) -> tuple[list[PendingTrial], int]:
        """Unfinished trials that still have attempts left, and how many have none left."""
        failed = _failed_per_trial()
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
                else:
                    pending.append(PendingTrial(row.id, _spec(row), n_failed))
        return pending, exhausted

    def state(self, run_id: str, max_attempts: int, worker: str | None = None) -> RunState:
        with self.engine.connect() as conn:
            return self.run_state(conn, run_id, max_attempts, worker)

    def run_state(
        self, conn: Connection, run_id: str, max_attempts: int, worker: str | None = None
    ) -> RunState:
        """Where a run stands; `leased_elsewhere` counts open trials another worker holds."""
        now = time.time()
        failed = _failed_per_trial()
        rows = conn.execute(
            select(
                outcomes.c.trial_id.is_not(None).label("done"),
                func.coalesce(failed.c.n, 0).label("failed"),
                trials.c.lease_owner,
                trials.c.lease_expires_at,
            )
            .select_from(trials)
            .outerjoin(outcomes, outcomes.c.trial_id == trials.c.id)
            .outerjoin(failed, failed.c.trial_id == trials.c.id)
            .where(trials.c.run_id == run_id)
        ).all()
        open_rows = [r for r in rows if not r.done and r.failed < max_attempts]
        leased = [
            r for r in open_rows if r.lease_expires_at is not None and r.lease_expires_at >= now
        ]
        return RunState(
            planned=len(rows),
            finished=sum(1 for r in rows if r.done),
            exhausted=sum(1 for r in rows if not r.done and r.failed >= max_attempts),
            leased=len(leased),
            leased_elsewhere=sum(1 for r in leased if r.lease_owner != worker),
        )

    def claim_trials(
        self, conn: Connection, run_id: str, worker: str, n: int, lease_s: float, max_attempts: int
    ) -> list[PendingTrial]:
        """Lease up to `n` unfinished trials with attempts left whose lease is free or expired.

        One UPDATE … WHERE id IN (SELECT … LIMIT n) RETURNING id: on PostgreSQL the inner
        SELECT is FOR UPDATE SKIP LOCKED, so concurrent workers take disjoint rows without
        waiting; SQLite runs a writing statement under its single write lock, which gives the
        same guarantee. A game left `playing` by a worker whose lease expired is marked
        interrupted (it does not count as a failed attempt)."""
        now = time.time()
        failed = (
            select(func.count())
            .where(games.c.trial_id == trials.c.id, games.c.status == FAILED)
            .scalar_subquery()
        )
        done = select(outcomes.c.trial_id).where(outcomes.c.trial_id == trials.c.id).exists()
        candidates = (
            select(trials.c.id)
            .where(
                trials.c.run_id == run_id,
                or_(trials.c.lease_expires_at.is_(None), trials.c.lease_expires_at < now),
                ~done,
                failed < max_attempts,
            )
            .order_by(trials.c.idx)
            .limit(n)
        )
        if self.dialect == "postgresql":
            candidates = candidates.with_for_update(skip_locked=True, of=trials)
        claimed = [
            row.id
            for row in conn.execute(
                update(trials)
                .where(trials.c.id.in_(candidates.scalar_subquery()))
                .values(lease_owner=worker, lease_expires_at=now + lease_s)
                .returning(trials.c.id)
            )
        ]
        if not claimed:
            return []
        conn.execute(
            update(games)
            .where(games.c.trial_id.in_(claimed), games.c.status == PLAYING)
            .values(status=INTERRUPTED, error_kind="interrupted", finished_at=now)
        )
        fails = _failed_per_trial()
        query = (
            select(trials, fails.c.n.label("failed"))
            .outerjoin(fails, fails.c.trial_id == trials.c.id)
            .where(trials.c.id.in_(claimed))
            .order_by(trials.c.idx)
        )
        return [PendingTrial(row.id, _spec(row), row.failed or 0) for row in conn.execute(query)]

    def renew_leases(self, conn: Connection, run_id: str, worker: str, lease_s: float) -> None:
        """The heartbeat: keep this worker's leases and show the run is alive."""
        now = time.time()
        conn.execute(
            update(trials)
            .where(trials.c.run_id == run_id, trials.c.lease_owner == worker)
            .values(lease_expires_at=now + lease_s)
        )
        conn.execute(update(runs).where(runs.c.id == run_id).values(updated_at=now))

    def lease_owners(self, conn: Connection, run_id: str) -> list[str]:
        """Workers holding a live lease on the run."""
        query = select(trials.c.lease_owner).where(
            trials.c.run_id == run_id,
            trials.c.lease_owner.is_not(None),
            trials.c.lease_expires_at >= time.time(),
        )
        return sorted({owner for (owner,) in conn.execute(query.distinct())})

    def expire_leases(self, conn: Connection, run_id: str, owners: Sequence[str]) -> None:
        """End the leases of workers known to be gone (their trials become claimable now)."""
        if owners:
            conn.execute(
                update(trials)
                .where(trials.c.run_id == run_id, trials.c.lease_owner.in_(list(owners)))
                .values(lease_expires_at=None)
            )

    def release_trial(self, conn: Connection, trial_id: int, worker: str) -> None:
        conn.execute(
            update(trials)
            .where(trials.c.id == trial_id, trials.c.lease_owner == worker)
            .values(lease_owner=None, lease_expires_at=None)
        )

    def release_leases(self, conn: Connection, run_id: str, worker: str) -> None:
        conn.execute(
            update(trials)
            .where(trials.c.run_id == run_id, trials.c.lease_owner == worker)
            .values(lease_owner=None, lease_expires_at=None)
        )

    # ---- games: written while they are played ------------------------------------------------

    def start_game(self, conn: Connection, start: GameStart) -> int:
        """The game row (status playing) and its seats, before the first message."""
        return self.start_games(conn, [start])[0]

    def start_games(self, conn: Connection, starts: Sequence[GameStart]) -> list[int]:
        """Many games at once (the writer's group commit): one INSERT … RETURNING for the
        games, one for their seats."""
        rows: list[dict[str, Any]] = [
            {
                "run_id": st.run_id,
                "trial_id": st.trial_id,
                "attempt_no": st.attempt_no,
                "game": st.game,
                "status": PLAYING,
                "started_at": st.started_at,
                "calls": 0,
                "environment_id": st.environment_id,
                "worker": st.worker,
                "setup": st.setup,
                "flags": [],
            }
            for st in starts
        ]
        result = conn.execute(
            insert(games).returning(games.c.id, sort_by_parameter_order=True), rows
        )
        ids = [int(row.id) for row in result]
        seat_rows = [
            {
                "game_id": game_id,
                "seat": s.seat,
                "agent": s.agent,
                "kind": s.kind,
                "participant": s.participant,
                "details": s.details,
            }
            for game_id, st in zip(ids, starts, strict=True)
            for s in st.seats
        ]
        if seat_rows:
            conn.execute(insert(seats), seat_rows)
        return ids

    @staticmethod
    def message_row(game_id: int, m: TranscriptMessage) -> dict[str, Any]:
        return {
            "game_id": game_id,
            "seq": m.seq,
            "channel": m.channel,
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
            "images": [media_ref(i) for i in m.images] if m.images else None,
            **({IMAGE_PARTS: m.images} if m.images else {}),
        }

    def add_messages(self, conn: Connection, rows: list[dict[str, Any]]) -> None:
        """Message rows (`message_row`); the images they carry are stored once, by content."""
        parts = [image for row in rows for image in row.get(IMAGE_PARTS, ())]
        if parts:
            save_images(conn, parts)
            rows = [{k: v for k, v in row.items() if k != IMAGE_PARTS} for row in rows]
        if rows:
            conn.execute(insert(messages), rows)

    def end_game(self, conn: Connection, end: GameEnd) -> str:
        return self.end_games(conn, [end])[0]

    def end_games(self, conn: Connection, ends: Sequence[GameEnd]) -> list[str]:
        """Close games; a finished one writes its trial's outcome. Returns each game's final
        status: finished | flagged | failed | superseded (another worker finished the trial
        first: its outcome insert found the trial's row taken, which is not an error).

        Batched for the writer's group commit: one INSERT … ON CONFLICT DO NOTHING for the
        outcomes, one executemany UPDATE for the games."""
        statuses: list[str] = []
        outcome_rows: list[dict[str, Any]] = []
        judgement_rows: list[dict[str, Any]] = []
        game_rows: list[dict[str, Any]] = []
        released: list[dict[str, Any]] = []
        for end in ends:
            result = end.result
            row: dict[str, Any] = {
                "gid": end.game_id,
                "finished_at": end.finished_at,
                "calls": end.calls,
                "tokens_in": end.tokens_in,
                "tokens_out": end.tokens_out,
                "error_kind": end.error_kind,
                "error_message": end.error_message,
                "flags": [],
            }
            if result is None:
                statuses.append(FAILED)
            else:
                statuses.append(FLAGGED if result.flags else FINISHED)
                row["flags"] = list(result.flags)
                judgement_rows += [_judgement_row(end.game_id, j) for j in result.judgements]
                if end.trial_id is not None:
                    outcome_rows.append(
                        {
                            "trial_id": end.trial_id,
                            "game_id": end.game_id,
                            "status": FLAGGED if result.flags else result.status,
                            "verdict": result.verdict,
                            "correct": result.correct,
                            "routes": end.routes,
                            "details": result.details,
                            "flags": list(result.flags),
                            "finished_at": end.finished_at,
                            **{col: end.extra.get(col) for col in OUTCOME_EXTRA_COLUMNS},
                        }
                    )
            game_rows.append(row)
            if end.release and end.trial_id is not None and end.worker is not None:
                released.append({"tid": end.trial_id, "owner": end.worker})
        if outcome_rows:
            conn.execute(self._insert_outcome_unless_taken(), outcome_rows)
            winners = dict(
                conn.execute(
                    select(outcomes.c.trial_id, outcomes.c.game_id).where(
                        outcomes.c.trial_id.in_([r["trial_id"] for r in outcome_rows])
                    )
                ).all()
            )
            lost = {
                r["game_id"] for r in outcome_rows if winners.get(r["trial_id"]) != r["game_id"]
            }
            statuses = [
                SUPERSEDED if end.game_id in lost else st
                for end, st in zip(ends, statuses, strict=True)
            ]
        for row, st in zip(game_rows, statuses, strict=True):
            row["status"] = st
        if judgement_rows:
            conn.execute(insert(judgements), judgement_rows)
        conn.execute(
            update(games)
            .where(games.c.id == bindparam("gid"))
            .values(
                status=bindparam("status"),
                finished_at=bindparam("finished_at"),
                calls=bindparam("calls"),
                tokens_in=bindparam("tokens_in"),
                tokens_out=bindparam("tokens_out"),
                error_kind=bindparam("error_kind"),
                error_message=bindparam("error_message"),
                flags=bindparam("flags", type_=games.c.flags.type),
            ),
            game_rows,
        )
        if released:
            conn.execute(
                update(trials)
                .where(trials.c.id == bindparam("tid"), trials.c.lease_owner == bindparam("owner"))
                .values(lease_owner=None, lease_expires_at=None),
                released,
            )
        return statuses

    def _insert_outcome_unless_taken(self) -> Any:
        if self.dialect == "postgresql":
            from sqlalchemy.dialects.postgresql import insert as pg_insert

            return pg_insert(outcomes).on_conflict_do_nothing(index_elements=["trial_id"])
        if self.dialect == "sqlite":
            from sqlalchemy.dialects.sqlite import insert as sqlite_insert

            return sqlite_insert(outcomes).on_conflict_do_nothing(index_elements=["trial_id"])
        return insert(outcomes).prefix_with("IGNORE")  # MySQL-style fallback

    def save_environment(self, data: dict[str, Any]) -> str:
        env_id = hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]
        with self.writing() as conn:
            exists = conn.execute(select(environments.c.id).where(environments.c.id == env_id))
            if exists.first() is None:
                # Another process may write the same block meanwhile: same content, no harm.
                with contextlib.suppress(IntegrityError), conn.begin_nested():
                    conn.execute(insert(environments).values(id=env_id, data=data))
        return env_id

    # ---- reading results ----------------------------------------------------------------------

    def results(self, run_id: str, *, include_flagged: bool = False) -> list[dict[str, Any]]:
        """One row per finished trial: its design facts, outcome, game totals and each seat's
        view of the transcript (`histories`, rebuilt from the messages as the table built it).

        GTT rows have exactly the keys the GTT analysis, reports and export always read; other
        games add `game`, `seats`, `params` and `flags`. Flagged games are left out unless
        asked for."""
        query = (
            select(
                trials.c.idx,
                trials.c.key,
                trials.c.game.label("trial_game"),
                trials.c.seats.label("trial_seats"),
                trials.c.params,
                trials.c.seed,
                outcomes,
                games.c.attempt_no,
                games.c.calls,
                games.c.tokens_in,
                games.c.tokens_out,
                games.c.started_at,
                games.c.environment_id,
            )
            .join(outcomes, outcomes.c.trial_id == trials.c.id)
            .join(games, games.c.id == outcomes.c.game_id)
            .where(trials.c.run_id == run_id)
            .order_by(trials.c.idx)
        )
        if not include_flagged:
            query = query.where(outcomes.c.status != FLAGGED)
        with self.engine.connect() as conn:
            found = [dict(row._mapping) for row in conn.execute(query)]
            views = self._views(conn, run_id)
        rows = []
        for r in found:
            game_id = r.pop("game_id")
            game, seated, params = r.pop("trial_game"), r.pop("trial_seats"), r.pop("params")
            flags = r.pop("flags")
            row = {"idx": r.pop("idx"), "key": r.pop("key"), **params, **r}
            row["attempt_id"] = game_id
            row["histories"] = views.get(game_id, {})
            if game != "gtt":
                row.update(game=game, seats=seated, params=params, flags=flags)
                for col in OUTCOME_EXTRA_COLUMNS:
                    if row[col] is None:
                        del row[col]
            rows.append(row)
        return rows

    def _views(self, conn: Connection, run_id: str) -> dict[int, dict[str, list[dict[str, str]]]]:
        """game id -> seat -> that seat's history (Table.history) for the run's outcome games."""
        outcome_games = (
            select(outcomes.c.game_id)
            .join(trials, trials.c.id == outcomes.c.trial_id)
            .where(trials.c.run_id == run_id)
        )
        views: dict[int, dict[str, list[dict[str, str]]]] = defaultdict(dict)
        for s in conn.execute(
            select(seats.c.game_id, seats.c.seat)
            .where(seats.c.game_id.in_(outcome_games))
            .order_by(seats.c.id)
        ):
            views[s.game_id][s.seat] = []
        for m in conn.execute(
            select(messages.c.game_id, messages.c.sender, messages.c.visible_to, messages.c.text)
            .where(messages.c.game_id.in_(outcome_games))
            .order_by(messages.c.game_id, messages.c.seq)
        ):
            game_views = views[m.game_id]
            for seat in m.visible_to.split(","):
                if seat in game_views:
                    role = "assistant" if m.sender == seat else "user"
                    game_views[seat].append({"role": role, "content": m.text})
        return views

    def failed_attempts(self, run_id: str) -> list[dict[str, Any]]:
        query = (
            select(trials.c.key, games)
            .join(games, games.c.trial_id == trials.c.id)
            .where(trials.c.run_id == run_id, games.c.status == FAILED)
            .order_by(games.c.id)
        )
        with self.engine.connect() as conn:
            return [dict(row._mapping) for row in conn.execute(query)]

    def games(self, run_id: str, *, status: str | None = None) -> list[dict[str, Any]]:
        """Every game of a run (finished, failed, still playing, ...), with its trial's key."""
        query = (
            select(trials.c.key, trials.c.idx, games)
            .select_from(games)
            .outerjoin(trials, trials.c.id == games.c.trial_id)
            .where(games.c.run_id == run_id)
            .order_by(games.c.id)
        )
        if status is not None:
            query = query.where(games.c.status == status)
        with self.engine.connect() as conn:
            return [dict(row._mapping) for row in conn.execute(query)]

    def seats(self, game_id: int) -> list[dict[str, Any]]:
        query = select(seats).where(seats.c.game_id == game_id).order_by(seats.c.id)
        with self.engine.connect() as conn:
            return [dict(row._mapping) for row in conn.execute(query)]

    def seat_kinds(self, run_id: str) -> dict[int, dict[str, str]]:
        """game id -> seat -> kind (agent | human | stand-in) for every game of a run."""
        query = (
            select(seats.c.game_id, seats.c.seat, seats.c.kind)
            .join(games, games.c.id == seats.c.game_id)
            .where(games.c.run_id == run_id)
        )
        found: dict[int, dict[str, str]] = defaultdict(dict)
        with self.engine.connect() as conn:
            for row in conn.execute(query):
                found[row.game_id][row.seat] = row.kind
        return dict(found)

    def judgements(self, run_id: str) -> list[dict[str, Any]]:
        query = (
            select(judgements, games.c.trial_id, games.c.status.label("game_status"))
            .join(games, games.c.id == judgements.c.game_id)
            .where(games.c.run_id == run_id)
            .order_by(judgements.c.id)
        )
        with self.engine.connect() as conn:
            return [dict(row._mapping) for row in conn.execute(query)]

    def transcript(self, game_id: int, channel: str | None = None) -> list[dict[str, Any]]:
        """A game's messages in order (one channel's when named), each with its channel."""
        query = select(messages).where(messages.c.game_id == game_id).order_by(messages.c.seq)
        if channel is not None:
            query = query.where(messages.c.channel == channel)
        with self.engine.connect() as conn:
            return [dict(row._mapping) for row in conn.execute(query)]

    def environment(self, env_id: str) -> dict[str, Any] | None:
        with self.engine.connect() as conn:
            row = conn.execute(
                select(environments.c.data).where(environments.c.id == env_id)
            ).first()
        return None if row is None else dict(row.data)

    def delete_run(self, run_id: str) -> None:
        """Remove a run and everything played in it (tests, and `runs --delete` later)."""
        with self.writing() as conn:
            game_ids = select(games.c.id).where(games.c.run_id == run_id)
            trial_ids = select(trials.c.id).where(trials.c.run_id == run_id)
            conn.execute(delete(outcomes).where(outcomes.c.trial_id.in_(trial_ids)))
            for table in (messages, judgements, seats):
                conn.execute(delete(table).where(table.c.game_id.in_(game_ids)))
            conn.execute(delete(games).where(games.c.run_id == run_id))
            conn.execute(delete(trials).where(trials.c.run_id == run_id))
            conn.execute(delete(runs).where(runs.c.id == run_id))


def _engine_options(url: str) -> dict[str, Any]:
    """PostgreSQL: give up connecting after a while instead of hanging on a dead network, and
    let the server end a session left idle inside a transaction (a paused process would hold
    its row locks, and a takeover waiting on them, until it woke up)."""
    if not url.startswith("postgresql"):
        return {}
    options = f"-c idle_in_transaction_session_timeout={IDLE_IN_TRANSACTION_MS}"
    return {"connect_args": {"connect_timeout": 10, "options": options}}


def _failed_per_trial() -> Any:
    return (
        select(games.c.trial_id, func.count().label("n"))
        .where(games.c.status == FAILED, games.c.trial_id.is_not(None))
        .group_by(games.c.trial_id)
        .subquery()
    )


def _spec(row: Any) -> TrialSpec:
    return TrialSpec(
        index=row.idx,
        key=row.key,
        game=row.game,
        seed=row.seed,
        seats=dict(row.seats),
        params=dict(row.params),
    )


def _trial_row(run_id: str, s: TrialSpec) -> dict[str, Any]:
    return {
        "run_id": run_id,
        "idx": s.index,
        "key": s.key,
        "game": s.game,
        "seed": s.seed,
        "seats": dict(s.seats),
        "params": dict(s.params),
    }


def _judgement_row(game_id: int, j: Judgement) -> dict[str, Any]:
    return {
        "game_id": game_id,
        "judge": j.judge,
        "kind": j.kind,
        "verdict": j.verdict,
        "confidence": j.confidence,
        "reason": j.reason,
        "choice": j.choice,
        "tie": j.tie,
        "turn": j.turn,
        "created_at": j.created_at,
        "details": dict(j.details),
    }


def _chunks(rows: list[dict[str, Any]], size: int = 5000) -> Iterable[list[dict[str, Any]]]:
    for i in range(0, len(rows), size):
        yield rows[i : i + size]


def _sqlite_begin(conn: Connection) -> None:
    # pysqlite's own transaction handling is off (see _sqlite_pragmas): we say BEGIN ourselves,
    # so SAVEPOINTs work and writers can ask for the write lock up front.
    immediate = conn.get_execution_options().get("turinglab_immediate")
    conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")


def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
    dbapi_conn.isolation_level = None  # autocommit at the driver; _sqlite_begin opens transactions
    # WAL: readers never block the writer; NORMAL sync is crash-safe for a process kill.
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA synchronous=NORMAL")
    cur.execute("PRAGMA busy_timeout=30000")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.close()
