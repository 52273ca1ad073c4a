"""Cost before, during and after a run, and a preflight a lab can trust, against the real fake
HTTP server: --dry-run estimates without storing, budget_usd stops new trials, tokens of failed
attempts are counted apart, /models slugs and prices are read, and --check-auth makes a call."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from turinglab.agents.pricing import Price, TokenUse, total_cost
from turinglab.config import parse_config
from turinglab.runner.execute import run_experiment, token_use
from turinglab.runner.preflight import preflight_report
from turinglab.store.database import Store
from turinglab.testing.fake_openai import FakeOpenAIServer

pytestmark = pytest.mark.server
SRC = Path(__file__).resolve().parents[2] / "src"
PRICES = {"price_in_usd_per_mtok": 1.0, "price_out_usd_per_mtok": 4.0}


def league(base_url: str, **runner: object) -> dict[str, object]:
    agent = {"kind": "openai", "base_url": base_url, "params": {"max_tokens": 32}, **PRICES}
    return {
        "name": "league",
        "agents": {"a": {**agent, "model": "m-a"}, "b": {**agent, "model": "m-b"}},
        "experiment": {"game": "gtt", "universe": ["a", "b"], "trials_per_pair": 4},
        "runner": {"max_trials_in_flight": 2, **runner},
    }


def quiet(_msg: str) -> None:
    pass


async def test_budget_stops_new_trials_and_says_so(fake_server, tmp_path) -> None:
    store = Store(str(tmp_path / "b.db"))
    said: list[str] = []
    config = parse_config(league(fake_server.base_url, budget_usd=0.001))
    summary = await run_experiment(config, store, say=said.append)
    assert summary.status == "stopped-at-budget"
    assert 0 < summary.counters.done < 16
    assert any(line.startswith("Budget reached") for line in said)
    # What was spent is what the stored messages' tokens cost at the configured prices.
    spent = total_cost(token_use(store, summary.run_id), {"a": Price(1, 4), "b": Price(1, 4)})
    assert spent == pytest.approx(summary.stats.cost_usd)
    assert spent >= 0.001
    # A re-run at the same budget starts nothing: earlier spend counts.
    fake_server.reset()
    again = await run_experiment(config, store, say=quiet)
    assert again.status == "stopped-at-budget" and fake_server.stats()["requests"] == 0
    # Without the budget the rest is played.
    done = await run_experiment(parse_config(league(fake_server.base_url)), store, say=quiet)
    assert done.status == "finished" and done.counters.done == 16
    store.close()


async def test_failed_attempts_tokens_are_counted_apart(fake_server, tmp_path) -> None:
    # The 4th call of every 4 fails with HTTP 400: attempts fail after saying something.
    fake_server.configure(faults=[{"kind": "bad_request", "every": 4}])
    store = Store(str(tmp_path / "f.db"))
    config = parse_config(league(fake_server.base_url, call_retries=0))
    summary = await run_experiment(config, store, say=quiet)
    use = token_use(store, summary.run_id)
    failed = [u for u in use if u.status == "failed"]
    assert failed and sum(u.tokens_in for u in failed) > 0
    assert sum(u.tokens_in + u.tokens_out for u in use) == (
        summary.stats.tokens_in + summary.stats.tokens_out
    )
    store.close()


async def test_preflight_names_unknown_slugs_and_reads_prices(fake_server) -> None:
    fake_server.configure(
        models=[
            {"id": "m-a", "pricing": {"prompt": "0.000002", "completion": "0.000008"}},
            {"id": "m-b2"},
            {"id": "other"},
        ]
    )
    agents = parse_config(league(fake_server.base_url)).used_agents()
    report = await preflight_report(agents)
    lines = [f.line() for f in report.failures]
    assert len(lines) == 1 and "model 'm-b' is not in" in lines[0]
    assert "closest: m-b2" in lines[0]
    assert report.prices["a"] == Price(2.0, 8.0)


async def test_check_auth_makes_a_one_token_call(fake_server) -> None:
    agents = parse_config(league(fake_server.base_url)).used_agents()
    fake_server.configure(faults=[{"kind": "bad_request", "status": 401}])
    assert (await preflight_report(agents)).failures == []  # /models alone passes
    report = await preflight_report(agents, check_auth=True)
    assert report.failures and "1-token call" in report.failures[0].line()
    assert "401" in report.failures[0].line()
    assert fake_server.last_request["max_tokens"] == 1


def test_dry_run_prints_the_estimate_and_stores_nothing(fake_server, tmp_path) -> None:
    path = tmp_path / "league.yaml"
    path.write_text(yaml.safe_dump({**league(fake_server.base_url), "store": "league.db"}))
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    done = subprocess.run(
        [sys.executable, "-m", "turinglab", "run", str(path), "--dry-run"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "16 trials to play" in out and "upper bound" in out
    # 16 trials × 2 seats × 40 turns at most; 32 tokens a reply at $4/M out.
    assert "1,280 calls" in out
    assert "Dry run: nothing was played or stored." in out
    assert not (tmp_path / "league.db").exists()


def test_cost_of_unpriced_agents_is_unknown() -> None:
    use = [TokenUse("x", "finished", 3, 100, 10)]
    assert total_cost(use, {}) is None
    assert total_cost(use, {"x": Price(1.0, 2.0)}) == pytest.approx(120 / 1_000_000)


async def test_export_has_the_spend_per_agent_and_status(fake_server, tmp_path) -> None:
    import csv

    from turinglab.store.export import export_run

    # Model b's own server refuses every call (HTTP 400, not retried): its games fail and a's
    # own games finish, whatever order the calls come in (a shared call count made that luck).
    refusing = FakeOpenAIServer()
    await refusing.start()
    refusing.configure(faults=[{"kind": "bad_request"}])
    store = Store(str(tmp_path / "e.db"))
    data = league(fake_server.base_url, call_retries=0)
    data["agents"]["b"]["base_url"] = refusing.base_url  # type: ignore[index]
    try:
        summary = await run_experiment(parse_config(data), store, say=quiet)
    finally:
        await refusing.stop()
    paths = export_run(store, summary.run_id, tmp_path / "out", "csv")
    with paths[-1].open() as f:
        rows = list(csv.DictReader(f))
    assert {r["game_status"] for r in rows} >= {"finished", "failed"}
    for r in rows:  # $1/M in, $4/M out, from the run's stored config
        expected = (int(r["tokens_in"]) * 1.0 + int(r["tokens_out"]) * 4.0) / 1e6
        assert float(r["usd"]) == pytest.approx(expected)
    store.close()
