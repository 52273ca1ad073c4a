"""Run an experiment config: plan it (or find its earlier run), play what is left, store it all."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from turinglab.agents.base import Agent
from turinglab.agents.pricing import Price, TokenUse, configured_prices, total_cost, usd
from turinglab.agents.registry import build_agent, display_names, endpoint_limits
from turinglab.agents.retry import Caller, CallStats, RetryPolicy
from turinglab.config import ExperimentConfig
from turinglab.games.kinds import (
    ADAPTIVE_SAMPLING,
    AdaptiveSampling,
    Game,
    GameContext,
    game_for,
)
from turinglab.games.spec import TrialSpec
from turinglab.runner.environment import environment_block
from turinglab.runner.estimate import Estimate, from_caps, from_pilot
from turinglab.runner.plan import TrialHasher, identity_document, plan_game, run_id
from turinglab.runner.scheduler import DEFAULT_LEASE_S, RunCounters, TrialRunner
from turinglab.store.database import Store, analysis_rows


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
    prices: dict[str, Price]


def prepare_run(
    config: ExperimentConfig, store: Store, say: Callable[[str], None], game: Game | None = None
) -> str:
    """Find this config's run in the store, or plan a new one; either way, fill its open
    trials with the outcomes of the same trials other runs of the store played. Returns the
    run id."""
    game = game or game_for(config.experiment)
    rid = run_id(config, game)
    hasher = TrialHasher(config, game)
    existing = store.find_run(rid)
    if existing is not None:
        from turinglab.store.lookup import ago, is_live

        # Trials planned before they had content hashes get them now (same config, same run).
        old = store.unhashed_specs(rid)
        store.set_content_hashes(rid, {s.index: hasher(s) for s in old})
        done = f"{existing.finished}/{existing.n_planned} trials already finished."
        if is_live(existing):
            # Another worker renewed the heartbeat within a lease: this one joins it.
            heartbeat = ago(time.time() - existing.updated_at)
            say(f"Joining run {rid} ({existing.name}), in progress (heartbeat {heartbeat}): {done}")
        else:
            say(f"Resuming run {rid} ({existing.name}): {done}")
        say_reused(store.reuse_outcomes(rid), say)
        return rid
    others = [r for r in store.runs_named(config.name) if r.id != rid]
    if others:
        say(
            f"The config of {config.name!r} changed since run {others[-1].id} "
            f"(agents, design or prompts differ), so this is a new run {rid}; "
            "the earlier run is kept as it was."
        )
    specs = plan_game(game)
    created = store.create_run(
        rid,
        config.name,
        config.experiment.game,
        config.model_dump(mode="json"),
        identity_document(config, game),
        specs,
        hasher.many(specs),
    )
    if created:
        say(f"New run {rid} ({config.name}): {len(specs)} trials planned.")
    else:
        say(f"Joining run {rid} ({config.name}), planned a moment ago by another worker.")
    say_reused(store.reuse_outcomes(rid), say)
    return rid


def say_reused(n: int, say: Callable[[str], None]) -> None:
    if n:
        say(
            f"Reused {n} trials already played in this store (same agents, prompts, rules "
            "and trial): they are not played again."
        )


async def sample_adaptively(
    game: AdaptiveSampling,
    store: Store,
    rid: str,
    runner: TrialRunner,
    say: Callable[[str], None],
    hasher: Callable[[list[TrialSpec]], list[str]] | None = None,
) -> None:
    """Plan and play batches for the cells the game says are unsettled (GTT's hook)."""
    while True:
        batch = game.more_trials(store.planned_specs(rid), analysis_rows(store.results(rid)))
        if not batch:
            break
        added = store.add_trials(rid, batch, hasher(batch) if hasher else None)
        runner.counters.planned += added
        say(f"Adaptive sampling: {len(batch)} more trials for unsettled cells.")
        reused = store.reuse_outcomes(rid)
        runner.counters.already_finished += reused
        say_reused(reused, say)
        await runner.run()
    game.report_adaptive(analysis_rows(store.results(rid)), say)


def token_use(store: Store, rid: str) -> list[TokenUse]:
    return [TokenUse(**row) for row in store.token_use(rid)]


def dry_run(config: ExperimentConfig, store: Store | None) -> Estimate:
    """Plan the config without storing anything; estimate the trials the store lacks (from
    the newest finished pilot of the same name that seated every agent, else from caps)."""
    configs = config.used_agents()
    game = game_for(config.experiment, GameContext(display_names=display_names(configs)))
    specs = plan_game(game)
    hashes = TrialHasher(config, game).many(specs)
    played = store.played_hashes(hashes) if store is not None else set()
    todo = [s for s, h in zip(specs, hashes, strict=True) if h not in played]
    pilots = [r for r in store.runs_named(config.name) if r.finished] if store else []
    for pilot in reversed(pilots):
        use = token_use(store, pilot.id) if store is not None else []
        if set(configs) <= {u.agent for u in use if u.status == "finished"}:
            est = from_pilot(len(todo), pilot.id, pilot.finished, use)
            break
    else:
        max_tokens = {n: _max_tokens(c) for n, c in configs.items()}
        est = from_caps(todo, config.experiment, max_tokens)
    if played:
        est.notes.append(
            f"{len(specs) - len(todo)} of {len(specs)} trials are already in the "
            "store and would be reused"
        )
    return est


def _max_tokens(cfg: object) -> int | None:
    params = getattr(cfg, "params", None) or {}
    value = params.get("max_tokens") or params.get("max_completion_tokens")
    if value is None:
        value = getattr(cfg, "max_tokens", None)  # local models
    return int(value) if value else None


def lease_seconds(config: ExperimentConfig) -> float:
    """The row lease: `runner.lease_s` when the config has it, else TURINGLAB_LEASE_S, else 60."""
    configured = getattr(config.runner, "lease_s", None)
    if configured:
        return float(configured)
    return float(os.environ.get("TURINGLAB_LEASE_S") or DEFAULT_LEASE_S)


async def run_experiment(
    config: ExperimentConfig,
    store: Store,
    *,
    say: Callable[[str], None] = print,
    progress: ProgressView | None = None,
    agents: dict[str, Agent] | None = None,
    lease_s: float | None = None,
    listed_prices: dict[str, Price] | None = None,
) -> RunSummary:
    """Play every unfinished trial of the config's run. Ctrl-C / cancellation stops cleanly:
    every message said is already stored, in-flight games stay `playing` and are replayed next
    time. Other processes may run the same config on the same store at the same time."""
    settings = config.runner
    agent_configs = config.used_agents()
    if agents is None:  # built first: a missing key stops us before anything is stored
        agents = {name: build_agent(name, cfg) for name, cfg in agent_configs.items()}
    game = game_for(config.experiment, GameContext(display_names=display_names(agent_configs)))
    rid = prepare_run(config, store, say, game)
    state = store.state(rid, settings.max_attempts)
    prices = {**(listed_prices or {}), **configured_prices(agent_configs)}
    caller = Caller(
        RetryPolicy(settings.call_retries, settings.backoff_base_s, settings.backoff_max_s),
        settings.max_calls_per_endpoint,
        endpoint_limits(agents, agent_configs),
        seed=config.experiment.seed,
        prices=prices,
    )
    counters = RunCounters(
        planned=state.planned,
        already_finished=state.finished,
        exhausted=state.exhausted,
        failed_before=info.failed_attempts if (info := store.find_run(rid)) else 0,
        spent_before_usd=total_cost(token_use(store, rid), prices) or 0.0,
        max_in_flight=settings.max_trials_in_flight,
    )
    runner = TrialRunner(
        store,
        game,
        agents,
        caller,
        run_id=rid,
        max_in_flight=settings.max_trials_in_flight,
        max_attempts=settings.max_attempts,
        environment_id=store.save_environment(environment_block()),
        counters=counters,
        on_change=progress.update if progress else None,
        lease_s=lease_s or lease_seconds(config),
        attempt_backoff=RetryPolicy(
            settings.max_attempts, settings.attempt_backoff_base_s, settings.attempt_backoff_max_s
        ),
        seed=config.experiment.seed,
        budget_usd=settings.budget_usd,
    )
    store.set_run_status(rid, "running")
    started = time.perf_counter()
    if progress:
        progress.start(counters, caller.stats)
    status = "interrupted"
    try:
        await runner.run()
        sampler = ADAPTIVE_SAMPLING.of(game)
        if sampler is not None and sampler.adaptive:
            await sample_adaptively(
                sampler, store, rid, runner, say, TrialHasher(config, game).many
            )
        final = store.state(rid, settings.max_attempts)
        # Other workers may have finished trials of this run meanwhile: count them as done.
        counters.already_finished = final.finished - counters.finished
        counters.planned = final.planned
        status = "finished" if final.exhausted == 0 else "finished-with-failures"
        if counters.budget_reached and final.finished < final.planned:
            status = "stopped-at-budget"
            say(
                f"Budget reached: runner.budget_usd {settings.budget_usd:g} USD spent "
                f"({usd(counters.spent_before_usd + caller.stats.cost_usd)}), so no new trial "
                f"was started; {final.planned - final.finished} trials are left. Raise "
                "budget_usd and re-run to play them."
            )
    finally:
        runner.close()
        if progress:
            progress.stop()
        store.set_run_status(rid, status)
        await asyncio.gather(*(a.aclose() for a in agents.values()), return_exceptions=True)
    return RunSummary(
        rid, config.name, status, counters, caller.stats, time.perf_counter() - started, prices
    )
