"""Runs and their planned trials: plan, find, list, resolve, set a run's status, delete."""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import bindparam, delete, func, insert, select, update
from sqlalchemy.exc import IntegrityError

from turinglab.games.spec import TrialSpec
from turinglab.store.connection import StoreBase, StoreError
from turinglab.store.records import FAILED, FLAGGED, RunInfo, trial_row, trial_spec
from turinglab.store.schema import games, judgements, messages, outcomes, runs, seats, trials


class RunsMixin(StoreBase):
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
        hashes: Sequence[str] | None = None,
    ) -> bool:
        """Plan a run; False if another process planned the same run first (same id).
        `hashes` are the trials' content hashes (runner/plan.py), in the order of `specs`."""
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
                rows = [trial_row(run_id, s, h) for s, h in _with_hashes(specs, hashes)]
                for chunk in _chunks(rows):
                    conn.execute(insert(trials), chunk)
        except IntegrityError:
            if self.find_run(run_id) is None:
                raise
            return False
        return True

    def add_trials(
        self, run_id: str, specs: Sequence[TrialSpec], hashes: Sequence[str] | None = None
    ) -> int:
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
            new = [
                trial_row(run_id, s, h)
                for s, h in _with_hashes(specs, hashes)
                if s.index not in have
            ]
            for chunk in _chunks(new):
                conn.execute(insert(trials), chunk)
            conn.execute(
                update(runs)
                .where(runs.c.id == run_id)
                .values(n_planned=runs.c.n_planned + len(new), updated_at=time.time())
            )
        return len(new)

    def unhashed_specs(self, run_id: str) -> list[TrialSpec]:
        """The run's trials planned before trials had content hashes (schema < 8)."""
        query = select(trials).where(trials.c.run_id == run_id, trials.c.content_hash.is_(None))
        with self.engine.connect() as conn:
            return [trial_spec(row._mapping) for row in conn.execute(query.order_by(trials.c.idx))]

    def set_content_hashes(self, run_id: str, hashes: dict[int, str]) -> None:
        """Give trials (by plan index) planned before schema 8 their content hash."""
        if not hashes:
            return
        statement = (
            update(trials)
            .where(
                trials.c.run_id == run_id,
                trials.c.idx == bindparam("i"),
                trials.c.content_hash.is_(None),
            )
            .values(content_hash=bindparam("h"))
        )
        with self.writing() as conn:
            conn.execute(statement, [{"i": i, "h": h} for i, h in hashes.items()])

    def reuse_outcomes(self, run_id: str) -> int:
        """Give each open trial of the run the outcome of the same trial (same content hash)
        already finished in another run of the store: its game is not played again, and the
        run's results include it. Flagged outcomes are not reused (they are replayed).
        Returns how many trials were filled."""
        new, old = trials.alias("new"), trials.alias("old")
        theirs = outcomes.alias("theirs")
        mine = select(theirs.c.trial_id).where(theirs.c.trial_id == new.c.id).exists()
        query = (
            select(new.c.id.label("new_trial"), outcomes)
            .select_from(new)
            .join(old, (old.c.content_hash == new.c.content_hash) & (old.c.run_id != run_id))
            .join(outcomes, outcomes.c.trial_id == old.c.id)
            .where(new.c.run_id == run_id, new.c.content_hash.is_not(None), ~mine)
            .where(outcomes.c.status != FLAGGED)
            .order_by(new.c.id, outcomes.c.finished_at)
        )
        with self.writing() as conn:
            found: dict[int, dict[str, Any]] = {}
            for row in conn.execute(query).mappings():
                found.setdefault(row["new_trial"], dict(row))
            rows = [
                {**{k: v for k, v in r.items() if k != "new_trial"}, "trial_id": tid}
                for tid, r in found.items()
            ]
            for chunk in _chunks(rows):
                conn.execute(insert(outcomes), chunk)
        return len(rows)

    def played_hashes(self, hashes: Sequence[str]) -> set[str]:
        """Which of these trial content hashes some run of the store has a usable outcome for
        (what a new run of them would reuse)."""
        found: set[str] = set()
        unique = sorted(set(hashes))
        with self.engine.connect() as conn:
            for i in range(0, len(unique), 500):
                query = (
                    select(trials.c.content_hash)
                    .join(outcomes, outcomes.c.trial_id == trials.c.id)
                    .where(
                        trials.c.content_hash.in_(unique[i : i + 500]),
                        outcomes.c.status != FLAGGED,
                    )
                    .distinct()
                )
                found.update(conn.execute(query).scalars())
        return found

    def planned_specs(self, run_id: str) -> list[TrialSpec]:
        query = select(trials).where(trials.c.run_id == run_id).order_by(trials.c.idx)
        with self.engine.connect() as conn:
            return [trial_spec(row._mapping) for row in conn.execute(query)]

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

    def delete_run(self, run_id: str) -> None:
        """Remove a run and everything played in it (tests, and `runs --delete` later); not
        a run whose games another run reuses (its results would lose them)."""
        with self.writing() as conn:
            game_ids = select(games.c.id).where(games.c.run_id == run_id)
            trial_ids = select(trials.c.id).where(trials.c.run_id == run_id)
            reused_by = conn.execute(
                select(trials.c.run_id)
                .join(outcomes, outcomes.c.trial_id == trials.c.id)
                .where(outcomes.c.game_id.in_(game_ids), trials.c.run_id != run_id)
                .distinct()
            ).scalars()
            users = sorted(reused_by)
            if users:
                raise StoreError(
                    f"run {run_id} cannot be deleted: runs {', '.join(users)} reuse its games"
                )
            conn.execute(delete(outcomes).where(outcomes.c.trial_id.in_(trial_ids)))
            for table in (messages, judgements, seats):
                conn.execute(delete(table).where(table.c.game_id.in_(game_ids)))
            conn.execute(delete(games).where(games.c.run_id == run_id))
            conn.execute(delete(trials).where(trials.c.run_id == run_id))
            conn.execute(delete(runs).where(runs.c.id == run_id))


def _with_hashes(
    specs: Sequence[TrialSpec], hashes: Sequence[str] | None
) -> Iterable[tuple[TrialSpec, str | None]]:
    if hashes is None:
        return ((s, None) for s in specs)
    return zip(specs, hashes, strict=True)


def _chunks(rows: list[dict[str, Any]], size: int = 5000) -> Iterable[list[dict[str, Any]]]:
    for i in range(0, len(rows), size):
        yield rows[i : i + size]
