"""What the arena's /admin reads of a study: its participants, newest first, and its games by
status — whichever process played them, in a few grouped statements rather than every record.

A person's rows are the seats of the run's games plus their own rows (arena_records.SURVEY_GAME:
recruitment ids kept at consent, a never-seated person's survey). Rounds done count as the
round book (arena/rounds.py) counts them: every study game they sat in that is being played or
finished cleanly; practice, abandoned and flagged games give theirs back.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import and_, case, desc, func, select

from turinglab.store.arena_records import SURVEY_GAME
from turinglab.store.database import FINISHED, PLAYING, Store
from turinglab.store.schema import games, seats


@dataclass
class Person:
    participant: str
    first_seen: float | None  # their first row's time (consent, or first game); None: unknown
    games: int  # every game they sat in: practice and unfinished ones included
    rounds: int  # study rounds done, as the round book counts them
    recruitment: dict[str, str] = field(default_factory=dict)
    survey: bool = False


@dataclass
class People:
    total: int  # everyone in the study
    newest: list[Person]  # the newest `limit` of them, newest first


def _in_run(run_id: str) -> Any:
    return and_(games.c.run_id == run_id, seats.c.kind == "human")


def people(store: Store, run_id: str, limit: int) -> People:
    """The study's participants: how many, and the newest `limit` with their ids and rounds."""
    played = games.c.game != SURVEY_GAME
    counted = and_(
        played,
        games.c.status.in_([PLAYING, FINISHED]),
        func.coalesce(games.c.setup["solo"].as_boolean(), False).is_(False),
    )
    first = func.min(seats.c.id).label("first")
    per_person = (
        select(
            seats.c.participant,
            first,
            func.min(games.c.started_at).label("first_seen"),
            func.count(case((played, 1))).label("games"),
            func.count(case((counted, 1))).label("rounds"),
        )
        .join(games, games.c.id == seats.c.game_id)
        .where(_in_run(run_id))
        .group_by(seats.c.participant)
        .order_by(desc(first))
        .limit(limit)
    )
    everyone = (
        select(func.count(func.distinct(seats.c.participant)))
        .join(games, games.c.id == seats.c.game_id)
        .where(_in_run(run_id))
    )
    with store.engine.connect() as conn:
        total = int(conn.execute(everyone).scalar_one())
        found = [
            Person(r.participant, float(r.first_seen), int(r.games), int(r.rounds))
            for r in conn.execute(per_person)
        ]
        by_id = {p.participant: p for p in found}
        details = conn.execute(
            select(seats.c.participant, seats.c.details)
            .join(games, games.c.id == seats.c.game_id)
            .where(_in_run(run_id), seats.c.participant.in_(list(by_id)))
        )
        for pid, kept in details:
            person, kept = by_id[pid], kept or {}
            person.survey = person.survey or kept.get("survey") is not None
            if kept.get("recruitment"):
                person.recruitment = dict(kept["recruitment"])
    return People(total, found)


def game_counts(store: Store, run_id: str) -> dict[str, int]:
    """The study's games (practice included) by the game row's status: playing, finished,
    flagged (abandoned games among them)…"""
    query = (
        select(games.c.status, func.count())
        .where(games.c.run_id == run_id, games.c.game != SURVEY_GAME)
        .group_by(games.c.status)
    )
    with store.engine.connect() as conn:
        return {str(status): int(n) for status, n in conn.execute(query)}
