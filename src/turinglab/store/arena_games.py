"""Arena games in the store: every statement the arena makes, and nothing the arena runs itself.

An arena study is a run (runs.game "arena") whose trials are not planned ahead: each game a
lobby forms appends its trial as it starts (`start_games`), as adaptive sampling appends trials
to a batch run, and links its game row to it. Its index is the game row's id, which is unique
in the store, so processes serving one study never collide. The game ends through the batch
path (`Store.end_game`): one outcome row for the trial, its judgements in `judgements`, so
`Store.results()` and every export read arena games as they read batch games. The game row's
`setup` keeps only design facts (the arena's id of the game, its mode, the trial as played).

Stores written before arena games were trials hold games with no trial whose status and
`correct` were packed into `setup`; `records` reads those as they were written (same numbers),
and a game of that kind still playing gets its trial when it ends.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from sqlalchemy import Connection, bindparam, func, insert, select, update

from turinglab.agents.base import ImagePart
from turinglab.games.control_log import ControlLog
from turinglab.games.spec import GameResult, Judgement, TrialSpec
from turinglab.games.table import TranscriptMessage
from turinglab.store.arena_people import ended
from turinglab.store.arena_records import (
    RESULT_STATUS,
    SURVEY_GAME,
    Record,
    game_record,
    message_entry,
    said_message,
    seat_entry,
)
from turinglab.store.control_events import load_controls
from turinglab.store.database import FLAGGED, PLAYING, GameEnd, GameStart, SeatRecord, Store
from turinglab.store.fencing import claim_games, hold
from turinglab.store.media import load_images
from turinglab.store.schema import games, judgements, messages, outcomes, runs, seats, trials

log = logging.getLogger(__name__)


@dataclass
class StoredGame:
    """A live game as the store holds it: enough to rebuild it in another process."""

    store_id: int
    game: str  # the arena's id of it ("g-…"), what people's clients know
    mode: str
    spec: TrialSpec
    started_at: float
    people: dict[str, str]  # seat -> participant id
    messages: list[TranscriptMessage]
    epoch: int = 0  # the ownership epoch this process claimed it with
    paused_s: float = 0.0  # seconds its clock stood still under earlier owners
    # What it decided besides its messages (games/control_log.py), in order.
    controls: ControlLog = field(default_factory=ControlLog)


# ---- writing (functions of the writer's connection: group-committed) ---------------------------


def start_games(
    store: Store, conn: Connection, starts: Sequence[tuple[GameStart, TrialSpec]]
) -> list[int]:
    """Games' rows and seats, each with its trial appended to its run; returns the game ids.
    Four statements for the whole batch (the writer's group commit), however many games."""
    if not starts:
        return []
    ids = store.start_games(conn, [start for start, _ in starts])
    rows = [
        _trial_row(start.run_id, gid, spec) for (start, spec), gid in zip(starts, ids, strict=True)
    ]
    found = conn.execute(insert(trials).returning(trials.c.id, sort_by_parameter_order=True), rows)
    links = [{"gid": gid, "tid": int(r.id)} for gid, r in zip(ids, found, strict=True)]
    conn.execute(
        update(games).where(games.c.id == bindparam("gid")).values(trial_id=bindparam("tid")),
        links,
    )
    return ids


def _trial_row(run_id: str, gid: int, spec: TrialSpec) -> dict[str, Any]:
    return {
        "run_id": run_id,
        "idx": gid,  # unique in the store: no two processes can append the same index
        "key": spec.key,
        "game": spec.game,
        "seed": spec.seed,
        "seats": dict(spec.seats),
        "params": dict(spec.params),
    }


def _add_trial(conn: Connection, run_id: str, gid: int, spec: TrialSpec) -> int:
    row = _trial_row(run_id, gid, spec)
    tid = int(conn.execute(insert(trials).values(row).returning(trials.c.id)).scalar_one())
    conn.execute(update(games).where(games.c.id == gid).values(trial_id=tid))
    return tid


def end_game(
    store: Store,
    conn: Connection,
    gid: int,
    result: GameResult,
    ended_at: float,
    *,
    worker: str | None,
    epoch: int | None = None,
) -> str:
    """End a game as a batch game ends: its trial's outcome, its judgements, the game row's
    status (returned). With `epoch`, only while that is still the game's (store/fencing.py)."""
    if epoch is not None:
        hold(conn, gid, epoch)
    row = conn.execute(
        select(games.c.run_id, games.c.trial_id, games.c.setup).where(games.c.id == gid)
    ).one()
    trial_id = row.trial_id
    if trial_id is None:  # started by a version that gave arena games no trial
        trial_id = _add_trial(conn, row.run_id, gid, TrialSpec.from_json(row.setup["trial"]))
    details = dict(result.details)
    if (FLAGGED if result.flags else result.status) != result.status:
        details[RESULT_STATUS] = result.status
    end = GameEnd(
        gid,
        trial_id,
        ended_at,
        0,
        0,
        0,
        worker=worker,
        result=replace(result, details=details),
        release=False,  # arena trials are never leased
    )
    return store.end_game(conn, end)


def save_paused(conn: Connection, gid: int, epoch: int, paused_s: float) -> None:
    """Keep how long the game's clock has stood still in all (PausableClock), while `epoch`
    is still the game's: a process that takes it over goes on with the same time left."""
    hold(conn, gid, epoch)
    conn.execute(update(games).where(games.c.id == gid).values(paused_s=paused_s))


def save_survey(
    store: Store,
    conn: Connection,
    run_id: str,
    participant: str,
    answers: Mapping[str, Any],
    worker: str | None,
) -> None:
    """Kept on each of the person's seats in the run (there is no participant table); someone
    never seated (no partner in time) gets a game row of its own (SURVEY_GAME, one human
    seat, no messages, no trial), which `records` skips."""
    save_details(store, conn, run_id, participant, {"survey": dict(answers)}, worker)


def save_details(
    store: Store,
    conn: Connection,
    run_id: str,
    participant: str,
    details: Mapping[str, Any],
    worker: str | None,
) -> None:
    """What belongs to a person (their survey, how their study ended, a withdrawal), kept
    on each of their seats in the run, or on a row of their own when they have none."""
    in_run = select(games.c.id).where(games.c.run_id == run_id)
    rows = conn.execute(
        select(seats.c.id, seats.c.details).where(
            seats.c.participant == participant, seats.c.game_id.in_(in_run)
        )
    ).all()
    for sid, kept in rows:
        new = {**kept, **details}
        conn.execute(update(seats).where(seats.c.id == sid).values(details=new))
    if not rows:
        _participant_row(store, conn, run_id, participant, dict(details), worker)


def save_consent(
    store: Store,
    conn: Connection,
    run_id: str,
    participant: str,
    recruitment: Mapping[str, str],
    worker: str | None,
) -> None:
    """A person's recruitment ids (PROLIFIC_PID…), kept as they consent in a row of their
    own, as a never-seated person's survey is: any process can read them back."""
    details = {"recruitment": dict(recruitment)}
    _participant_row(store, conn, run_id, participant, details, worker)


def _participant_row(
    store: Store,
    conn: Connection,
    run_id: str,
    participant: str,
    details: dict[str, Any],
    worker: str | None,
) -> None:
    """A game row of its own (SURVEY_GAME: one human seat, no messages, no trial), which
    `records` skips, to keep what belongs to a person rather than to a game."""
    now = time.time()
    seat = SeatRecord("participant", "person", "human", participant, details)
    start = GameStart(run_id, None, 1, SURVEY_GAME, now, [seat], None, worker, {"survey": True})
    gid = store.start_game(conn, start)
    conn.execute(update(games).where(games.c.id == gid).values(status="finished", finished_at=now))


def sync_planned(store: Store, run_id: str) -> None:
    """Set the run's planned count to the trials appended so far. Not done per game: every
    process would then lock the run's one row in each of its group commits."""
    with store.writing() as conn:
        count = select(func.count()).where(trials.c.run_id == run_id).scalar_subquery()
        conn.execute(update(runs).where(runs.c.id == run_id).values(n_planned=count))


# ---- taking over -------------------------------------------------------------------------------


def take_over(store: Store, run_id: str, lost: str, me: str) -> list[StoredGame]:
    """Claim every game of the run still playing under the process `lost` for `me`, and load
    each with all it committed (store/fencing.py: one UPDATE that bumps each game's epoch)."""
    with store.writing() as conn:
        # A paused process may hold a game's row lock mid-transaction: end its sessions.
        if store.end_sessions(conn, lost):
            log.warning("takeover: ended the database sessions of %s", lost)
        claimed = claim_games(conn, run_id, lost, me)
        return _load(conn, {c.game_id: c.epoch for c in claimed})


def _load(conn: Connection, epochs: Mapping[int, int]) -> list[StoredGame]:
    """The claimed games (store id -> new epoch), each with all it committed: a few queries
    for all of them, not a few per game (a dead process leaves hundreds)."""
    ids = list(epochs)
    if not ids:
        return []
    rows = conn.execute(select(games).where(games.c.id.in_(ids)).order_by(games.c.id)).all()
    people: dict[int, dict[str, str]] = {gid: {} for gid in ids}
    for s in conn.execute(select(seats).where(seats.c.game_id.in_(ids))):
        if s.kind == "human":
            people[s.game_id][s.seat] = s.participant
    said: dict[int, list[Any]] = {gid: [] for gid in ids}
    query = select(messages).where(messages.c.game_id.in_(ids))
    for m in conn.execute(query.order_by(messages.c.game_id, messages.c.seq)):
        said[m.game_id].append(m)
    images = load_images(conn, [r for ms in said.values() for m in ms for r in (m.images or ())])
    controls = load_controls(conn, ids)
    return [
        StoredGame(
            store_id=row.id,
            game=str(row.setup["arena_game"]),
            mode=str(row.setup["mode"]),
            spec=TrialSpec.from_json(row.setup["trial"]),
            started_at=row.started_at,
            people=people[row.id],
            messages=[said_message(m, images) for m in said[row.id]],
            epoch=epochs[row.id],
            paused_s=float(row.paused_s),
            controls=ControlLog(controls[row.id]),
        )
        for row in rows
    ]


def ended_game(store: Store, run_id: str, arena_game: str) -> tuple[StoredGame, GameResult] | None:
    """An arena game of the run once it has ended, with all it committed and its result: the
    end shown to a page that missed it where its own process cannot (arena/core/stored_end.py)."""
    query = (
        select(*_RESULT_COLUMNS)
        .outerjoin(outcomes, outcomes.c.game_id == games.c.id)
        .where(games.c.run_id == run_id, ended(arena_game))
        .limit(1)
    )
    with store.engine.connect() as conn:
        row = conn.execute(query).first()
        if row is None:
            return None
        (stored,) = _load(conn, {row.id: 0})
        judged = conn.execute(
            select(judgements).where(judgements.c.game_id == row.id).order_by(judgements.c.id)
        ).all()
    return stored, _result(row, [Judgement.from_json(dict(j._mapping)) for j in judged])


def owners(store: Store, ids: Sequence[int]) -> dict[int, str | None]:
    """store game id -> the process that owns it now (`games.worker`)."""
    with store.engine.connect() as conn:
        rows = conn.execute(select(games.c.id, games.c.worker).where(games.c.id.in_(list(ids))))
        return {int(gid): worker for gid, worker in rows}


# ---- reading -----------------------------------------------------------------------------------


def live_games(store: Store, run_id: str) -> list[dict[str, Any]]:
    """Every game of the run still playing, whichever process owns it (`owner`)."""
    # Counted per live game through the (game_id, seq) index: not every message in the store.
    said = select(func.count()).where(messages.c.game_id == games.c.id).scalar_subquery()
    query = (
        select(games.c.id, games.c.worker, games.c.started_at, games.c.setup, said.label("n"))
        .where(games.c.run_id == run_id, games.c.status == PLAYING)
        .order_by(games.c.id)
    )
    with store.engine.connect() as conn:
        rows = conn.execute(query).all()
    return [
        {
            "game": r.setup.get("arena_game"),
            "mode": r.setup.get("mode"),
            "owner": r.worker,
            "messages": r.n or 0,
            "started_at": r.started_at,
            "seats": dict((r.setup.get("trial") or {}).get("seats", {})),
        }
        for r in rows
    ]


def image(store: Store, ref: str) -> ImagePart:
    """One stored image by reference (MediaError when it is not one of this store's)."""
    with store.engine.connect() as conn:
        return load_images(conn, [ref])[ref]


def participants(store: Store, run_id: str) -> dict[str, dict[str, Any]]:
    """participant id -> {games, survey} from the seats of the run, and `recruitment` (the
    ids their link carried) for those who came with one."""
    query = (
        select(seats.c.participant, seats.c.details, games.c.setup)
        .join(games, games.c.id == seats.c.game_id)
        .where(games.c.run_id == run_id, seats.c.kind == "human")
        .order_by(seats.c.id)
    )
    out: dict[str, dict[str, Any]] = {}
    with store.engine.connect() as conn:
        for pid, details, setup in conn.execute(query):
            entry = out.setdefault(pid, {"games": [], "survey": None})
            if setup.get("arena_game") is not None:  # not a survey-only row
                entry["games"].append(setup.get("arena_game"))
            if (details or {}).get("survey") is not None:
                entry["survey"] = details["survey"]
            if (details or {}).get("recruitment"):
                entry["recruitment"] = details["recruitment"]
            for key in ("study_end", "withdrawn"):  # arena/web/handoff.py
                if (details or {}).get(key) is not None:
                    entry[key] = details[key]
    return out


def records(store: Store, run_id: str) -> list[Record]:
    """Every game of an arena run as its record (store/arena_records.py), unfinished ones
    included (status None), each with `stored_status`, the game row's own status."""
    query = (
        select(*_RESULT_COLUMNS)
        .outerjoin(outcomes, outcomes.c.game_id == games.c.id)
        .where(games.c.run_id == run_id, games.c.game != SURVEY_GAME)
        .order_by(games.c.id)
    )
    with store.engine.connect() as conn:
        rows = conn.execute(query).all()
        ids = [r.id for r in rows]
        seat_rows = conn.execute(select(seats).where(seats.c.game_id.in_(ids))).all()
        msg_rows = conn.execute(
            select(messages)
            .where(messages.c.game_id.in_(ids))
            .order_by(messages.c.game_id, messages.c.seq)
        ).all()
        judge_rows = conn.execute(
            select(judgements).where(judgements.c.game_id.in_(ids)).order_by(judgements.c.id)
        ).all()
    seated: dict[int, dict[str, dict[str, Any]]] = {gid: {} for gid in ids}
    for s in seat_rows:
        participant = s.participant if s.kind == "human" else None
        seated[s.game_id][s.seat] = seat_entry(s.agent, participant)
    said: dict[int, list[dict[str, Any]]] = {gid: [] for gid in ids}
    for m in msg_rows:  # images by reference: fetched with the admin password, /admin/media/
        said[m.game_id].append(
            message_entry(
                seq=m.seq,
                sender=m.sender,
                channel=m.channel,
                text=m.text,
                at=m.created_at,
                visible_to=m.visible_to.split(",") if m.visible_to else [],
                images=m.images or (),
            )
        )
    judged: dict[int, list[Any]] = {gid: [] for gid in ids}
    for j in judge_rows:
        judged[j.game_id].append(Judgement.from_json(dict(j._mapping)))
    out = []
    for r in rows:
        record = game_record(
            game=r.setup.get("arena_game"),
            mode=r.setup.get("mode"),
            solo=bool(r.setup.get("solo")),
            spec=r.setup.get("trial"),
            seats=seated[r.id],
            started_at=r.started_at,
            ended_at=r.finished_at,
            messages=said[r.id],
            result=None if r.status == PLAYING else _result(r, judged[r.id]),
        )
        record["stored_status"] = r.status
        out.append(record)
    return out


# A game's row and outcome: what records and _result read.
_RESULT_COLUMNS = (
    games.c.id,
    games.c.status,
    games.c.started_at,
    games.c.finished_at,
    games.c.setup,
    games.c.flags,
    outcomes.c.status.label("outcome_status"),
    outcomes.c.correct.label("outcome_correct"),
    outcomes.c.details.label("outcome_details"),
)


def _result(row: Any, judged: list[Any]) -> GameResult:
    """A finished game's result from its outcome (or, written before arena games were trials,
    from what its setup kept)."""
    if row.outcome_status is not None:
        status = (row.outcome_details or {}).get(RESULT_STATUS, row.outcome_status)
        correct = row.outcome_correct
    else:
        status, correct = row.setup.get("status", row.status), row.setup.get("correct")
    return GameResult(status, correct=correct, judgements=judged, flags=list(row.flags or []))


def address(store: Store) -> str:
    """The store's URL as it may be shown (no password)."""
    return store.engine.url.render_as_string(hide_password=True)
