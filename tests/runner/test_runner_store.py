"""The runner and the store together, on SQLite and PostgreSQL, with agents that misbehave."""

from __future__ import annotations

import asyncio

import pytest

from turinglab.agents.base import AgentReply, CallContext, ChatMessage, Route
from turinglab.agents.errors import FatalError, RateLimited, TransientError
from turinglab.agents.scripted import ScriptedAgent
from turinglab.config import parse_config
from turinglab.runner.execute import run_experiment
from turinglab.runner.plan import plan_trials
from turinglab.store.database import Store
from turinglab.store.export import export_run


class FlakyAgent:
    """Answers like a scripted agent but raises `errors` first, one per call, in order."""

    def __init__(self, name: str, replies: list[str], errors: list[Exception]) -> None:
        self.name = name
        self.inner = ScriptedAgent(name, replies)
        self.errors = list(errors)
        self.calls = 0

    @property
    def endpoint(self) -> str:
        return f"test:{self.name}"

    async def reply(self, history: list[ChatMessage], ctx: CallContext) -> AgentReply:
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        reply = await self.inner.reply(history, ctx)
        return AgentReply(reply.text, Route("test", self.name), tokens_in=10, tokens_out=5)

    async def aclose(self) -> None:
        pass


def config(n: int = 2, universe=("judge", "mimic"), **runner) -> object:
    return parse_config(
        {
            "name": "runner-test",
            "agents": {
                "judge": {"kind": "scripted", "replies": ["Hi?", "Hmm. <answer>1</answer>"]},
                "mimic": {"kind": "scripted", "replies": ["Hello", "<answer>0</answer>"]},
            },
            "experiment": {"game": "gtt", "universe": list(universe), "trials_per_pair": n},
            "runner": {"backoff_base_s": 0.01, "backoff_max_s": 0.05, **runner},
        }
    )


def quiet(_msg: str) -> None:
    pass


async def test_full_run_stores_every_trial(store_location: str) -> None:
    store = Store(store_location)
    summary = await run_experiment(config(n=3), store, say=quiet)
    assert summary.status == "finished"
    assert summary.counters.finished == 12
    rows = store.results(summary.run_id)
    assert len(rows) == 12 and sorted(r.idx for r in rows) == list(range(12))
    row = rows[0]
    assert set(row.histories) == {"distinguisher", "unknown"}
    assert row.routes["distinguisher"]["backend"] == "scripted"
    assert row.extra["first_distinguisher_message"] == "Hi?"
    # The distinguisher "judge" always answers 1; "mimic" always 0.
    for r in rows:
        assert r.verdict == (1 if r.params["distinguisher"] == "judge" else 0)
    assert row.environment_id is not None
    env = store.environment(row.environment_id)
    assert env is not None and env["python"] and env["hostname"]
    [info] = store.list_runs()
    assert (info.status, info.finished, info.n_planned) == ("finished", 12, 12)
    # Running the same config again plays nothing: everything is finished.
    again = await run_experiment(config(n=3), store, say=quiet)
    assert again.run_id == summary.run_id and again.counters.finished == 0
    assert len(store.results(summary.run_id)) == 12
    store.close()


async def test_transient_faults_are_retried_and_never_verdicts(store_location: str) -> None:
    store = Store(store_location)
    cfg = config(n=2)
    judge = FlakyAgent(
        "judge",
        ["Hi?", "<answer>1</answer>"],
        [
            RateLimited("slow down", retry_after=0.01),
            TransientError("502"),
            TransientError("reset"),
        ],
    )
    agents = {"judge": judge, "mimic": ScriptedAgent("mimic", ["Hello", "<answer>0</answer>"])}
    summary = await run_experiment(cfg, store, say=quiet, agents=agents)
    assert summary.status == "finished" and summary.counters.failed_attempts == 0
    assert summary.stats.rate_limited == 1 and summary.stats.retried == 3
    assert len(store.results(summary.run_id)) == 8
    store.close()


async def test_fatal_errors_become_failed_attempts_then_resume(store_location: str) -> None:
    store = Store(store_location)
    cfg = config(n=2, universe=("judge", "mimic"))
    broken = FlakyAgent("mimic", ["Hello", "<answer>0</answer>"], [FatalError("401 bad key")] * 100)
    agents = {"judge": ScriptedAgent("judge", ["Hi?", "<answer>1</answer>"]), "mimic": broken}
    first = await run_experiment(cfg, store, say=quiet, agents=agents)
    # Trials that never seat mimic (judge>judge, and mimic>judge when X is a fresh judge)
    # finish; the others fail every one of their 3 attempts.
    avoid = [s for s in plan_trials(cfg) if s.distinguisher == "judge" and s.unknown == "judge"]
    assert first.status == "finished-with-failures"
    assert first.counters.finished == len(avoid) == 3 and first.counters.exhausted == 5
    failed = store.failed_attempts(first.run_id)
    assert len(failed) == 15
    assert {f["error_kind"] for f in failed} == {"fatal"}
    assert all("401 bad key" in f["error_message"] for f in failed)
    assert len(store.results(first.run_id)) == 3  # no fault became a verdict
    # Resuming does not retry trials that used up their attempts...
    again = await run_experiment(cfg, store, say=quiet, agents=agents)
    assert again.counters.finished == 0 and again.counters.exhausted == 5
    # ...unless the user allows more attempts; then the fixed agent finishes them.
    fixed = {**agents, "mimic": ScriptedAgent("mimic", ["Hello", "<answer>0</answer>"])}
    more = config(n=2, max_attempts=4)
    last = await run_experiment(more, store, say=quiet, agents=fixed)
    assert last.run_id == first.run_id and last.counters.finished == 5
    assert last.status == "finished"
    results = store.results(first.run_id)
    assert len(results) == 8
    assert sorted(r.attempt_no for r in results if r.attempt_no > 1) == [4] * 5
    store.close()


async def test_cancel_keeps_finished_trials(tmp_path) -> None:
    store = Store(str(tmp_path / "s.db"))

    class SlowAgent(ScriptedAgent):
        async def reply(self, history, ctx):
            await asyncio.sleep(0.05 if len(history) < 3 else 3600)  # until cancelled
            return await super().reply(history, ctx)

    cfg = config(n=2)
    agents = {
        "judge": ScriptedAgent("judge", ["Hi?", "<answer>1</answer>"]),
        "mimic": SlowAgent("mimic", ["Hello", "<answer>0</answer>"]),
    }
    task = asyncio.create_task(run_experiment(cfg, store, say=quiet, agents=agents))
    # Cancel once the quick trials are stored (a state, not a guess at how long they take).
    for _ in range(6000):  # at most a minute
        runs = store.list_runs()
        if runs and runs[0].finished >= 4:
            break
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    [info] = store.list_runs()
    assert info.status == "interrupted"
    # Trials judged by "judge" end before mimic's slow second message; the others hang.
    assert info.finished == 4
    assert {r.params["distinguisher"] for r in store.results(info.id)} == {"judge"}
    assert store.failed_attempts(info.id) == []  # cancelled work is not a failure
    store.close()


async def test_changed_config_is_a_new_run(tmp_path) -> None:
    store = Store(str(tmp_path / "s.db"))
    said: list[str] = []
    a = await run_experiment(config(n=2), store, say=said.append)
    b = await run_experiment(config(n=3), store, say=said.append)
    assert a.run_id != b.run_id
    assert any("changed since run" in m and a.run_id in m for m in said)
    assert len(store.list_runs()) == 2
    store.close()


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet"])
async def test_export(tmp_path, fmt: str) -> None:
    import csv
    import json

    import pyarrow.parquet as pq

    store = Store(str(tmp_path / "s.db"))
    summary = await run_experiment(config(n=2), store, say=quiet)
    results, transcripts, _spend = export_run(store, summary.run_id, tmp_path / "out", fmt)  # type: ignore[arg-type]
    if fmt == "csv":
        rows = list(csv.DictReader(results.open()))
    elif fmt == "jsonl":
        rows = [json.loads(line) for line in results.open()]
    else:
        rows = pq.read_table(results).to_pylist()
    assert len(rows) == 8
    assert {r["status"] for r in rows} == {"answered"}
    records = [json.loads(line) for line in transcripts.open()]
    assert len(records) == 8
    rec = records[0]
    assert rec["histories"]["distinguisher"][0]["role"] == "user"
    assert rec["messages"][1]["visible_to"] == ["distinguisher"]
    assert rec["environment"]["python"]
    store.close()


def test_a_store_of_another_schema_is_refused(tmp_path) -> None:
    import sqlite3

    from turinglab.store.database import StoreError

    path = tmp_path / "old.db"
    with sqlite3.connect(path) as conn:  # a store from before schema versions
        conn.execute("CREATE TABLE runs (id TEXT PRIMARY KEY)")
    with pytest.raises(StoreError, match="schema 1"):
        Store(str(path))
    fresh = Store(str(tmp_path / "new.db"))
    fresh.close()
    Store(str(tmp_path / "new.db")).close()  # reopening its own schema is fine
