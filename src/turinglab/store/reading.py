"""Reading what was played: results per finished trial (with each seat's view of the
transcript), games, seats, judgements, transcripts and environment blocks."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from sqlalchemy import Connection, func, select

from turinglab.store.connection import StoreBase
from turinglab.store.records import (
    FAILED,
    FLAGGED,
    GameRecord,
    JudgementRecord,
    MessageRecord,
    ResultRecord,
    SeatRecord,
    game_record,
    judgement_record,
    message_record,
    result_record,
    seat_record,
)
from turinglab.store.schema import (
    environments,
    games,
    judgements,
    messages,
    outcomes,
    seats,
    trials,
)


class ReadingMixin(StoreBase):
    def results(self, run_id: str, *, include_flagged: bool = False) -> list[ResultRecord]:
        """One record per finished trial: its design facts, outcome, game totals and each
        seat's view of the transcript (`histories`, rebuilt from the messages as the table
        built it). Flagged games are left out unless asked for. The GTT analysis reads them
        as flat rows: `records.analysis_rows`."""
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
            found = conn.execute(query).mappings().all()
            views = self._views(conn, run_id)
        return [result_record(r, views.get(r["game_id"], {})) for r in found]

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

    def token_use(self, run_id: str) -> list[dict[str, Any]]:
        """Calls and tokens per agent and game status (finished, failed, interrupted, ...)
        of the games this run played, from the messages themselves, so a game cut short
        counts what it said. Trials reused from another run cost this run nothing."""
        query = (
            select(
                seats.c.agent,
                games.c.status,
                func.count().label("calls"),
                func.coalesce(func.sum(messages.c.tokens_in), 0).label("tokens_in"),
                func.coalesce(func.sum(messages.c.tokens_out), 0).label("tokens_out"),
            )
            .select_from(messages)
            .join(games, games.c.id == messages.c.game_id)
            .join(
                seats, (seats.c.game_id == messages.c.game_id) & (seats.c.seat == messages.c.sender)
            )
            .where(games.c.run_id == run_id, messages.c.backend.is_not(None))
            .group_by(seats.c.agent, games.c.status)
            .order_by(seats.c.agent, games.c.status)
        )
        with self.engine.connect() as conn:
            return [dict(row._mapping) for row in conn.execute(query)]

    def failed_attempts(self, run_id: str) -> list[dict[str, Any]]:
        query = (
            select(trials.c.key, games)
            .join(games, games.c.trial_id == trials.c.id)
            .where(trials.c.run_id == run_id, games.c.status == FAILED)
            .order_by(games.c.id)
        )
        with self.engine.connect() as conn:
            return [dict(row._mapping) for row in conn.execute(query)]

    def games(self, run_id: str, *, status: str | None = None) -> list[GameRecord]:
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
            return [game_record(row._mapping) for row in conn.execute(query)]

    def seats(self, game_id: int) -> list[SeatRecord]:
        query = select(seats).where(seats.c.game_id == game_id).order_by(seats.c.id)
        with self.engine.connect() as conn:
            return [seat_record(row._mapping) for row in conn.execute(query)]

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

    def judgements(self, run_id: str) -> list[JudgementRecord]:
        """Every judgement made in a run's games, in the order they were stored."""
        query = (
            select(judgements, games.c.trial_id, games.c.status.label("game_status"))
            .join(games, games.c.id == judgements.c.game_id)
            .where(games.c.run_id == run_id)
            .order_by(judgements.c.id)
        )
        with self.engine.connect() as conn:
            return [judgement_record(row._mapping) for row in conn.execute(query)]

    def transcript(self, game_id: int, channel: str | None = None) -> list[MessageRecord]:
        """A game's messages in order (one channel's when named), each with its channel."""
        query = select(messages).where(messages.c.game_id == game_id).order_by(messages.c.seq)
        if channel is not None:
            query = query.where(messages.c.channel == channel)
        with self.engine.connect() as conn:
            return [message_record(row._mapping) for row in conn.execute(query)]

    def environment(self, env_id: str) -> dict[str, Any] | None:
        with self.engine.connect() as conn:
            row = conn.execute(
                select(environments.c.data).where(environments.c.id == env_id)
            ).first()
        return None if row is None else dict(row.data)
