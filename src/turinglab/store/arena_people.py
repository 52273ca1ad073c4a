"""What the arena's /admin reads of a study: its participants, newest first, and its games by
status — whichever process played them, in a few grouped statements rather than every record.

A person's rows are the seats of the run's games plus their own rows (arena_records.SURVEY_GAME:
recruitment ids kept at consent, a never-seated person's survey). Rounds done count as the
round book (arena/core/rounds.py) counts them: every study game they sat in that is being played or
finished cleanly; practice, abandoned and flagged games give theirs back. `study_rounds` counts
one person's the same way, per role, for rebuilding their round book in Redis after Redis lost it.
"""

from __future__ import annotations

from collections.abc import Mapping
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
    end: str | None = None  # how their study ended (arena/web/handoff.py), once surveyed
    withdrawn: bool = False  # withdrew consent after taking part


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
    if isinstance(kept.get("study_end"), dict):
        person.end = str(kept["study_end"].get("end"))
    person.withdrawn = person.withdrawn or bool(kept.get("withdrawn"))


@dataclass(frozen=True)
class PastRounds:
    """One person's study so far, as the store has it."""

    interrogated: int
    witnessed: int
    met: frozenset[str]  # everyone seated with them in a study game, whatever its end


def live_game_of(store: Store, run_id: str, participant: str) -> tuple[str, str | None] | None:
    """The game of the study `participant` sits in that is still playing, as (the arena's id
    of it, the process that owns it), or None: where to find them when Redis has no route."""
    query = (
        select(games.c.setup["arena_game"].as_string(), games.c.worker)
        .join(seats, seats.c.game_id == games.c.id)
        .where(_in_run(run_id), seats.c.participant == participant, games.c.status == PLAYING)
        .order_by(desc(games.c.id))
        .limit(1)
    )
    with store.engine.connect() as conn:
        row = conn.execute(query).first()
    return None if row is None else (str(row[0]), row[1])


def live_workers(store: Store, run_id: str) -> set[str]:
    """The processes owning a game of the study still playing (`games.worker`): once Redis has
    restarted empty, the only record of one that died just before and cannot list itself."""
    query = (
        select(games.c.worker)
        .distinct()
        .where(games.c.run_id == run_id, games.c.status == PLAYING, games.c.worker.is_not(None))
    )
    with store.engine.connect() as conn:
        return {str(w) for (w,) in conn.execute(query)}


def ended(arena_game: str) -> Any:
    """The game the arena calls `arena_game`, once its end is stored."""
    return and_(
        games.c.setup["arena_game"].as_string() == arena_game,
        games.c.status != PLAYING,
        games.c.finished_at.is_not(None),
    )


def game_end(
    store: Store, run_id: str, participant: str, arena_game: str
) -> tuple[str | None, float] | None:
    """(the process that played it, when it ended) of `participant`'s game `arena_game` of
    the study once it has ended, else None: where a page that missed its end can be shown it."""
    query = (
        select(games.c.worker, games.c.finished_at)
        .join(seats, seats.c.game_id == games.c.id)
        .where(_in_run(run_id), seats.c.participant == participant, ended(arena_game))
        .limit(1)
    )
    with store.engine.connect() as conn:
        row = conn.execute(query).first()
    return None if row is None else (row[0], float(row[1]))


def study_rounds(
    store: Store, run_id: str, participant: str, judge_seats: Mapping[str, str]
) -> PastRounds:
    """`participant`'s study rounds by role (counted as `people` counts them) and whom they met.
    `judge_seats` maps each mode to the seat that interrogates there; a seat in a mode it does
    not name interrogates when it judges in some mode."""
    other = seats.alias("other")
    query = (
        select(
            games.c.id,
            games.c.status,
            games.c.setup["mode"].as_string().label("mode"),
            games.c.setup["solo"].as_boolean().label("solo"),
            seats.c.seat,
            other.c.participant.label("partner"),
        )
        .join(games, games.c.id == seats.c.game_id)
        .outerjoin(
            other,
            and_(
                other.c.game_id == seats.c.game_id,
                other.c.kind == "human",
                other.c.participant != participant,
            ),
        )
        .where(_in_run(run_id), seats.c.participant == participant, games.c.game != SURVEY_GAME)
    )
    with store.engine.connect() as conn:
        rows = conn.execute(query).all()
    judging = set(judge_seats.values())
    roles: dict[int, bool] = {}  # counted game -> the person interrogated
    met: set[str] = set()
    for r in rows:
        if r.partner is not None and not r.solo:
            met.add(str(r.partner))
        if r.status in (PLAYING, FINISHED) and not r.solo:
            judge = judge_seats.get(r.mode)
            roles[r.id] = r.seat == judge if judge is not None else r.seat in judging
    asked = sum(roles.values())
    return PastRounds(asked, len(roles) - asked, frozenset(met))


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
