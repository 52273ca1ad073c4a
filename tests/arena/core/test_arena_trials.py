"""Arena games are trials of their study's run, written and read through the store.

A game played over real websockets appends its trial as it starts (index: the game row's id),
and ends as a batch game ends: one outcome row for its trial, its verdict in `judgements`, so
`Store.results()`, `Store.judgements()` and `turinglab runs` see it like any batch game. A store
written before (tests/fixtures/arena_store_v5.db: no trials, results packed into `games.setup`,
made by the code of that time with make_arena_store_v5.py) reads and exports exactly as that
code read and exported it.
"""

from __future__ import annotations

import csv
import json
import shutil
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from sqlalchemy import select

from arena_fixtures import Person, make_setup, pair, running_arena
from turinglab.arena.core.abandon import ABANDONED
from turinglab.arena.core.modes import ArenaSetup
from turinglab.arena.core.store_bridge import ArenaStore
from turinglab.games.spec import FINISHED, GameResult
from turinglab.store.database import GameStart, SeatRecord, Store
from turinglab.store.export import export_run
from turinglab.store.schema import games, outcomes, trials
from turinglab.study_export import flag_exclusions, study_jsonl

FIXTURES = Path(__file__).parents[2] / "fixtures"


class Broken:
    name = "broken"
    endpoint = None

    async def reply(self, history: object, ctx: object) -> object:
        raise RuntimeError("server exploded")

    async def aclose(self) -> None:
        return None


def fixture_setup() -> ArenaSetup:
    """The study of arena_store_v5.db, as make_arena_store_v5.py set it up (same run id)."""
    setup = make_setup(abandon_after_s=0.5, ai_after_s=0)
    setup.agents = {**setup.agents, "eliza-broken": Broken()}  # type: ignore[dict-item]
    setup.modes = [
        replace(m, ai_agents=("eliza-broken",)) if m.name == "practice" else m for m in setup.modes
    ]
    return setup


def _snapshot(kept: ArenaStore) -> dict[str, Any]:
    """What make_arena_store_v5.py saved, read by today's code."""
    records = kept.records()
    people = kept.participants()
    finished = [g for g in records if g["status"] is not None]
    run = kept.store.find_run(kept.run_id)
    assert run is not None
    data = {
        "run_id": kept.run_id,
        "records": records,
        "participants": people,
        "export": flag_exclusions(kept.export()),
        "study_jsonl": study_jsonl(finished, {p: e["survey"] for p, e in people.items()}),
        "run": {"finished": run.finished, "planned": run.n_planned, "failed": run.failed_attempts},
    }
    return json.loads(json.dumps(data, ensure_ascii=False, sort_keys=True))


def check_study_rows(got: str, expected: str) -> None:
    """Study rows are written by one builder for batch runs and arena studies now
    (games/study_rows.py): an arena row has the batch rows' columns too (`persona`, `model` for
    every witness, who sat as `witness_kind`/`interrogator_kind`); every value it had is kept."""
    new = [json.loads(line) for line in got.splitlines()]
    old = [json.loads(line) for line in expected.splitlines()]
    assert len(new) == len(old) == 4
    for row, was in zip(new, old, strict=True):
        assert {k: row[k] for k in was} == was
        if "excluded_reason" in was:
            assert row == was
            continue
        person = was["witness_type"] == "human"
        added = {k: v for k, v in row.items() if k not in was}
        assert added == {
            "persona": "",
            "witness_kind": "human" if person else "agent",
            "interrogator_kind": "human",
            **({"model": ""} if person else {}),
        }


def test_a_store_written_before_arena_games_were_trials_reads_and_exports_the_same(
    tmp_path: Path,
) -> None:
    db = tmp_path / "old.db"
    shutil.copyfile(FIXTURES / "arena_store_v5.db", db)
    expected = json.loads((FIXTURES / "arena_store_v5.json").read_text(encoding="utf-8"))
    kept = ArenaStore(Store(str(db)), fixture_setup())  # upgraded in place (0005_arena_trials)
    try:
        got = _snapshot(kept)
        # The run now counts its games, as a batch run does: the only number that changes.
        assert expected.pop("run") == {"finished": 0, "planned": 0, "failed": 0}
        assert got.pop("run") == {"finished": 2, "planned": 4, "failed": 0}
        check_study_rows(got.pop("study_jsonl"), expected.pop("study_jsonl"))
        # The export now counts withdrawn participants (arena/web/handoff.py); this store had none.
        assert got["export"].pop("withdrawn_participants") == 0
        assert got == expected
        statuses = sorted(str(g["status"]) for g in got["records"])
        assert statuses == [ABANDONED, "finished", "finished", "flagged"]  # not vacuous
        # Each old game is a trial now, its result where batch results are.
        store = kept.store
        with store.engine.connect() as conn:
            rows = conn.execute(
                select(games.c.id, games.c.setup, trials.c.idx, outcomes.c.status)
                .join(trials, trials.c.id == games.c.trial_id)
                .join(outcomes, outcomes.c.game_id == games.c.id)
                .where(games.c.run_id == kept.run_id)
            ).all()
        assert len(rows) == 4 and all(r.idx == r.id for r in rows)
        assert all("status" not in r.setup and "correct" not in r.setup for r in rows)
        assert sorted(r.status for r in rows) == ["finished", "finished", "flagged", "flagged"]
        finished = {r.attempt_id: r for r in store.results(kept.run_id)}
        records = {g["game"]: g for g in got["records"]}
        for r in rows:
            game = records[r.setup["arena_game"]]
            if r.status == "finished":
                assert finished[r.id].correct == game["correct"]
    finally:
        kept.close()


def test_the_arena_trials_migration_goes_back_to_the_old_form(tmp_path: Path) -> None:
    """Downgraded, the store is what the old code wrote: it reads the same again."""
    from alembic import command

    from turinglab.store import migrations

    db = tmp_path / "old.db"
    shutil.copyfile(FIXTURES / "arena_store_v5.db", db)
    expected = json.loads((FIXTURES / "arena_store_v5.json").read_text(encoding="utf-8"))
    store = Store(str(db))
    with store.writing() as conn:
        command.downgrade(migrations._config(conn), "0004_fencing")
    with store.engine.connect() as conn:
        setups = [s for (s,) in conn.execute(select(games.c.setup).where(games.c.id > 0))]
        assert conn.execute(select(trials.c.id)).all() == []
    assert sorted(str(s["status"]) for s in setups) == [
        ABANDONED,
        "finished",
        "finished",
        "flagged",
    ]
    kept = ArenaStore(store, fixture_setup())  # not upgraded again: the same store object
    try:
        got = _snapshot(kept)
        got.pop("run"), expected.pop("run")
        check_study_rows(got.pop("study_jsonl"), expected.pop("study_jsonl"))
        # The export now counts withdrawn participants (arena/web/handoff.py); this store had none.
        assert got["export"].pop("withdrawn_participants") == 0
        assert got == expected
    finally:
        kept.close()


def test_a_game_left_playing_by_the_old_code_gets_its_trial_when_it_ends(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    shutil.copyfile(FIXTURES / "arena_store_v5.db", db)
    setup = fixture_setup()
    store = Store(str(db))
    kept = ArenaStore(store, setup)
    spec = json.loads((FIXTURES / "arena_store_v5.json").read_text())["records"][0]["trial"]
    start = GameStart(
        kept.run_id, None, 1, "three-party-test", time.time(),
        [SeatRecord("interrogator", "person:p-1", "human", "p-1")], None, kept.worker,
        {"arena_game": "g-old", "mode": "three-party", "solo": False, "trial": spec},
    )  # fmt: skip
    try:
        with store.writing() as conn:
            gid = store.start_game(conn, start)
        result = GameResult(FINISHED, correct=False)
        status = kept.writer.submit(lambda conn: kept.end(conn, gid, result, time.time()))
        assert status.result(30) == "finished"
        with store.engine.connect() as conn:
            row = conn.execute(select(games.c.trial_id).where(games.c.id == gid)).one()
            trial = conn.execute(select(trials).where(trials.c.id == row.trial_id)).one()
        assert trial.idx == gid and trial.key == spec["key"]
        (found,) = [g for g in kept.records() if g["game"] == "g-old"]
        assert found["status"] == "finished" and found["correct"] is False
        assert gid in [r.attempt_id for r in store.results(kept.run_id)]
    finally:
        kept.close()


async def _exchange(judge: Person, witness: Person) -> None:
    for ch in ("A", "B"):
        await judge.send(type="message", channel=ch, text=f"hello {ch}, are you real?")
    await witness.until("message", sender="them")
    await witness.send(type="message", channel="A", text="just me, hi")
    await judge.until("message", sender="them")


async def test_arena_games_are_trials_ended_through_the_batch_path(tmp_path: Path) -> None:
    setup = fixture_setup()
    kept = ArenaStore(Store(str(tmp_path / "arena.db")), setup)
    try:
        with running_arena(setup, store=kept) as (base, app):
            judge, witness, gj, _gw = await pair(base, "three-party")
            await _exchange(judge, witness)
            await judge.until("message", sender="them")
            await judge.send(type="end")
            await judge.send(type="verdict", choice="A", confidence=70, reason="typos")
            await judge.until("reveal")
            await witness.until("reveal")
            # An abandoned game: the witness leaves.
            judge2, witness2, ga, _ = await pair(base, "three-party")
            await _exchange(judge2, witness2)
            await witness2.close()
            await judge2.until("reveal")
            # A practice game whose AI witness fails: flagged.
            practice = Person(base)
            await practice.connect()
            await practice.send(type="join", mode="practice", consent=True)
            gp = await practice.until("game")
            await practice.send(type="message", channel="A", text="hello")
            await practice.until("reveal")
            for p in (judge, witness, judge2, practice):
                await p.close()
            await kept.flush()
            in_memory = {r["game"]: r for r in app.state.arena.finished}
        records = {r["game"]: r for r in kept.records()}
        assert set(records) == {gj["game"], ga["game"], gp["game"]}
        for gid, record in records.items():  # one record shape, from memory or from the store
            # The stored end is the time it was saved, just before the game shows it.
            assert abs(record["ended_at"] - in_memory[gid]["ended_at"]) < 5
            same = {k: v for k, v in record.items() if k not in ("stored_status", "ended_at")}
            assert same == {k: v for k, v in in_memory[gid].items() if k != "ended_at"}
        assert records[ga["game"]]["status"] == ABANDONED
        assert records[gp["game"]]["stored_status"] == "flagged"

        store = kept.store
        with store.engine.connect() as conn:
            rows = conn.execute(
                select(games.c.id, games.c.trial_id, games.c.setup, trials.c.idx, trials.c.key)
                .join(trials, trials.c.id == games.c.trial_id)
                .where(games.c.run_id == kept.run_id)
            ).all()
            ended = conn.execute(select(outcomes.c.game_id, outcomes.c.status)).all()
        assert len(rows) == 3 and all(r.idx == r.id for r in rows)  # every game has its trial
        assert all(r.key == r.setup["trial"]["key"] for r in rows)
        assert all("status" not in r.setup and "correct" not in r.setup for r in rows)
        by_arena = {r.setup["arena_game"]: r.id for r in rows}
        assert dict(ended) == {
            by_arena[gj["game"]]: "finished",
            by_arena[ga["game"]]: "flagged",
            by_arena[gp["game"]]: "flagged",
        }
        # The batch readers see the arena's games.
        (finished,) = store.results(kept.run_id)
        assert finished.attempt_id == by_arena[gj["game"]]
        assert finished.correct == records[gj["game"]]["correct"]
        assert finished.histories["interrogator"]  # the transcript, as batch rows carry it
        assert len(store.results(kept.run_id, include_flagged=True)) == 3
        (verdict,) = [j for j in store.judgements(kept.run_id) if j.judgement.kind == "verdict"]
        assert verdict.game_id == by_arena[gj["game"]] and verdict.judgement.confidence == 70
        run = store.find_run(kept.run_id)
        assert run is not None and run.finished == 1
        # `turinglab export RUN` (csv): the arena run's result rows and transcripts.
        results, transcripts, _spend = export_run(store, kept.run_id, tmp_path / "out", "csv")
        with results.open(encoding="utf-8") as f:
            (exported,) = list(csv.DictReader(f))
        assert exported["trial"] == str(by_arena[gj["game"]])  # the index is the game id
        said = json.loads(transcripts.read_text(encoding="utf-8").splitlines()[0])
        assert "just me, hi" in json.dumps(said)
    finally:
        kept.close()
    run = Store(str(tmp_path / "arena.db")).find_run(kept.run_id)
    assert run is not None and run.n_planned == 3  # counted when the server stops


def test_export_format_study_reads_an_arena_run_as_the_admin_page_does(tmp_path: Path) -> None:
    """`turinglab export RUN --format study` on an arena run: the rows of the admin page's
    study.jsonl (old store included), as CSV, titled after the run."""
    from turinglab.study_export import export_study

    db = tmp_path / "old.db"
    shutil.copyfile(FIXTURES / "arena_store_v5.db", db)
    expected = json.loads((FIXTURES / "arena_store_v5.json").read_text(encoding="utf-8"))
    store = Store(str(db))
    run = store.find_run(expected["run_id"])
    assert run is not None
    done = export_study(store, run, tmp_path / "out")
    with done.path.open(encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    want = [json.loads(line) for line in expected["study_jsonl"].splitlines()]
    assert len(rows) == len(want) == done.rows == 4  # 2 + 1 witnesses, 1 abandoned game
    assert done.games == 3 and done.skipped == 1
    for row, wanted in zip(rows, want, strict=True):
        assert row["study"] == "arena"
        assert row["game"] == wanted["game"]
        assert row.get("transcript", "") == wanted.get("transcript", "")
        assert row.get("excluded_reason", "") == wanted.get("excluded_reason", "")


def test_arena_games_go_down_and_up_the_migration_in_place(store_location: str) -> None:
    """On SQLite and PostgreSQL: games written as trials, taken back to the old form and up
    again, read the same at every step (a finished game, an abandoned one, one still playing)."""
    from alembic import command

    from turinglab.games.spec import Judgement, TrialSpec
    from turinglab.store import arena_games, migrations

    kept = ArenaStore(Store(store_location), fixture_setup())
    store = kept.store

    def start(n: int, status: GameResult | None) -> None:
        spec = TrialSpec(
            n,
            f"arena:three-party#{n}",
            "three-party-test",
            7 + n,
            {"interrogator": f"person:p-{n}", "seat_left": "eliza"},
            {"solo": False},
        )
        begun = GameStart(
            kept.run_id, None, 1, "three-party-test", 100.0 + n,
            [SeatRecord("interrogator", f"person:p-{n}", "human", f"p-{n}"),
             SeatRecord("seat_left", "eliza")],
            None, kept.worker,
            {"arena_game": f"g-{n}", "mode": "three-party", "solo": False,
             "trial": spec.to_json()},
        )  # fmt: skip
        gid = kept.writer.submit(
            lambda conn: arena_games.start_games(store, conn, [(begun, spec)])[0]
        ).result(30)
        if status is not None:
            kept.writer.submit(lambda conn: kept.end(conn, gid, status, 200.0 + n)).result(30)

    verdict = Judgement("interrogator", "verdict", verdict="seat_left", confidence=80.0)
    left = "arena: abandoned: the witness left (no reconnect within 30 s)"
    try:
        start(1, GameResult(FINISHED, correct=True, judgements=[verdict]))
        start(2, GameResult(ABANDONED, flags=[left]))
        start(3, None)
        before = json.loads(json.dumps(kept.records()))
        assert [g["status"] for g in before] == ["finished", ABANDONED, None]
        for target in ("0004_fencing", "head"):
            with store.writing() as conn:
                if target == "head":
                    command.upgrade(migrations._config(conn), target)
                else:
                    command.downgrade(migrations._config(conn), target)
            with store.engine.connect() as conn:
                linked = conn.execute(select(games.c.trial_id).order_by(games.c.id)).all()
                ended = conn.execute(select(outcomes.c.status).order_by(outcomes.c.game_id))
                ended_statuses = [s for (s,) in ended]
            if target == "head":
                assert all(t is not None for (t,) in linked)
                assert ended_statuses == ["finished", "flagged"]
            else:
                assert all(t is None for (t,) in linked) and ended_statuses == []
            assert json.loads(json.dumps(kept.records())) == before, target
    finally:
        kept.close()


def test_games_started_together_survive_a_retried_commit_once_each(tmp_path: Path) -> None:
    """Starts are written by one op per commit; a commit that fails for a moment (the database
    unreachable) is retried on the same batch: every game gets one row, one trial, its id."""
    from sqlalchemy.exc import OperationalError

    from turinglab.games.spec import TrialSpec

    store = Store(str(tmp_path / "arena.db"))
    kept = ArenaStore(store, fixture_setup())
    real = store.start_games
    failures = [OperationalError("INSERT", {}, Exception("server closed the connection"))]

    def flaky(conn: Any, starts: Any) -> list[int]:
        ids = real(conn, starts)  # written, then lost with the transaction
        if failures:
            raise failures.pop()
        return ids

    store.start_games = flaky  # type: ignore[method-assign]

    def begin(n: int) -> Any:
        spec = TrialSpec(n, f"k#{n}", "three-party-test", n, {"interrogator": "eliza"}, {})
        start = GameStart(
            kept.run_id, None, 1, "three-party-test", 1.0 * n,
            [SeatRecord("interrogator", "eliza")], None, kept.worker,
            {"arena_game": f"g-{n}", "mode": "three-party", "solo": False,
             "trial": spec.to_json()},
        )  # fmt: skip
        return kept._starts.add(start, spec)

    try:
        ids = [f.result(30) for f in [begin(n) for n in range(20)]]
        ids += [f.result(30) for f in [begin(n) for n in range(20, 25)]]  # the next batch
        assert failures == [] and len(set(ids)) == 25
        with store.engine.connect() as conn:
            rows = conn.execute(
                select(games.c.id, games.c.setup, trials.c.idx).join(
                    trials, trials.c.id == games.c.trial_id
                )
            ).all()
            n_trials = len(conn.execute(select(trials.c.id)).all())
        assert sorted(r.id for r in rows) == sorted(ids) and n_trials == 25
        assert all(r.idx == r.id for r in rows)
        assert [r.setup["arena_game"] for r in sorted(rows)] == [f"g-{n}" for n in range(25)]
    finally:
        kept.close()
