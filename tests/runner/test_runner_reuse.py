"""A tournament grows without paying twice: a study whose universe gains a model, or whose one
model changes, plays only the trials the store does not already have (counted on the real fake
HTTP server), and its results hold them all."""

from __future__ import annotations

import pytest

from turinglab.config import parse_config
from turinglab.runner.execute import run_experiment
from turinglab.runner.plan import run_id
from turinglab.store.database import Store

pytestmark = pytest.mark.server


def study(base_url: str, universe: list[str], n: int = 2, **models: str) -> object:
    agents = {
        name: {"kind": "openai", "base_url": base_url, "model": models.get(name, f"m-{name}")}
        for name in universe
    }
    return parse_config(
        {
            "name": "league",
            "agents": agents,
            "experiment": {"game": "gtt", "universe": universe, "trials_per_pair": n},
            "runner": {"max_trials_in_flight": 8},
        }
    )


async def play(server, config, store: Store) -> tuple[object, int, list[str]]:
    server.reset()
    said: list[str] = []
    summary = await run_experiment(config, store, say=said.append)
    return summary, server.stats()["completions"], said


async def test_a_universe_that_gains_a_model_plays_only_its_new_cells(
    fake_server, tmp_path
) -> None:
    store = Store(str(tmp_path / "league.db"))
    first, calls_first, _ = await play(fake_server, study(fake_server.base_url, ["a", "b"]), store)
    assert first.counters.finished == 8 and calls_first > 0  # 4 cells × 2
    per_trial = calls_first / 8

    grown = study(fake_server.base_url, ["a", "b", "c"])
    summary, calls, said = await play(fake_server, grown, store)
    # 9 cells × 2 = 18 trials; the 8 of (a, b) come from the first run.
    assert summary.run_id != first.run_id
    assert summary.counters.finished == 10 and summary.counters.already_finished == 8
    assert calls == pytest.approx(10 * per_trial)
    assert any("Reused 8 trials" in line for line in said)
    rows = store.results(summary.run_id)
    assert len(rows) == 18
    assert {(r.params["actor"], r.params["distinguisher"]) for r in rows} == {
        (x, y) for x in "abc" for y in "abc"
    }
    # The first run keeps its own numbers, and cannot be deleted while it is reused.
    assert len(store.results(first.run_id)) == 8
    with pytest.raises(Exception, match="reuse its games"):
        store.delete_run(first.run_id)

    # One model's slug changes: only the 5 cells with c are played again.
    moved = study(fake_server.base_url, ["a", "b", "c"], c="m-c-v2")
    again, calls, said = await play(fake_server, moved, store)
    assert again.counters.finished == 10 and again.counters.already_finished == 8
    assert calls == pytest.approx(10 * per_trial)
    store.close()


async def test_changed_rules_or_prompts_are_new_trials(fake_server, tmp_path) -> None:
    store = Store(str(tmp_path / "rules.db"))
    base = study(fake_server.base_url, ["a", "b"], n=1)
    await play(fake_server, base, store)
    data = base.model_dump(mode="json")  # type: ignore[attr-defined]
    data["experiment"]["max_distinguisher_turns"] = 7
    capped, _, said = await play(fake_server, parse_config(data), store)
    assert capped.counters.finished == 4 and not any("Reused" in line for line in said)

    prompt = tmp_path / "distinguisher.txt"
    prompt.write_text("You talk to someone. Say <answer>1</answer> or <answer>0</answer>.")
    data["experiment"]["prompts"] = {"distinguisher": str(prompt)}
    reworded, _, said = await play(fake_server, parse_config(data), store)
    assert reworded.counters.finished == 4 and not any("Reused" in line for line in said)
    store.close()


async def test_run_ids_of_existing_configs_are_unchanged(fake_server) -> None:
    # The run id is still the hash of the whole config's identity (as before trial reuse).
    config = study("http://127.0.0.1:1/v1", ["a", "b"])
    assert run_id(config) == run_id(study("http://127.0.0.1:1/v1", ["a", "b"]))
    assert run_id(config) != run_id(study("http://127.0.0.1:1/v1", ["a", "b", "c"]))


async def test_a_run_planned_before_trial_hashes_is_hashed_on_resume_and_reused(
    fake_server, tmp_path
) -> None:
    from turinglab.games.kinds import game_for
    from turinglab.runner.plan import identity_document, plan_game

    store = Store(str(tmp_path / "old.db"))
    old = study(fake_server.base_url, ["a", "b"], n=1)
    game = game_for(old.experiment)  # type: ignore[attr-defined]
    rid = run_id(old, game)
    # As a schema-7 store holds it: the same run id, trials without content hashes.
    store.create_run(rid, "league", "gtt", {}, identity_document(old, game), plan_game(game))
    assert len(store.unhashed_specs(rid)) == 4
    resumed, _, said = await play(fake_server, old, store)
    assert resumed.run_id == rid and any(line.startswith("Resuming run") for line in said)
    assert store.unhashed_specs(rid) == []
    grown, _, _ = await play(fake_server, study(fake_server.base_url, ["a", "b", "c"], n=1), store)
    assert grown.counters.already_finished == 4 and grown.counters.finished == 5
    store.close()
