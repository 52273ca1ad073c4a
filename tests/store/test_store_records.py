"""What `Store` gives back is what was written, as typed records: a played game read back
through `transcript`, `judgements`, `seats`, `games` and `results` equals the records that
went in, and the GTT analysis's flat rows are exactly `ResultRecord.analysis_row`."""

from __future__ import annotations

from turinglab.games.spec import GameResult, Judgement, TrialSpec
from turinglab.games.table import TranscriptMessage
from turinglab.store.database import (
    FINISHED,
    GameEnd,
    GameRecord,
    GameStart,
    MessageRecord,
    ResultRecord,
    SeatRecord,
    Store,
    analysis_rows,
)

RUN = "records-run"
SEATS = [
    SeatRecord("interrogator", "smollm2"),
    SeatRecord("witness_a", "person", kind="stand-in", details={"persona": "none"}),
]
SAID = [
    TranscriptMessage(0, "interrogator", "hello?", ("interrogator", "witness_a"), "chat", 10.0),
    TranscriptMessage(1, "witness_a", "hi", ("interrogator", "witness_a"), "chat", 11.5),
    TranscriptMessage(2, "game", "time is up", ("interrogator",), "verdict", 12.0),
]
VERDICT = Judgement(
    "interrogator", "verdict", verdict="witness_a", confidence=70.0, reason="typos", turn=2
)


def _play(store: Store) -> int:
    spec = TrialSpec(0, "k0", "three-party", 7, {s.seat: s.agent for s in SEATS}, {"n": 1})
    store.create_run(RUN, "records", "three-party", {}, {}, [spec])
    (trial,) = store.pending_trials(RUN, max_attempts=1)[0]
    start = GameStart(RUN, trial.trial_id, 1, "three-party", 9.0, SEATS, None, "w")
    result = GameResult(FINISHED, details={"started_at": 9.0}, judgements=[VERDICT])
    with store.writing() as conn:
        game_id = store.start_game(conn, start)
        store.add_messages(conn, [Store.message_row(game_id, m) for m in SAID])
        end = GameEnd(game_id, trial.trial_id, 13.0, 3, 30, 40, worker="w", result=result)
        assert store.end_game(conn, end) == FINISHED
    return game_id


def test_a_played_game_reads_back_as_the_records_written(store_location: str) -> None:
    store = Store(store_location)
    game_id = _play(store)

    transcript = store.transcript(game_id)
    assert [m.text for m in transcript] == [m.text for m in SAID]
    first = transcript[0]
    assert isinstance(first, MessageRecord)
    assert (first.seq, first.sender, first.visible_to, first.phase, first.created_at) == (
        0,
        "interrogator",
        ("interrogator", "witness_a"),
        "chat",
        10.0,
    )
    assert [m.seq for m in store.transcript(game_id, channel="other")] == []

    (judged,) = store.judgements(RUN)
    assert judged.judgement == VERDICT
    assert (judged.game_id, judged.game_status) == (game_id, FINISHED)

    assert store.seats(game_id) == SEATS

    (game,) = store.games(RUN)
    assert isinstance(game, GameRecord)
    assert (game.id, game.key, game.idx, game.status, game.calls, game.flags) == (
        game_id,
        "k0",
        0,
        FINISHED,
        3,
        (),
    )

    (record,) = store.results(RUN)
    assert isinstance(record, ResultRecord)
    assert record.spec == TrialSpec(
        0, "k0", "three-party", 7, {s.seat: s.agent for s in SEATS}, {"n": 1}
    )
    assert (record.attempt_id, record.params) == (game_id, {"n": 1})
    assert record.seats == {"interrogator": "smollm2", "witness_a": "person"}
    assert record.histories["witness_a"] == [
        {"role": "user", "content": "hello?"},
        {"role": "assistant", "content": "hi"},
    ]
    (row,) = analysis_rows(store.results(RUN))
    assert row == record.analysis_row()
    # A non-GTT row: design facts spread in, plus game/seats/params/flags, no empty GTT columns.
    assert row["n"] == 1 and row["game"] == "three-party" and row["flags"] == []
    assert "distinguisher_turns" not in row
    store.close()


def test_store_keeps_every_method_its_callers_use() -> None:
    """Store is composed of parts (store/runs.py, leases.py, game_writes.py, reading.py);
    the names callers use stay on the one class."""
    used = {
        "add_messages", "add_trials", "claim_trials", "close", "create_run", "delete_run",
        "dialect", "end_game", "end_games", "end_sessions", "environment", "expire_leases",
        "failed_attempts", "find_run", "games", "judgements", "lease_owners", "list_runs",
        "message_row", "name_sessions", "pending_trials", "ping", "planned_specs",
        "release_leases", "release_trial", "renew_leases", "resolve_run", "results",
        "run_state", "runs_named", "save_environment", "seat_kinds", "seats", "set_run_status",
        "start_game", "start_games", "state", "transcript", "writing",
    }  # fmt: skip
    assert used <= {name for name in dir(Store) if not name.startswith("_")}
