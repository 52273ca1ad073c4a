"""Arena games in the generic store, message by message.

Every live game is a `games` row (status playing) from its first moment, with its seats (kind
human/agent, people by anonymous participant id only); every message is queued to the store's
group-committing writer the moment the table appends it, so a crash or restart loses at most
the last few milliseconds; the verdict, flags and the exit survey land at the end.

Arena games have no planned trial, but a game row needs a run: each study (the arena's modes
and their games, plus its seed) gets one "arena" run, so `turinglab runs` lists it, the store's
readers work on it unchanged, and two studies on one store stay apart. Its id is a hash of that
identity, so every server process of one study writes to the same run.

The exit survey is kept on the person's seats. Someone who never played (no partner in time)
has no seat, so their survey gets a game row of its own (game "arena-survey", one human seat,
no messages), which the readers below skip as a game and read as a participant.

All writes go through the writer in the order they happen, group-committed with every other
game's. Messages said before the game's row has landed wait here for its id. Each message
reports its commit (or why it failed) to the game's commit gate (commit_gate.py), which shows
people only what is stored. Every message and the game's end are written only while this
process holds the game's ownership epoch (store/fencing.py): a process that lost the game to a
takeover writes nothing more to it.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
import logging
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, func, select, update

from turinglab.agents.base import ImagePart
from turinglab.arena.commit_gate import CommitGate
from turinglab.games.spec import GameResult, TrialSpec
from turinglab.games.table import TranscriptMessage
from turinglab.store.database import PLAYING, GameEnd, GameStart, SeatRecord, Store
from turinglab.store.fencing import Refused, claim_games, hold
from turinglab.store.media import load_images
from turinglab.store.schema import games, judgements, messages, seats
from turinglab.store.writer import StoreWriter

if TYPE_CHECKING:
    from turinglab.arena.live import LiveGame
    from turinglab.arena.modes import ArenaSetup

log = logging.getLogger(__name__)
ARENA_GAME = "arena"
# A message is shown once committed, so this interval is most of what showing it costs (see
# benchmarks/README.md); shorter buys latency with more transactions.
COMMIT_INTERVAL_ENV = "TURINGLAB_ARENA_COMMIT_INTERVAL_S"  # runs.game of an arena run
SURVEY_GAME = "arena-survey"  # games.game of the row holding a never-seated person's survey


def commit_interval_s() -> float:
    """The arena writer's group-commit interval: 20 ms unless the environment says."""
    raw = os.environ.get(COMMIT_INTERVAL_ENV, "0.02")
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"{COMMIT_INTERVAL_ENV}={raw!r} is not a number of seconds") from None
    if not 0 <= value <= 1:
        raise ValueError(f"{COMMIT_INTERVAL_ENV}={raw!r}: give 0 to 1 seconds")
    return value


def arena_run_id(setup: ArenaSetup) -> str:
    identity = {
        "modes": sorted((m.name, m.game.name, m.solo) for m in setup.modes),
        # Another set of AI witnesses is another study (opened from the admin page, say).
        "witnesses": sorted((m.name, sorted(m.ai_agents)) for m in setup.modes),
        "seed": setup.settings.seed,
    }
    digest = hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()
    return f"arena-{digest[:20]}"


class _LoopInbox:
    """Calls from the writer thread, run on the event loop: one wake-up per commit, not one
    per message (a group commit settles many futures at once)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self._calls: deque[tuple[Callable[..., None], tuple[Any, ...]]] = deque()
        self._lock = threading.Lock()
        self._woken = False

    def put(self, call: Callable[..., None], *args: Any) -> None:
        with self._lock:
            self._calls.append((call, args))
            if self._woken:
                return
            self._woken = True
        self.loop.call_soon_threadsafe(self._drain)

    def _drain(self) -> None:
        with self._lock:
            calls, self._calls = self._calls, deque()
            self._woken = False
        for call, args in calls:
            call(*args)


@dataclass
class _StoredId:
    value: int | None = None


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


class GameRecorder:
    """One live game's writes; `sink` is the Table's message sink. A game taken over from a
    lost process (cluster.py) is recorded under its stored id and epoch, and the messages it
    replays (seq below `said`) are already stored."""

    def __init__(
        self, bridge: ArenaStore, game_id: int | None = None, said: int = 0, epoch: int = 0
    ) -> None:
        self.bridge = bridge
        self.id = _StoredId(game_id)
        self.said = said
        self.epoch = epoch
        self.gate: CommitGate | None = None  # told of every commit, or why saving failed
        self._early: list[TranscriptMessage] = []  # said before the game's row landed

    def sink(self, message: TranscriptMessage) -> None:
        if message.seq < self.said:
            return
        if self.gate is not None:
            self.gate.writing(message.seq)
        if self.id.value is None:
            self._early.append(message)
            return
        self._write(message)

    def _write(self, message: TranscriptMessage) -> None:
        row = Store.message_row(self.id.value or 0, message)
        self._report(self.bridge.writer.add_owned_message(row, self.epoch), message.seq)

    def _report(self, future: Future[Any], seq: int) -> None:
        """Tell the gate, on the event loop, when the write of `seq` is committed or failed."""
        inbox = self.bridge.inbox()
        future.add_done_callback(lambda f: inbox.put(self._settled, seq, f))

    def _settled(self, seq: int, future: Future[Any]) -> None:
        err = future.exception()
        if err is None and seq < 0:  # the game's row landed
            self.landed(int(future.result()))
        elif self.gate is None:
            if err is not None:
                log.error("arena: write of game %s failed: %s", self.id.value, err)
        elif err is None:
            self.gate.saved(seq)
        else:
            self.gate.save_failed(err)

    def landed(self, game_id: int) -> None:
        self.id.value = game_id
        early, self._early = self._early, []
        for message in early:
            self._write(message)


class ArenaStore:
    def __init__(
        self,
        store: Store,
        setup: ArenaSetup,
        *,
        worker: str = "arena",
        writer: StoreWriter | None = None,
        max_outage_s: float = 60.0,
    ) -> None:
        self.store = store
        self.worker = worker
        # How long a game waits for an unreachable store before it ends flagged; the writer
        # retries a commit for as long.
        self.max_outage_s = max_outage_s
        self._ending: set[asyncio.Future[None]] = set()
        self._inbox: _LoopInbox | None = None
        self.run_id = arena_run_id(setup)
        modes = [{"name": m.name, "game": m.game.name, "solo": m.solo} for m in setup.modes]
        store.create_run(
            self.run_id, "arena", ARENA_GAME, {"modes": modes}, {"seed": setup.settings.seed}, []
        )  # False when another process (or an earlier start) made it: the same run
        # Live games write a message or two at a time from many games at once: commit them
        # together, at most every 20 ms (a message is durable that long after it is said).
        self.writer = writer or StoreWriter(
            store, min_commit_interval_s=commit_interval_s(), retry_for_s=max_outage_s
        )

    def inbox(self) -> _LoopInbox:
        loop = asyncio.get_running_loop()
        if self._inbox is None or self._inbox.loop is not loop:
            self._inbox = _LoopInbox(loop)
        return self._inbox

    def for_setup(self, setup: ArenaSetup) -> ArenaStore:
        """Another study on the same store: its own run, the same writer (one order)."""
        return ArenaStore(
            self.store,
            setup,
            worker=self.worker,
            writer=self.writer,
            max_outage_s=self.max_outage_s,
        )

    def close(self) -> None:
        self.writer.close()

    # ---- writing ---------------------------------------------------------------------------

    def recorder(self, game_id: int | None = None, said: int = 0, epoch: int = 0) -> GameRecorder:
        return GameRecorder(self, game_id, said, epoch)

    def started(self, recorder: GameRecorder, game: LiveGame) -> None:
        people = {seat: v.participant.id for seat, v in game.views.items()}
        start = GameStart(
            run_id=self.run_id,
            trial_id=None,
            attempt_no=1,
            game=game.mode.game.name,
            started_at=game.started_at,
            seats=[
                SeatRecord(seat, agent, "human", people[seat])
                if seat in people
                else SeatRecord(seat, agent, "agent")
                for seat, agent in game.spec.seats.items()
            ],
            environment_id=None,
            worker=self.worker,
            setup={
                "arena_game": game.id,
                "mode": game.mode.name,
                "solo": game.mode.solo,
                "trial": game.spec.to_json(),
            },
        )

        self.attach(recorder, game, saved_through=-1)
        recorder._report(self.writer.start_game(start), -1)  # queued before any message

    def attach(self, recorder: GameRecorder, game: LiveGame, saved_through: int) -> None:
        """Show `game`'s people only what is stored, and save its end before the reveal."""
        gate = CommitGate(game, saved_through=saved_through, max_outage_s=self.max_outage_s)
        recorder.gate = game.gate = gate
        game.save_end = functools.partial(self.save_end, recorder)

    async def save_end(self, recorder: GameRecorder, game: LiveGame, result: GameResult) -> None:
        """The game's end and verdict, committed while this process still owns the game."""
        ended_at = game.ended_at or time.time()
        await self.writer.wait(self.writer.submit(self._end_op(recorder, result, ended_at)))

    def _end_op(self, recorder: GameRecorder, result: GameResult, ended_at: float) -> Any:
        def op(conn: Connection) -> None:
            if recorder.id.value is None:
                raise Refused("the game's row was never saved")
            hold(conn, recorder.id.value, recorder.epoch)
            self.end(conn, recorder.id.value, result, ended_at)

        return op

    def ended(self, recorder: GameRecorder, game: LiveGame) -> None:
        """After the game: its end, unless it was saved before the reveal. Kept trying while
        the store is unreachable (an end is small, and it closes the game's row)."""
        if game.end_saved:
            return
        result = game.result or GameResult("flagged", flags=["arena: no result"])
        op = self._end_op(recorder, result, game.ended_at or time.time())
        task = asyncio.ensure_future(self._keep_trying(op, game.id))
        self._ending.add(task)
        task.add_done_callback(self._ending.discard)

    async def _keep_trying(self, op: Any, game: str) -> None:
        while True:
            try:
                await self.writer.wait(self.writer.submit(op))
                return
            except Refused as err:
                log.warning("arena: end of game %s not written: %s", game, err)
                return
            except Exception as err:
                log.error("arena: end of game %s not saved yet (%s); trying again", game, err)
                await asyncio.sleep(1.0)

    def end(self, conn: Connection, gid: int, result: GameResult, ended_at: float) -> None:
        end = GameEnd(gid, None, ended_at, 0, 0, 0, worker=self.worker, result=result)
        self.store.end_game(conn, end)
        # No trial, so no outcome row: the result's own summary goes with the game.
        setup = conn.execute(select(games.c.setup).where(games.c.id == gid)).scalar_one()
        setup = {**setup, "status": result.status, "correct": result.correct}
        conn.execute(update(games).where(games.c.id == gid).values(setup=setup))

    def survey(self, participant: str, answers: Mapping[str, Any]) -> None:
        """Kept on each of the person's seats in this study (there is no participant table)."""
        answers = dict(answers)

        def op(conn: Connection) -> None:
            in_run = select(games.c.id).where(games.c.run_id == self.run_id)
            rows = conn.execute(
                select(seats.c.id, seats.c.details).where(
                    seats.c.participant == participant, seats.c.game_id.in_(in_run)
                )
            ).all()
            for sid, details in rows:
                new = {**details, "survey": answers}
                conn.execute(update(seats).where(seats.c.id == sid).values(details=new))
            if not rows:  # never seated (no partner in time): the survey is kept on its own
                self._survey_only(conn, participant, {"survey": answers})

        self.writer.submit(op)

    def consented(self, participant: str, recruitment: Mapping[str, str]) -> None:
        """The person's recruitment ids (PROLIFIC_PID…), kept as they consent in a row of their
        own, like a never-seated person's survey: any process can read them back."""
        details = {"recruitment": dict(recruitment)}
        self.writer.submit(lambda conn: self._survey_only(conn, participant, details))

    def _survey_only(self, conn: Connection, participant: str, details: dict[str, Any]) -> None:
        now = time.time()
        seat = SeatRecord("participant", "person", "human", participant, details)
        start = GameStart(
            self.run_id, None, 1, SURVEY_GAME, now, [seat], None, self.worker, {"survey": True}
        )
        gid = self.store.start_game(conn, start)
        done = update(games).where(games.c.id == gid).values(status="finished", finished_at=now)
        conn.execute(done)

    async def flush(self) -> None:
        """Wait until everything queued so far is committed."""
        await self.writer.call(lambda conn: None)

    # ---- reading (the admin export reads the store, so data survives restarts) --------------

    def records(self) -> list[dict[str, Any]]:
        """Every game of this study, in `LiveGame.record()`'s shape, unfinished ones included
        (status None)."""
        return arena_records(self.store, self.run_id)

    def live(self) -> list[dict[str, Any]]:
        """Every game of this study still playing, whichever process owns it (`worker`)."""
        said = (
            select(messages.c.game_id, func.count().label("n"))
            .group_by(messages.c.game_id)
            .subquery()
        )
        query = (
            select(games.c.id, games.c.worker, games.c.started_at, games.c.setup, said.c.n)
            .outerjoin(said, said.c.game_id == games.c.id)
            .where(games.c.run_id == self.run_id, games.c.status == PLAYING)
            .order_by(games.c.id)
        )
        with self.store.engine.connect() as conn:
            rows = conn.execute(query).all()
        return [
            {
                "game": r.setup.get("arena_game"),
                "mode": r.setup.get("mode"),
                "owner": r.worker,
                "messages": r.n or 0,
                "started_at": r.started_at,
                "seats": {s: a for s, a in (r.setup.get("trial") or {}).get("seats", {}).items()},
            }
            for r in rows
        ]

    def take_over(self, lost: str) -> list[StoredGame]:
        """Claim every game still playing under the process `lost` for this process, and load
        each with all it committed. One UPDATE … WHERE worker = lost that also bumps each
        game's ownership epoch: when several processes try at once, the database gives each
        game to exactly one of them, and `lost`, should it wake up, can write nothing more."""
        with self.store.writing() as conn:
            # A paused process may hold a game's row lock mid-transaction: end its sessions.
            if self.store.end_sessions(conn, lost):
                log.warning("takeover: ended the database sessions of %s", lost)
            claimed = claim_games(conn, self.run_id, lost, self.worker)
            return [self._stored(conn, c.game_id, c.epoch) for c in claimed]

    def _stored(self, conn: Connection, gid: int, epoch: int) -> StoredGame:
        row = conn.execute(select(games).where(games.c.id == gid)).one()
        people = {
            s.seat: s.participant
            for s in conn.execute(select(seats).where(seats.c.game_id == gid))
            if s.kind == "human"
        }
        rows = conn.execute(
            select(messages).where(messages.c.game_id == gid).order_by(messages.c.seq)
        ).all()
        images = load_images(conn, [ref for m in rows for ref in (m.images or ())])
        said = [
            TranscriptMessage(
                seq=m.seq,
                sender=m.sender,
                text=m.text,
                visible_to=tuple(m.visible_to.split(",")) if m.visible_to else (),
                phase=m.phase,
                created_at=m.created_at,
                latency_s=m.latency_s,
                tokens_in=m.tokens_in,
                tokens_out=m.tokens_out,
                channel=m.channel,
                images=tuple(images[ref] for ref in (m.images or ())),
            )
            for m in rows
        ]
        return StoredGame(
            store_id=gid,
            game=str(row.setup["arena_game"]),
            mode=str(row.setup["mode"]),
            spec=TrialSpec.from_json(row.setup["trial"]),
            started_at=row.started_at,
            people=people,
            messages=said,
            epoch=epoch,
        )

    def owners(self, ids: list[int]) -> dict[int, str | None]:
        """store game id -> the process that owns it now (`games.worker`)."""
        with self.store.engine.connect() as conn:
            rows = conn.execute(select(games.c.id, games.c.worker).where(games.c.id.in_(ids)))
            return {int(gid): worker for gid, worker in rows}

    def image(self, ref: str) -> ImagePart:
        """One stored image by reference (MediaError when it is not one of this store's)."""
        with self.store.engine.connect() as conn:
            return load_images(conn, [ref])[ref]

    def participants(self) -> dict[str, dict[str, Any]]:
        """participant id -> {games, survey, recruitment} from the seats of this study."""
        query = (
            select(seats.c.participant, seats.c.details, games.c.setup)
            .join(games, games.c.id == seats.c.game_id)
            .where(games.c.run_id == self.run_id, seats.c.kind == "human")
            .order_by(seats.c.id)
        )
        out: dict[str, dict[str, Any]] = {}
        with self.store.engine.connect() as conn:
            for pid, details, setup in conn.execute(query):
                entry = out.setdefault(pid, {"games": [], "survey": None, "recruitment": {}})
                if setup.get("arena_game") is not None:  # not a survey-only row
                    entry["games"].append(setup.get("arena_game"))
                if (details or {}).get("survey") is not None:
                    entry["survey"] = details["survey"]
                if (details or {}).get("recruitment"):
                    entry["recruitment"] = details["recruitment"]
        return out

    def export(self) -> dict[str, Any]:
        records = self.records()
        finished = [g for g in records if g["status"] is not None]
        return {
            "games": [g for g in finished if not g["solo"]],
            "practice_games": [g for g in finished if g["solo"]],
            "unfinished_games": [g for g in records if g["status"] is None],
            "participants": [
                {"participant": pid, "consented": True, **entry}
                for pid, entry in self.participants().items()
            ],
        }


def arena_records(store: Store, run_id: str) -> list[dict[str, Any]]:
    """Every game of an arena run, in `LiveGame.record()`'s shape, unfinished ones included
    (status None)."""
    with store.engine.connect() as conn:
        rows = conn.execute(
            select(games)
            .where(games.c.run_id == run_id, games.c.game != SURVEY_GAME)
            .order_by(games.c.id)
        ).all()
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
    by_game: dict[int, dict[str, Any]] = {}
    for r in rows:
        playing = r.status == "playing"
        by_game[r.id] = {
            "game": r.setup.get("arena_game"),
            "mode": r.setup.get("mode"),
            "solo": bool(r.setup.get("solo")),
            "trial": r.setup.get("trial"),
            "seats": {},
            "started_at": r.started_at,
            "ended_at": r.finished_at,
            "messages": [],
            "status": None if playing else r.setup.get("status", r.status),
            "stored_status": r.status,
            "correct": r.setup.get("correct"),
            "judgements": [],
            "flags": list(r.flags or []),
        }
    for s in seat_rows:
        by_game[s.game_id]["seats"][s.seat] = (
            {"kind": "human", "participant": s.participant}
            if s.kind == "human"
            else {"kind": "ai", "agent": s.agent}
        )
    for m in msg_rows:
        row = {
            "seq": m.seq,
            "sender": m.sender,
            "channel": m.channel,
            "text": m.text,
            "at": m.created_at,
            "visible_to": m.visible_to.split(",") if m.visible_to else [],
        }
        if m.images:  # fetched with the admin password: /admin/media/<ref>
            row["images"] = list(m.images)
        by_game[m.game_id]["messages"].append(row)
    for j in judge_rows:
        by_game[j.game_id]["judgements"].append(
            {
                "judge": j.judge,
                "kind": j.kind,
                "verdict": j.verdict,
                "confidence": j.confidence,
                "reason": j.reason,
                "choice": j.choice,
                "tie": j.tie,
                "turn": j.turn,
                "created_at": j.created_at,
                "details": dict(j.details or {}),
            }
        )
    return list(by_game.values())
