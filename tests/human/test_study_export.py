"""Batch runs of the human-style games exported as study files the human-study analysis reads."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from turinglab.config import parse_config
from turinglab.human.schema import load_study
from turinglab.human.strong import load_stt, stt_scores
from turinglab.report.human_models import odds_text
from turinglab.report.human_report import build_study_report
from turinglab.runner.execute import run_experiment
from turinglab.store.database import Store
from turinglab.study_export import NotAStudyRun, export_study

# The interrogator writes to A, to B, to A, to B (the cap), then names A, then its confidence.
JUDGE = ["A: hello there", "B: where are you from?", "A: favourite food?", "B: and today?"]
JUDGE += ["A", "Confidence: 80\nReason: B sounded like a therapist"]
PERSON = ["hey", "lol idk, ohio", "pizza obviously", "nothing much tbh"]


def three_party(n: int = 4) -> dict:
    return {
        "name": "tp-export",
        "agents": {
            "judge": {"kind": "scripted", "replies": JUDGE, "cycle": True},
            "person": {"kind": "scripted", "replies": PERSON, "cycle": True},
        },
        "experiment": {
            "game": "three-party",
            "interrogators": ["judge"],
            "ai_witnesses": [{"agent": "eliza", "persona": "none"}],
            "human_witnesses": ["person"],
            "stand_ins": ["person"],
            "n": n,
            "max_interrogator_messages": 4,
        },
    }


async def play(data: dict, store: Store) -> str:
    summary = await run_experiment(parse_config(data), store, say=lambda _: None)
    assert summary.status == "finished"
    return summary.run_id


async def test_three_party_run_exports_a_study_the_report_reads(tmp_path: Path) -> None:
    store = Store(str(tmp_path / "s.db"))
    run = store.find_run(await play(three_party(), store))
    assert run is not None
    done = export_study(store, run, tmp_path / "out")
    assert (done.kind, done.games, done.skipped, done.rows) == ("study", 4, 0, 8)
    study = load_study(done.path)
    assert len(study) == 8 and set(study["witness"]) == {"human", "ELIZA"}
    # The judge always names A; which seat is A was drawn per game, so correctness follows it.
    for game, rows in study.groupby("game"):
        assert rows["judged_human"].sum() == 1, game
        assert set(rows["confidence"]) == {80}
        assert set(rows["reason"]) == {"B sounded like a therapist"}
    assert set(study["witness_kind"]) == {"stand-in", "agent"}  # stand-ins stay visible
    # A study this small separates perfectly in the regressions: reported, not a crash.
    page = build_study_report(study, tmp_path / "report")
    assert Path(page).is_file()


def test_odds_ratios_of_separated_fits_are_shown_not_raised() -> None:
    assert odds_text(0.0) == "1"
    assert odds_text(800.0) == "> 1e300"
    assert odds_text(-800.0) == "< 1e-300"
    assert odds_text(float("nan")) == "n/a"


async def test_strong_run_exports_the_preference_file(tmp_path: Path) -> None:
    data = {
        "name": "stt-export",
        "agents": {
            "investigator": {
                "kind": "scripted",
                "replies": ["What is 17 * 23?", "1", "Name a prime above 100.", "tie"],
                "cycle": True,
            },
            "system": {"kind": "scripted", "replies": ["391", "101"], "cycle": True},
            "person": {"kind": "scripted", "replies": ["no idea", "103?"], "cycle": True},
        },
        "experiment": {
            "game": "strong",
            "investigators": ["investigator"],
            "systems": ["system"],
            "humans": ["person"],
            "stand_ins": ["person"],
            "turns": 2,
            "n": 3,
        },
    }
    store = Store(str(tmp_path / "s.db"))
    run = store.find_run(await play(data, store))
    assert run is not None
    done = export_study(store, run, tmp_path / "out")
    assert (done.kind, done.rows) == ("stt", 6)
    table = load_stt(done.path)
    assert set(table["choice"]) <= {"system", "person", "tie"}
    assert (table["choice"] == "tie").sum() == 3  # the second turn of each session is a tie
    assert stt_scores(table)  # the STT analysis reads it


async def test_gtt_run_has_no_study_file(tmp_path: Path) -> None:
    data = {
        "name": "gtt-no-study",
        "agents": {"a": {"kind": "scripted", "replies": ["<answer>1</answer>"], "cycle": True}},
        "experiment": {"game": "gtt", "universe": ["a"], "trials_per_pair": 2},
    }
    store = Store(str(tmp_path / "s.db"))
    run = store.find_run(await play(data, store))
    assert run is not None
    with pytest.raises(NotAStudyRun, match="plays 'gtt'"):
        export_study(store, run, tmp_path / "out")


async def test_batch_games_run_on_simulated_time(tmp_path: Path) -> None:
    """An interrogator that never makes a valid move: the game ends at its 5-minute limit on
    the simulated clock at once (on the real clock the run would wait five minutes)."""
    data = three_party(n=1)
    data["agents"]["judge"] = {"kind": "scripted", "replies": ["Witness A?"], "cycle": True}
    store = Store(str(tmp_path / "s.db"))
    run_id = await asyncio.wait_for(play(data, store), timeout=60)
    (row,) = store.results(run_id)
    assert row.details["end_reason"] == "time"
    assert row.details["duration_s"] == 300.0
