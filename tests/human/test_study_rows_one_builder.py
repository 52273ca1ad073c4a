"""One builder writes the study rows of batch runs and arena studies (games/study_rows.py).

A batch three-party run and a three-party game played in the arena give study files with the
same columns. The same game fed through both sources (the batch trial as `turinglab export
--format study` reads it from the store, and the arena's record of it as the admin page's
study.jsonl reads it) gives the same row, value for value: the only columns that differ name
who sat, which is what differs between the two (a stand-in agent and an AI interrogator in the
batch run, people in the arena). Games without a usable verdict are excluded alike.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from arena_fixtures import make_setup, running_arena
from test_arena_exclusions import _three_party
from test_study_export import JUDGE, play, three_party
from turinglab.arena.core.store_bridge import ArenaStore
from turinglab.games.spec import GameResult
from turinglab.store.arena_records import game_record, message_entry, seat_entry
from turinglab.store.database import ResultRecord, Store
from turinglab.study_export import export_study, study_jsonl

WHO_SAT = {"witness_kind", "interrogator_kind"}


def _csv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8") as f:
        return list(csv.DictReader(f))


def _as_csv(row: dict[str, Any]) -> dict[str, str]:
    """A row as the study file's CSV holds it (how export_study writes each value)."""
    return {k: "" if v is None else str(v) for k, v in row.items()}


def _arena_record(store: Store, run_id: str, r: ResultRecord) -> dict[str, Any]:
    """The arena's record of the game the trial `r` played, had people played it: the same
    trial, the same words at the same moments of the game's clock, the same end."""
    start = r.details["started_at"]
    people = {"interrogator", r.params["human_seat"]}
    judgements = [j.judgement for j in store.judgements(run_id) if j.game_id == r.attempt_id]
    return game_record(
        game=r.key,
        mode="three-party",
        solo=False,
        spec=r.spec,
        seats={
            seat: seat_entry(agent, agent if seat in people else None)
            for seat, agent in r.seats.items()
        },
        started_at=start,
        ended_at=start + r.details["duration_s"],
        messages=[
            message_entry(
                seq=m.seq,
                sender=m.sender,
                channel=m.channel,
                text=m.text,
                at=m.created_at,
                visible_to=m.visible_to,
            )
            for m in store.transcript(r.attempt_id)
        ],
        result=GameResult(r.status, correct=r.correct, judgements=judgements, flags=list(r.flags)),
    )


async def test_a_batch_game_and_its_arena_record_give_the_same_rows(tmp_path: Path) -> None:
    data = three_party(n=2)
    # A second interrogator never gives a readable verdict: its games are exclusions.
    data["agents"]["lazy"] = {"kind": "scripted", "replies": ["A: hi", "no idea", "x"]}
    data["experiment"]["interrogators"] = ["judge", "lazy"]
    data["agents"]["judge"]["replies"] = [*JUDGE[:-1], "Confidence: 80\nReason: naïve «B»"]
    store = Store(str(tmp_path / "s.db"))
    run = store.find_run(await play(data, store))
    assert run is not None
    done = export_study(store, run, tmp_path / "out")
    batch = _csv(done.path)
    assert (done.games, done.skipped, done.rows) == (4, 2, 6)

    results = store.results(run.id, include_flagged=True)
    records = [_arena_record(store, run.id, r) for r in results]
    arena = [_as_csv({**json.loads(line), "study": run.name})
             for line in study_jsonl(records, {}).splitlines()]  # fmt: skip

    assert len(arena) == len(batch) == 6
    columns = list(dict.fromkeys(c for row in arena for c in row))
    assert columns == list(batch[0])  # the same columns, in the same order
    arena = [{c: row.get(c, "") for c in columns} for row in arena]  # as a CSV file has them
    excluded = [row for row in batch if row["excluded_reason"]]
    assert [row["excluded_reason"] for row in excluded] == ["no verdict (unparseable-verdict)"] * 2
    for mine, theirs in zip(batch, arena, strict=True):
        assert {k: v for k, v in mine.items() if k not in WHO_SAT} == {
            k: v for k, v in theirs.items() if k not in WHO_SAT
        }
        if not mine["excluded_reason"]:
            human = mine["witness_type"] == "human"
            assert (mine["witness_kind"], theirs["witness_kind"]) == (
                ("stand-in", "human") if human else ("agent", "agent")
            )
            assert (mine["interrogator_kind"], theirs["interrogator_kind"]) == ("agent", "human")
    used = [row for row in batch if not row["excluded_reason"]]
    assert {row["reason"] for row in used} == {"naïve «B»"}  # as written: no escapes
    said = json.loads(used[0]["transcript"])
    assert said and said[0]["sender"] == "interrogator" and said[0]["t"] >= 0
    assert {row["round"] for row in used} == {"1", "2"}  # the judge's first and second game
    assert {row["exclude_few_messages"] for row in used} == {"False"}  # 2 messages each
    store.close()


async def test_a_batch_run_and_an_arena_game_have_the_same_columns(tmp_path: Path) -> None:
    """A played arena game (real websockets, through the store, exported as `turinglab export
    --format study` exports it) has the batch run's columns, and its interrogator's exit
    survey's besides."""
    batch_store = Store(str(tmp_path / "batch.db"))
    run = batch_store.find_run(await play(three_party(n=1), batch_store))
    assert run is not None
    batch = _csv(export_study(batch_store, run, tmp_path / "batch").path)
    batch_store.close()

    setup = make_setup(ai_after_s=0)
    kept = ArenaStore(Store(str(tmp_path / "arena.db")), setup)
    try:
        with running_arena(setup, store=kept) as (base, _app):
            await _three_party(base, exchanges=2, prior="No")
    finally:
        kept.close()  # everything queued is written
    arena_run = kept.store.find_run(kept.run_id)
    assert arena_run is not None
    arena = _csv(export_study(kept.store, arena_run, tmp_path / "arena").path)
    kept.store.close()
    assert len(arena) == 2 and "excluded_reason" not in arena[0]
    survey = {c for c in arena[0] if c.startswith("survey_")}
    assert survey == {"survey_prior_awareness", "survey_gender"}
    # How each participant's study ended (arena/web/handoff.py) is theirs, as the survey is: a
    # batch run has no participants to end a study.
    ended = {"interrogator_study_end", "interrogator_rounds_done"}
    assert ended <= set(arena[0])
    assert set(arena[0]) - survey - ended == set(batch[0])
    assert {row["witness_kind"] for row in arena} == {"human", "agent"}
    assert {row["interrogator_kind"] for row in arena} == {"human"}
