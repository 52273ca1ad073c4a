"""Arena games in the generic store, message by message.

Every live game is a trial of its study's run and a `games` row (status playing) from its
first moment, with its seats (kind human/agent, people by anonymous participant id only);
every message is queued to the store's group-committing writer the moment the table appends
it, so a crash or restart loses at most the last few milliseconds; the game ends as a batch
game ends (its trial's outcome and judgements), and the exit survey lands on the seats. The
statements themselves are the store's (store/arena_games.py); this module decides when.

Each study (the arena's modes and their games, plus its seed) gets one "arena" run, so
`turinglab runs` lists it, the store's readers and exports work on it unchanged, and two
studies on one store stay apart. Its id is a hash of that identity, so every server process of
one study writes to the same run; its trials are appended as games start.

All writes go through the writer in the order they happen, group-committed with every other
game's (batched_writes.py). Messages said before the game's row has landed wait here for its
id. Each message reports its commit (or why it failed) to the game's commit gate
(commit_gate.py), which shows people only what is stored. Every message and the game's end
are written only while this process holds the game's ownership epoch (store/fencing.py): a
process that lost the game to a takeover writes nothing more to it.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
import logging
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from turinglab.agents.base import ImagePart
from turinglab.arena.core.batched_writes import LoopInbox, StartBatch, commit_interval_s
from turinglab.arena.core.commit_gate import CommitGate
from turinglab.arena.core.control_recorder import GameControls
from turinglab.games.control_log import Logged
from turinglab.games.spec import GameResult
from turinglab.games.table import TranscriptMessage
from turinglab.store import arena_games, arena_people, arena_processes
from turinglab.store.arena_games import StoredGame
from turinglab.store.arena_records import ARENA_GAME
from turinglab.store.control_events import OwnedControl, add_owned_controls
from turinglab.store.database import GameStart, SeatRecord, Store
from turinglab.store.fencing import Refused
from turinglab.store.writer import StoreWriter
from turinglab.study_export import withdrawn_ids, without_withdrawn

if TYPE_CHECKING:
    from sqlalchemy import Connection

    from turinglab.arena.core.live import LiveGame
    from turinglab.arena.core.modes import ArenaSetup

__all__ = ["ARENA_GAME", "ArenaStore", "GameRecorder", "StoredGame"]
log = logging.getLogger(__name__)


def arena_run_id(setup: ArenaSetup) -> str:
    identity = {
        "modes": sorted((m.name, m.game.name, m.solo) for m in setup.modes),
        # Another set of AI witnesses is another study (opened from the admin page, say).
        "witnesses": sorted((m.name, sorted(m.ai_agents)) for m in setup.modes),
        "seed": setup.settings.seed,
    }
    digest = hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()
    return f"arena-{digest[:20]}"


@dataclass
class _StoredId:
    value: int | None = None


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
        self._on_row: list[Callable[[], None]] = []  # waiting for the row (when_stored)
        self.controls: GameControls | None = None  # the game's control log (attach)

    def sink(self, message: TranscriptMessage) -> None:
        if self.controls is not None:  # a control event logged now falls after this message
            self.controls.next_seq = max(self.controls.next_seq, message.seq + 1)
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

    def when_stored(self, call: Callable[[], None]) -> None:
        """`call` once the game's row is committed, or its write has failed for good (then the
        game, shown, ends flagged at once: LiveGame._play)."""
        if self.id.value is not None:
            call()
        else:
            self._on_row.append(call)

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
        if seq < 0:
            waiting, self._on_row = self._on_row, []
            for call in waiting:
                call()

    def control(self, logged: Logged, then: Callable[[], None], vital: bool = True) -> None:
        """Write a control event (fenced by the epoch, after the messages queued before it);
        `then` runs on the loop once it is committed; a refusal or failure goes to the gate
        (of an event not `vital`: it is logged, and `then` runs all the same)."""
        if self.id.value is None:  # never: the game's first event follows its row's start
            self.when_stored(lambda: self.control(logged, then, vital))
            return
        owned = [OwnedControl(self.id.value, self.epoch, logged)]
        gate = self.gate  # the one told it is pending is the one told it settled
        if gate is not None:
            gate.writing_control()
        future = self.bridge.writer.submit(lambda conn: add_owned_controls(conn, owned))
        inbox = self.bridge.inbox()
        future.add_done_callback(lambda f: inbox.put(self._control_settled, then, vital, gate, f))

    def _control_settled(
        self, then: Callable[[], None], vital: bool, gate: CommitGate | None, future: Future[Any]
    ) -> None:
        err = future.exception()
        if gate is not None:
            gate.control_settled()
        if err is None:
            then()
        elif self.gate is not None and vital:
            self.gate.save_failed(err)
        else:
            log.error("arena: control event of game %s not written: %s", self.id.value, err)
            if not vital:  # bookkeeping: what waits on it waits only for its turn
                then()

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
        self._inbox: LoopInbox | None = None
        self.run_id = arena_run_id(setup)
        self.judge_seats = {m.name: m.judge for m in setup.modes}  # where each mode interrogates
        modes = [{"name": m.name, "game": m.game.name, "solo": m.solo} for m in setup.modes]
        store.create_run(
            self.run_id, setup.name, ARENA_GAME, {"modes": modes}, {"seed": setup.settings.seed}, []
        )  # False when another process (or an earlier start) made it: the same run
        arena_games.sync_planned(store, self.run_id)  # the trials earlier starts appended
        # Live games write a message or two at a time from many games at once: commit them
        # together, at most every 20 ms (a message is durable that long after it is said).
        self.writer = writer or StoreWriter(
            store, min_commit_interval_s=commit_interval_s(), retry_for_s=max_outage_s
        )
        self._starts = StartBatch(self.writer, store)

    def inbox(self) -> LoopInbox:
        loop = asyncio.get_running_loop()
        if self._inbox is None or self._inbox.loop is not loop:
            self._inbox = LoopInbox(loop)
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
        try:
            arena_games.sync_planned(self.store, self.run_id)
        except Exception as err:  # the counts only; every game is saved already
            log.warning("arena: run %s: planned count not updated: %s", self.run_id, err)

    # ---- writing ---------------------------------------------------------------------------

    def recorder(self, game_id: int | None = None, said: int = 0, epoch: int = 0) -> GameRecorder:
        return GameRecorder(self, game_id, said, epoch)

    def started(self, recorder: GameRecorder, game: LiveGame) -> None:
        people = {seat: v.participant.id for seat, v in game.views.items()}
        start = GameStart(
            run_id=self.run_id,
            trial_id=None,  # appended with the game (arena_games.start_games)
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

        spec = game.spec
        self.attach(recorder, game, saved_through=-1)
        recorder._report(self._starts.add(start, spec), -1)  # queued before any message

    def attach(self, recorder: GameRecorder, game: LiveGame, saved_through: int) -> None:
        """Show `game`'s people only what is stored, and save its end before the reveal."""
        gate = CommitGate(game, saved_through=saved_through, max_outage_s=self.max_outage_s)
        recorder.gate = game.gate = gate
        recorder.controls = game.controls
        game.controls.bind(recorder.control)
        game.save_end = functools.partial(self.save_end, recorder)
        game.save_paused = functools.partial(self.save_paused, recorder)

    def save_paused(self, recorder: GameRecorder, paused_s: float) -> None:
        """Keep the seconds the game's clock has stood still (written after the messages
        queued before it, while this process owns the game). A write that fails only costs a
        takeover those seconds: logged, not retried."""
        gid = recorder.id.value
        if gid is None:  # never: the clock stops only behind a message, written after the row
            log.warning("arena: paused time of a game without a row not saved")
            return

        def op(conn: Connection) -> None:
            arena_games.save_paused(conn, gid, recorder.epoch, paused_s)

        def failed(done: Future[Any]) -> None:
            if done.exception() is not None:
                log.warning("arena: game %s: paused time not saved: %s", gid, done.exception())

        self.writer.submit(op).add_done_callback(failed)

    async def save_end(self, recorder: GameRecorder, game: LiveGame, result: GameResult) -> None:
        """The game's end and verdict, committed while this process still owns the game."""
        ended_at = game.ended_at or time.time()
        await self.writer.wait(self.writer.submit(self._end_op(recorder, result, ended_at)))

    def _end_op(self, recorder: GameRecorder, result: GameResult, ended_at: float) -> Any:
        def op(conn: Connection) -> str:
            if recorder.id.value is None:
                raise Refused("the game's row was never saved")
            return self.end(conn, recorder.id.value, result, ended_at, epoch=recorder.epoch)

        return op

    def end(
        self,
        conn: Connection,
        gid: int,
        result: GameResult,
        ended_at: float,
        epoch: int | None = None,
    ) -> str:
        """End game `gid` on the writer's connection `conn` (only while `epoch` is its own,
        when given): the outcome of its trial, its judgements, its row's status."""
        return arena_games.end_game(
            self.store, conn, gid, result, ended_at, worker=self.worker, epoch=epoch
        )

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

    def survey(self, participant: str, answers: Mapping[str, Any]) -> None:
        """Kept on each of the person's seats in this study (there is no participant table)."""
        op = functools.partial(
            arena_games.save_survey, self.store, run_id=self.run_id, participant=participant,
            answers=dict(answers), worker=self.worker,
        )  # fmt: skip
        self.writer.submit(lambda conn: op(conn))

    def person_details(self, participant: str, details: Mapping[str, Any]) -> None:
        """How the person's study ended, or their withdrawal (arena/web/handoff.py), kept with
        their survey."""
        op = functools.partial(
            arena_games.save_details, self.store, run_id=self.run_id, participant=participant,
            details=dict(details), worker=self.worker,
        )  # fmt: skip
        self.writer.submit(lambda conn: op(conn))

    def consented(self, participant: str, recruitment: Mapping[str, str]) -> None:
        """The person's recruitment ids, kept as they consent (store/arena_games.py)."""
        op = functools.partial(
            arena_games.save_consent, self.store, run_id=self.run_id, participant=participant,
            recruitment=dict(recruitment), worker=self.worker,
        )  # fmt: skip
        self.writer.submit(lambda conn: op(conn))

    async def flush(self) -> None:
        """Wait until everything queued so far is committed."""
        await self.writer.call(lambda conn: None)

    # ---- reading (the admin export reads the store, so data survives restarts) --------------

    def records(self) -> list[dict[str, Any]]:
        """Every game of this study, in `LiveGame.record()`'s shape, unfinished ones included
        (status None)."""
        return arena_games.records(self.store, self.run_id)

    def live(self) -> list[dict[str, Any]]:
        """Every game of this study still playing, whichever process owns it (`owner`)."""
        return arena_games.live_games(self.store, self.run_id)

    def take_over(self, lost: str) -> list[StoredGame]:
        """Claim every game still playing under the process `lost` for this process, and load
        each with all it committed. One UPDATE … WHERE worker = lost that also bumps each
        game's ownership epoch: when several processes try at once, the database gives each
        game to exactly one of them, and `lost`, should it wake up, can write nothing more."""
        return arena_games.take_over(self.store, self.run_id, lost, self.worker)

    def owners(self, ids: list[int]) -> dict[int, str | None]:
        """store game id -> the process that owns it now (`games.worker`)."""
        return arena_games.owners(self.store, ids)

    def image(self, ref: str) -> ImagePart:
        """One stored image by reference (MediaError when it is not one of this store's)."""
        return arena_games.image(self.store, ref)

    def participants(self) -> dict[str, dict[str, Any]]:
        """participant id -> {games, survey, recruitment} from the seats of this study."""
        return arena_games.participants(self.store, self.run_id)

    def people(self, limit: int) -> arena_people.People:
        """How many took part in this study, and the newest `limit` with ids and rounds."""
        return arena_people.people(self.store, self.run_id, limit)

    def live_workers(self) -> set[str]:
        """The processes owning a game of this study still playing."""
        return arena_people.live_workers(self.store, self.run_id)

    def live_game_of(self, participant: str) -> tuple[str, str | None] | None:
        """(the arena's game id, its owner) of the game `participant` is playing, if any."""
        return arena_people.live_game_of(self.store, self.run_id, participant)

    def say_silent(self, process: str) -> float | None:
        """`process` lives, cut off from Redis; when another noticed (store/arena_processes)."""
        return arena_processes.say_silent(self.store, self.run_id, process)

    def notice_silent(self, process: str, within_s: float) -> bool:
        return arena_processes.notice_silent(self.store, self.run_id, process, within_s)

    def game_end(self, participant: str, game: str) -> tuple[str | None, float] | None:
        """(its owner, when it ended) of `participant`'s game `game`, once ended."""
        return arena_people.game_end(self.store, self.run_id, participant, game)

    def ended_game(self, game: str) -> tuple[StoredGame, GameResult] | None:
        """The game `game` (the arena's id) once ended: all it committed, and its result."""
        return arena_games.ended_game(self.store, self.run_id, game)

    def study_rounds(self, participant: str) -> arena_people.PastRounds:
        """A person's rounds in this study by role, and whom they met (their round book)."""
        return arena_people.study_rounds(self.store, self.run_id, participant, self.judge_seats)

    def game_counts(self) -> dict[str, int]:
        """This study's games by status, whichever process played them."""
        return arena_people.game_counts(self.store, self.run_id)

    def export(self) -> dict[str, Any]:
        people = self.participants()
        gone = withdrawn_ids(people)  # withdrawn: left out, games and all
        records = without_withdrawn(self.records(), gone)
        finished = [g for g in records if g["status"] is not None]
        return {
            "games": [g for g in finished if not g["solo"]],
            "practice_games": [g for g in finished if g["solo"]],
            "unfinished_games": [g for g in records if g["status"] is None],
            "participants": [
                {"participant": pid, "consented": True, **entry}
                for pid, entry in people.items()
                if pid not in gone
            ],
            "withdrawn_participants": len(gone),
        }
