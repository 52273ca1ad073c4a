"""What the store takes and gives back, as typed records, and the one conversion of each
between a record and its table row (read rows come as mappings: `Row._mapping`, whose
lookups are many times cheaper than a Row's attributes).

Writes: `GameStart`, `GameEnd`, `SeatRecord` go in; `trial_row`, `seat_row`,
`judgement_row` and `message_row` turn a `TrialSpec`, a `SeatRecord`, a `Judgement` or a
`TranscriptMessage` into a row. Reads: `trial_spec`, `seat_record`, `result_record`,
`game_record`, `judgement_record` and `message_record` turn a row back into a record. The
statuses of a game live here too, since every part of the store (and the runner) speaks them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from turinglab.games.spec import GameResult, Judgement, TrialSpec
from turinglab.games.table import TranscriptMessage
from turinglab.store.media import media_ref
from turinglab.store.schema import OUTCOME_EXTRA_COLUMNS

PLAYING, FINISHED, FAILED, SUPERSEDED, INTERRUPTED = (
    "playing",
    "finished",
    "failed",
    "superseded",
    "interrupted",
)
FLAGGED = "flagged"
IMAGE_PARTS = "_image_parts"  # a message row's images, stored by `add_messages` (not a column)
# A row read back: `Row._mapping` (its keys may also be columns, hence Any).
StoredRow = Mapping[Any, Any]


# ---- written ------------------------------------------------------------------------------


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


# ---- read ---------------------------------------------------------------------------------


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


@dataclass(frozen=True)
class GameRecord:
    """One try at playing a trial (an arena game has no trial: `trial_id`, `key`, `idx` None)."""

    id: int
    run_id: str
    trial_id: int | None
    key: str | None  # the trial's
    idx: int | None  # the trial's
    attempt_no: int
    game: str
    status: str  # playing | finished | failed | flagged | superseded | interrupted
    started_at: float
    finished_at: float | None
    calls: int
    tokens_in: int | None
    tokens_out: int | None
    error_kind: str | None
    error_message: str | None
    environment_id: str | None
    worker: str | None
    setup: dict[str, Any]
    flags: tuple[str, ...]
    owner_epoch: int
    paused_s: float  # a live arena game: seconds its clock stood still (saving was delayed)


@dataclass(frozen=True)
class ResultRecord:
    """A finished trial: its design facts, its outcome, the totals of the game that finished
    it, and each seat's view of the transcript (`histories`: seat -> [{"role", "content"}])."""

    idx: int
    key: str
    game: str
    seats: dict[str, str]  # seat -> agent name
    params: dict[str, Any]  # the game's design facts
    seed: int
    trial_id: int
    attempt_id: int  # the game that finished the trial
    status: str
    verdict: int | None
    correct: bool | None
    extra: dict[str, Any]  # the outcome columns only some games fill (OUTCOME_EXTRA_COLUMNS)
    routes: dict[str, Any]
    details: dict[str, Any]
    flags: tuple[str, ...]
    finished_at: float
    attempt_no: int
    calls: int
    tokens_in: int | None
    tokens_out: int | None
    started_at: float
    environment_id: str | None
    histories: dict[str, list[dict[str, str]]]

    @property
    def spec(self) -> TrialSpec:
        """The trial as it was planned."""
        return TrialSpec(self.idx, self.key, self.game, self.seed, self.seats, self.params)

    def analysis_row(self) -> dict[str, Any]:
        """The flat row the GTT analysis reads (analysis/gtt.py sits below the store and
        knows no records): the design facts spread in; GTT rows keep exactly their historical
        keys, other games add `game`, `seats`, `params` and `flags` and leave out the outcome
        columns they do not fill."""
        row = {
            "idx": self.idx,
            "key": self.key,
            **self.params,
            "seed": self.seed,
            "trial_id": self.trial_id,
            "status": self.status,
            "verdict": self.verdict,
            "correct": self.correct,
            **{col: self.extra.get(col) for col in OUTCOME_EXTRA_COLUMNS},
            "routes": self.routes,
            "details": self.details,
            "finished_at": self.finished_at,
            "attempt_no": self.attempt_no,
            "calls": self.calls,
            "tokens_in": self.tokens_in,
            "tokens_out": self.tokens_out,
            "started_at": self.started_at,
            "environment_id": self.environment_id,
            "attempt_id": self.attempt_id,
            "histories": self.histories,
        }
        if self.game != "gtt":
            row.update(game=self.game, seats=self.seats, params=self.params, flags=list(self.flags))
            for col in OUTCOME_EXTRA_COLUMNS:
                if row[col] is None:
                    del row[col]
        return row


@dataclass(frozen=True)
class JudgementRecord:
    """A stored judgement, with the game it was made in and where that game stands."""

    id: int
    game_id: int
    trial_id: int | None
    game_status: str
    judgement: Judgement


@dataclass(frozen=True)
class MessageRecord:
    """One stored message of a transcript."""

    id: int
    game_id: int
    seq: int
    channel: str
    sender: str  # a seat, or "game"
    visible_to: tuple[str, ...]  # the seats that saw it
    phase: str
    text: str
    created_at: float
    latency_s: float | None
    tokens_in: int | None
    tokens_out: int | None
    backend: str | None
    model: str | None
    provider: str | None
    images: tuple[str, ...] | None  # media refs of the images it carried


# ---- conversions --------------------------------------------------------------------------


def analysis_rows(results: Iterable[ResultRecord]) -> list[dict[str, Any]]:
    """`Store.results` as the GTT analysis's flat rows (`ResultRecord.analysis_row`)."""
    return [r.analysis_row() for r in results]


def trial_row(run_id: str, s: TrialSpec, content_hash: str | None = None) -> dict[str, Any]:
    return {
        "run_id": run_id,
        "content_hash": content_hash,
        "idx": s.index,
        "key": s.key,
        "game": s.game,
        "seed": s.seed,
        "seats": dict(s.seats),
        "params": dict(s.params),
    }


def trial_spec(row: StoredRow) -> TrialSpec:
    return TrialSpec(
        index=row["idx"],
        key=row["key"],
        game=row["game"],
        seed=row["seed"],
        seats=dict(row["seats"]),
        params=dict(row["params"]),
    )


def seat_row(game_id: int, s: SeatRecord) -> dict[str, Any]:
    return {
        "game_id": game_id,
        "seat": s.seat,
        "agent": s.agent,
        "kind": s.kind,
        "participant": s.participant,
        "details": s.details,
    }


def seat_record(row: StoredRow) -> SeatRecord:
    return SeatRecord(
        seat=row["seat"],
        agent=row["agent"],
        kind=row["kind"],
        participant=row["participant"],
        details=dict(row["details"]),
    )


def judgement_row(game_id: int, j: Judgement) -> dict[str, Any]:
    return {"game_id": game_id, **j.to_json()}


def result_record(row: StoredRow, histories: dict[str, list[dict[str, str]]]) -> ResultRecord:
    """A row of `outcomes` joined with its trial and its game (`Store.result_records`)."""
    return ResultRecord(
        idx=row["idx"],
        key=row["key"],
        game=row["trial_game"],
        seats=dict(row["trial_seats"]),
        params=dict(row["params"]),
        seed=row["seed"],
        trial_id=row["trial_id"],
        attempt_id=row["game_id"],
        status=row["status"],
        verdict=row["verdict"],
        correct=row["correct"],
        extra={col: row[col] for col in OUTCOME_EXTRA_COLUMNS},
        routes=row["routes"],
        details=row["details"],
        flags=tuple(row["flags"]),
        finished_at=row["finished_at"],
        attempt_no=row["attempt_no"],
        calls=row["calls"],
        tokens_in=row["tokens_in"],
        tokens_out=row["tokens_out"],
        started_at=row["started_at"],
        environment_id=row["environment_id"],
        histories=histories,
    )


def judgement_record(row: StoredRow) -> JudgementRecord:
    """A row of `judgements` joined with its game's `trial_id` and `game_status`."""
    return JudgementRecord(
        id=row["id"],
        game_id=row["game_id"],
        trial_id=row["trial_id"],
        game_status=row["game_status"],
        judgement=Judgement.from_json(row),
    )


def game_record(row: StoredRow) -> GameRecord:
    """A row of `games` joined with its trial's `key` and `idx`."""
    return GameRecord(
        id=row["id"],
        run_id=row["run_id"],
        trial_id=row["trial_id"],
        key=row["key"],
        idx=row["idx"],
        attempt_no=row["attempt_no"],
        game=row["game"],
        status=row["status"],
        started_at=row["started_at"],
        finished_at=row["finished_at"],
        calls=row["calls"],
        tokens_in=row["tokens_in"],
        tokens_out=row["tokens_out"],
        error_kind=row["error_kind"],
        error_message=row["error_message"],
        environment_id=row["environment_id"],
        worker=row["worker"],
        setup=dict(row["setup"]),
        flags=tuple(row["flags"]),
        owner_epoch=row["owner_epoch"],
        paused_s=row["paused_s"],
    )


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


def message_record(row: StoredRow) -> MessageRecord:
    return MessageRecord(
        id=row["id"],
        game_id=row["game_id"],
        seq=row["seq"],
        channel=row["channel"],
        sender=row["sender"],
        visible_to=tuple(row["visible_to"].split(",")),
        phase=row["phase"],
        text=row["text"],
        created_at=row["created_at"],
        latency_s=row["latency_s"],
        tokens_in=row["tokens_in"],
        tokens_out=row["tokens_out"],
        backend=row["backend"],
        model=row["model"],
        provider=row["provider"],
        images=None if row["images"] is None else tuple(row["images"]),
    )
