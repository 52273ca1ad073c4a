"""Honest progress: calls and tokens shown as they are counted (not when a trial ends), an ETA
from finished trials' durations (none before one finished), done/total kept on an 80-column
terminal, and failed attempts of earlier invocations shown after a resume."""

from __future__ import annotations

import pytest
from rich.console import Console

from turinglab.agents.retry import CallStats
from turinglab.config import parse_config
from turinglab.runner.execute import run_experiment
from turinglab.runner.progress import RichProgress, eta_seconds, status_line
from turinglab.runner.scheduler import RunCounters
from turinglab.store.database import Store


def rendered(view: RichProgress, width: int) -> str:
    console = Console(width=width, record=True, force_terminal=False)
    console.print(view._progress.get_renderable())
    return console.export_text()


def test_numbers_are_read_live_and_the_count_fits_80_columns() -> None:
    console = Console(width=80, force_terminal=False)
    view = RichProgress(console, label="gtt-paper-openrouter-2026")
    counters = RunCounters(planned=1620, already_finished=300, failed_before=12, max_in_flight=16)
    stats = CallStats()
    view.start(counters, stats)
    view._progress.stop()  # render by hand, not from the refresh thread
    assert "0 calls" in rendered(view, 80)
    stats.calls, stats.tokens_in, stats.tokens_out = 1234, 56_000, 7_000
    counters.finished = 5
    text = rendered(view, 80)  # no update() call: the columns read the numbers themselves
    assert "305/1620" in text and "1.2k calls" in text and "63k tok" in text
    assert "(+12 before)" in text and "ETA –" in text
    assert "running" in rendered(view, 100)  # cut last on a narrow terminal
    assert all(len(line) <= 80 for line in text.splitlines())


def test_eta_comes_from_finished_trials_durations() -> None:
    c = RunCounters(planned=100, already_finished=0, max_in_flight=10)
    assert eta_seconds(c) is None
    c.finished, c.trials_timed, c.trial_seconds = 20, 20, 20 * 30.0  # 30 s a trial
    # 80 left, 10 at a time: 8 rounds of 30 s.
    assert eta_seconds(c) == pytest.approx(240.0)
    assert "ETA 4:00" in status_line(c, CallStats())


@pytest.mark.server
async def test_a_resume_shows_the_failed_attempts_of_earlier_invocations(
    fake_server, tmp_path
) -> None:
    fake_server.configure(faults=[{"kind": "server_error"}])
    agent = {"kind": "openai", "base_url": fake_server.base_url, "model": "m"}
    data = {
        "name": "resume",
        "agents": {"a": agent},
        "experiment": {"game": "gtt", "universe": ["a"], "trials_per_pair": 2},
        "runner": {"call_retries": 0, "max_attempts": 1, "attempt_backoff_base_s": 0},
    }
    store = Store(str(tmp_path / "r.db"))
    first = await run_experiment(parse_config(data), store, say=lambda _: None)
    assert first.counters.failed_attempts == 2 and first.counters.failed_before == 0
    fake_server.configure(faults=[])
    data["runner"]["max_attempts"] = 2
    again = await run_experiment(parse_config(data), store, say=lambda _: None)
    assert again.counters.failed_before == 2 and again.counters.failed_attempts == 0
    assert "(+2 before)" in status_line(again.counters, again.stats)
    store.close()
