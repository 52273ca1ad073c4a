"""Run an experiment config: plan it (or find its earlier run), play what is left, store it all."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from turinglab.agents.base import Agent
from turinglab.agents.registry import build_agent, display_names, endpoint_limits
from turinglab.agents.retry import Caller, CallStats, RetryPolicy
from turinglab.config import ExperimentConfig
from turinglab.games.gtt import GTTRules
from turinglab.games.gtt_prompts import GTTPrompts
from turinglab.runner.environment import environment_block
from turinglab.runner.plan import (
    ADAPTIVE_VARIANTS,
    TrialSpec,
    cell_trials,
    identity_document,
    plan_cells,
    plan_trials,
    run_id,
)
from turinglab.runner.scheduler import RunCounters, TrialRunner
from turinglab.store.database import Store


class ProgressView(Protocol):
    def start(self, counters: RunCounters, stats: CallStats) -> None: ...
    def update(self) -> None: ...
    def stop(self) -> None: ...


@dataclass
class RunSummary:
    run_id: str
    name: str
    status: str
    counters: RunCounters
    stats: CallStats
    elapsed_s: float


def prepare_run(config: ExperimentConfig, store: Store, say: Callable[[str], None]) -> str:
    """Find this config's run in the store, or plan a new one. Returns the run id."""
    rid = run_id(config)
    existing = store.find_run(rid)
    if existing is not None:
        say(
            f"Resuming run {rid} ({existing.name}): {existing.finished}/{existing.n_planned} "
            "trials already finished."
        )
        return rid
    others = [r for r in store.runs_named(config.name) if r.id != rid]
    if others:
        say(
            f"The config of {config.name!r} changed since run {others[-1].id} "
            f"(agents, design or prompts differ), so this is a new run {rid}; "
            "the earlier run is kept as it was."
        )
    specs = plan_trials(config)
    store.create_run(
        rid,
        config.name,
        config.experiment.game,
        config.model_dump(mode="json"),
        identity_document(config),
        specs,
    )
    say(f"New run {rid} ({config.name}): {len(specs)} trials planned.")
    return rid


async def sample_adaptively(
    config: ExperimentConfig,
    store: Store,
    rid: str,
    runner: TrialRunner,
    say: Callable[[str], None],
) -> None:
    """Plan and play batches for the GTT cells whose conclusion (d ≤ ε or not) is unsettled.

    Deterministic given the outcomes: the extra trials of a cell continue its numbering and
    seeds, so a resumed run plans exactly what the interrupted one would have."""
    from turinglab.analysis.adaptive import AdaptivePlan, cell_status, next_batch, savings

    settings = config.experiment.adaptive
    assert settings is not None
    plan = AdaptivePlan(
        eps=settings.eps,
        alpha=settings.alpha,
        delta=settings.delta,
        batch=settings.batch,
        min_n=settings.min_n,
        max_n=settings.max_n,
    )
    cells = [c for c in plan_cells(config) if c.variant in ADAPTIVE_VARIANTS]
    variants = sorted({c.variant for c in cells})
    while True:
        planned = store.planned_per_cell(rid)
        rows = store.results(rid)
        batch: list[TrialSpec] = []
        total = sum(planned.values())
        for variant in variants:
            mine = [c for c in cells if c.variant == variant]
            pairs = [(c.actor, c.distinguisher) for c in mine]
            more = next_batch([r for r in rows if r["variant"] == variant], plan, pairs)
            for cell in mine:
                have = planned.get(
                    (cell.variant, cell.actor, cell.distinguisher, cell.target, None), 0
                )
                # Trials that failed every attempt count against max_n too, so a broken
                # endpoint cannot make a cell grow for ever.
                n = min(more.get((cell.actor, cell.distinguisher), 0), plan.max_n - have)
                if n > 0:
                    batch += cell_trials(cell, config.experiment.seed, have, n, total + len(batch))
        if not batch:
            break
        store.add_trials(rid, batch)
        runner.counters.planned += len(batch)
        say(f"Adaptive sampling: {len(batch)} more trials for unsettled cells.")
        pending, _ = store.pending_trials(rid, config.runner.max_attempts)
        await runner.run(pending)
    rows = store.results(rid)
    for variant in variants:
        pairs = [(c.actor, c.distinguisher) for c in cells if c.variant == variant]
        vrows = [r for r in rows if r["variant"] == variant]
        status = cell_status(vrows, plan, pairs)
        calls = sum(r["calls"] for r in vrows) / max(len(vrows), 1)
        saved = savings(status, plan, calls)
        say(
            f"Adaptive sampling ({variant}): {saved.adaptive_trials} trials instead of "
            f"{saved.fixed_trials} for n = {plan.max_n} per cell ({saved.fraction_saved:.0%} "
            f"saved, about {saved.calls_saved:.0f} API calls); {saved.decided_cells} cells "
            f"settled, {saved.undecided_cells} stopped at max_n undecided."
        )


async def run_experiment(
    config: ExperimentConfig,
    store: Store,
    *,
    say: Callable[[str], None] = print,
    progress: ProgressView | None = None,
    agents: dict[str, Agent] | None = None,
) -> RunSummary:
    """Play every unfinished trial of the config's run. Ctrl-C / cancellation stops cleanly:
    finished trials are already stored, in-flight ones are dropped and redone next time."""
    settings = config.runner
    agent_configs = config.used_agents()
    if agents is None:  # built first: a missing key stops us before anything is stored
        agents = {name: build_agent(name, cfg) for name, cfg in agent_configs.items()}
    rid = prepare_run(config, store, say)
    info = store.find_run(rid)
    assert info is not None
    pending, exhausted = store.pending_trials(rid, settings.max_attempts)
    caller = Caller(
        RetryPolicy(settings.call_retries, settings.backoff_base_s, settings.backoff_max_s),
        settings.max_calls_per_endpoint,
        endpoint_limits(agents, agent_configs),
        seed=config.experiment.seed,
    )
    counters = RunCounters(
        planned=info.n_planned,
        already_finished=info.n_planned - len(pending) - exhausted,
        exhausted=exhausted,
    )
    runner = TrialRunner(
        store,
        agents,
        caller,
        GTTPrompts.load(config.experiment.prompts),
        GTTRules(
            config.experiment.max_distinguisher_turns,
            config.experiment.on_turn_cap,
            config.experiment.max_specimen_turns,
        ),
        max_in_flight=settings.max_trials_in_flight,
        max_attempts=settings.max_attempts,
        environment_id=store.save_environment(environment_block()),
        counters=counters,
        on_change=progress.update if progress else None,
        display_names=display_names(agent_configs),
    )
    store.set_run_status(rid, "running")
    started = time.perf_counter()
    if progress:
        progress.start(counters, caller.stats)
    status = "interrupted"
    try:
        await runner.run(pending)
        if config.experiment.adaptive is not None:
            await sample_adaptively(config, store, rid, runner, say)
        status = "finished" if counters.exhausted == 0 else "finished-with-failures"
    finally:
        runner.close()
        if progress:
            progress.stop()
        store.set_run_status(rid, status)
        await asyncio.gather(*(a.aclose() for a in agents.values()), return_exceptions=True)
    return RunSummary(
        rid, config.name, status, counters, caller.stats, time.perf_counter() - started
    )
