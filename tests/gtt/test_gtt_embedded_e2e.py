"""Every GTT variant played by the embedded agents (ELIZA, SmolLM2, Gemma 3 base), then the
HTML report built from the run: the whole path with real local models, no network.

Two runs, so that two xdist workers share the cost: the variants where the target judges
(plain, with queries, with a turn or query budget) and the fixed-distinguisher ones. A trial's
seed depends on its cell alone, so each trial plays as it would in one run of every variant."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from turinglab.config import parse_config
from turinglab.report.gtt_report import build_gtt_report
from turinglab.runner.execute import run_experiment
from turinglab.store.database import Store
from turinglab.variants import FD_VARIANTS, GTT_VARIANTS

pytestmark = pytest.mark.slow

SELF_JUDGED = {
    "variants": list(GTT_VARIANTS),
    "pairs": [["eliza", "smollm2"], ["smollm2", "smollm2"]],
    "budgets": [1],
    "budget_pairs": [["gemma3-base", "smollm2"]],
}
FIXED_JUDGE = {"variants": list(FD_VARIANTS), "distinguishers": ["smollm2"]}
DESIGNS = {"self": SELF_JUDGED, "fixed": FIXED_JUDGE}
COUNTS = {
    "self": {"gtt": 2, "gttq": 2, "gtt-turns": 1, "gttq-queries": 1},
    "fixed": {"fdgtt": 4, "fdgttq": 4, "gdgtt": 4},  # (actor, target) over {eliza, gemma3-base}
}
ANCHORS = {
    "self": ("overview", "gtt-scores", "gttq-scores", "budget"),
    "fixed": ("overview", "fixed-distinguisher"),
}


@pytest.mark.parametrize("half", list(DESIGNS))
async def test_every_variant_on_embedded_agents_then_the_report(half: str, tmp_path: Path) -> None:
    config = parse_config(
        {
            "name": f"embedded-variants-{half}",
            "agents": {
                # Short replies: the cost is every token the models read and write.
                "smollm2": {"kind": "local", "model": "smollm2", "mode": "chat", "max_tokens": 12},
                "gemma3-base": {"kind": "local", "model": "gemma3-base", "max_tokens": 8},
            },
            "experiment": {
                "game": "gtt",
                "universe": ["eliza", "smollm2", "gemma3-base"],
                **DESIGNS[half],
                "trials_per_pair": 1,  # every variant and route once: the cost is the models'
                "max_distinguisher_turns": 2,
                "max_specimen_turns": 2,
                "on_turn_cap": "ask-for-answer",
                # Tiny models often quote the answer format mid-game: asked again, under the
                # forced-choice grammar, they give a verdict.
                "on_ambiguous_answer": "re-ask",
            },
            # One trial at a time: each call then finds its own conversation's prefix in the
            # model's cache (half the prompt tokens of 8 interleaved trials; interleaving is
            # test_local_models_reproducible's subject).
            "runner": {"max_trials_in_flight": 1},
        }
    )
    store = Store(str(tmp_path / "e2e.db"))
    summary = await run_experiment(config, store, say=lambda m: None)
    assert summary.status == "finished", store.failed_attempts(summary.run_id)
    rows = store.results(summary.run_id)
    assert Counter(r.params["variant"] for r in rows) == COUNTS[half]
    # SmolLM2 judges under a grammar at the cap and when re-asked, so every smollm2-judged
    # trial has a verdict.
    judged = [r for r in rows if r.params["distinguisher"] == "smollm2"]
    assert judged and all(r.verdict in (0, 1) for r in judged)
    assert all(r.routes["distinguisher"]["backend"] == "local" for r in judged)
    if half == "self":
        queried = [
            r for r in rows if r.params["variant"] == "gttq-queries" and not r.params["x_is_target"]
        ]
        assert queried  # this seed's one gttq-queries trial has the actor as X: it spends its query
        assert all(r.details["phases"]["query"]["queries"] == 1 for r in queried)
    else:  # gemma3-base is an actor and a target of the fixed judge
        assert {r.params["actor"] for r in rows} == {"eliza", "gemma3-base"}

    html = build_gtt_report(store, summary.run_id, tmp_path / "report").read_text()
    for anchor in ANCHORS[half]:
        assert f'id="{anchor}' in html, anchor
    store.close()
