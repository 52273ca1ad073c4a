"""Every GTT variant played by the embedded agents (ELIZA, SmolLM2, Gemma 3 base), then the
HTML report built from the run: the whole path with real local models, no network."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from turinglab.config import parse_config
from turinglab.games.gtt import VARIANTS
from turinglab.report.gtt_report import build_gtt_report
from turinglab.runner.execute import run_experiment
from turinglab.store.database import Store

pytestmark = pytest.mark.slow


async def test_every_variant_on_embedded_agents_then_the_report(tmp_path: Path) -> None:
    config = parse_config(
        {
            "name": "embedded-variants",
            "agents": {
                "smollm2": {"kind": "local", "model": "smollm2", "mode": "chat", "max_tokens": 24},
                "gemma3-base": {"kind": "local", "model": "gemma3-base", "max_tokens": 16},
            },
            "experiment": {
                "game": "gtt",
                "variants": list(VARIANTS),
                "universe": ["eliza", "smollm2", "gemma3-base"],
                "pairs": [["eliza", "smollm2"], ["smollm2", "smollm2"]],
                "budgets": [1],
                "budget_pairs": [["gemma3-base", "smollm2"]],
                "distinguishers": ["smollm2"],
                "trials_per_pair": 1,  # every variant and route once: the cost is the models'
                "max_distinguisher_turns": 2,
                "max_specimen_turns": 2,
                "on_turn_cap": "ask-for-answer",
            },
            "runner": {"max_trials_in_flight": 8},
        }
    )
    store = Store(str(tmp_path / "e2e.db"))
    summary = await run_experiment(config, store, say=lambda m: None)
    assert summary.status == "finished", store.failed_attempts(summary.run_id)
    rows = store.results(summary.run_id)
    assert Counter(r.params["variant"] for r in rows) == {
        "gtt": 2, "gttq": 2, "gtt-turns": 1, "gttq-queries": 1,
        "fdgtt": 4, "fdgttq": 4, "gdgtt": 4,
    }  # fmt: skip
    # SmolLM2 judges under a grammar at the cap, so every smollm2-judged trial has a verdict.
    judged = [r for r in rows if r.params["distinguisher"] == "smollm2"]
    assert all(r.verdict in (0, 1) for r in judged)
    assert all(r.routes["distinguisher"]["backend"] == "local" for r in judged)
    queried = [
        r for r in rows if r.params["variant"] == "gttq-queries" and not r.params["x_is_target"]
    ]
    assert queried  # this seed's one gttq-queries trial has the actor as X: it spends its query
    assert all(r.details["phases"]["query"]["queries"] == 1 for r in queried)

    html = build_gtt_report(store, summary.run_id, tmp_path / "report").read_text()
    for anchor in ("overview", "gtt-scores", "gttq-scores", "budget", "fixed-distinguisher"):
        assert f'id="{anchor}' in html, anchor
    store.close()
