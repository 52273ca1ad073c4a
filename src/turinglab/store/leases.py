"""Who plays which trial: what is left of a run, where it stands, and the row leases that
several processes claim, renew, expire and give back (see `claim_trials`)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Connection, func, or_, select, update

from turinglab.store.connection import StoreBase
from turinglab.store.records import (
    FAILED,
    INTERRUPTED,
    PLAYING,
    PendingTrial,
    RunState,
    trial_spec,
)
from turinglab.store.schema import games, messages, outcomes, runs, trials


class LeasesMixin(StoreBase):
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
                    pending.append(PendingTrial(row.id, trial_spec(row._mapping), n_failed))
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
        # An interrupted game's calls and tokens are what its stored messages say.
        said = select(messages).where(messages.c.game_id == games.c.id)
        conn.execute(
            update(games)
            .where(games.c.trial_id.in_(claimed), games.c.status == PLAYING)
            .values(
                status=INTERRUPTED,
                error_kind="interrupted",
                finished_at=now,
                calls=_sum_said(said, func.count(messages.c.backend)),
                tokens_in=_sum_said(said, func.sum(messages.c.tokens_in)),
                tokens_out=_sum_said(said, func.sum(messages.c.tokens_out)),
            )
        )
        fails = _failed_per_trial()
        query = (
            select(trials, fails.c.n.label("failed"))
            .outerjoin(fails, fails.c.trial_id == trials.c.id)
            .where(trials.c.id.in_(claimed))
            .order_by(trials.c.idx)
        )
        return [
            PendingTrial(row.id, trial_spec(row._mapping), row.failed or 0)
            for row in conn.execute(query)
        ]

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


def _sum_said(said: Any, total: Any) -> Any:
    return func.coalesce(said.with_only_columns(total).scalar_subquery(), 0)


def _failed_per_trial() -> Any:
    return (
        select(games.c.trial_id, func.count().label("n"))
        .where(games.c.status == FAILED, games.c.trial_id.is_not(None))
        .group_by(games.c.trial_id)
        .subquery()
    )
