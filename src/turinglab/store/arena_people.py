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

from sqlalchemy import and_, bindparam, desc, func, select

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
    """The study's participants: how many, and the newest `limit` with their ids and rounds.
    Two statements: who the newest are (and how many there are in all), grouped without
    reading any JSON; then only their rows, read whole."""
    first = func.min(seats.c.id).label("first")
    newest = (
        select(seats.c.participant, first, func.count().over().label("total"))
        .join(games, games.c.id == seats.c.game_id)
        .where(_in_run(run_id))
        .group_by(seats.c.participant)
        .order_by(desc(first))
        .limit(limit)
    )
    theirs = (
        select(
            seats.c.participant,
            seats.c.details,
            games.c.game,
            games.c.status,
            games.c.started_at,
            games.c.setup["solo"].as_boolean().label("solo"),
        )
        .join(games, games.c.id == seats.c.game_id)
        .where(_in_run(run_id), seats.c.participant.in_(bindparam("pids", expanding=True)))
    )
    with store.engine.connect() as conn:
        found = conn.execute(newest).all()
        rows = conn.execute(theirs, {"pids": [r.participant for r in found]}).all() if found else []
    by_id = {r.participant: Person(r.participant, None, 0, 0) for r in found}
    for r in rows:
        _add(by_id[r.participant], r)
    return People(int(found[0].total) if found else 0, list(by_id.values()))


def _add(person: Person, row: Any) -> None:
    """One of the person's rows: a game they sat in, or their own (consent, survey)."""
    if person.first_seen is None or row.started_at < person.first_seen:
        person.first_seen = float(row.started_at)
    if row.game != SURVEY_GAME:
        person.games += 1
        person.rounds += row.status in (PLAYING, FINISHED) and not row.solo
    kept = row.details or {}
    person.survey = person.survey or kept.get("survey") is not None
    if kept.get("recruitment"):
        person.recruitment = dict(kept["recruitment"])


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
