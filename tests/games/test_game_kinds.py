"""The registry of game kinds: it matches the config union, and each kind declares exactly the
optional capabilities its game has (the runner and the exports trust the declaration)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, get_args

import pytest
from pydantic import BaseModel

from turinglab.config import GAMES, Experiment, load_config
from turinglab.games.kinds import (
    CAPABILITIES,
    OUTCOME_COLUMNS,
    RESUMABLE,
    GameContext,
    GameKind,
    game_for,
    kind_named,
    kinds,
    register,
)
from turinglab.games.spec import GameResult, TrialSpec
from turinglab.games.table import Seat, Table

CONFIGS = Path(__file__).resolve().parents[2] / "configs"


def builtin_kinds() -> dict[str, GameKind]:
    # Tests register kinds of their own (test_runner_generic.py); the package's are ours.
    return {n: k for n, k in kinds().items() if k.config.__module__.startswith("turinglab.")}


def test_the_config_union_and_the_registry_match() -> None:
    union = {
        get_args(model.model_fields["game"].annotation)[0]: model
        for model in get_args(get_args(Experiment)[0])
    }
    assert set(builtin_kinds()) == set(union) == set(GAMES)
    for name, model in union.items():
        assert kind_named(name).config is model, name


def test_each_kind_declares_exactly_the_capabilities_its_game_has() -> None:
    played: dict[str, Any] = {}
    for path in sorted(CONFIGS.glob("*.yaml")):
        config = load_config(path)
        played.setdefault(config.experiment.game, game_for(config.experiment))
    assert set(played) == set(builtin_kinds()), "a kind with no shipped config is untested"
    for name, game in played.items():
        kind = kind_named(name)
        for capability in CAPABILITIES:
            has = isinstance(game, capability.protocol)
            declared = capability in kind.capabilities
            assert has == declared, f"{name}: {capability.name} has={has} declared={declared}"
            assert (capability.of(game) is game) == declared


def test_the_arena_serves_the_modes_each_kind_declares(monkeypatch: pytest.MonkeyPatch) -> None:
    from turinglab.arena.modes.setups import setup_from_config

    served: dict[str, set[str]] = {}
    for path in sorted(CONFIGS.glob("*.yaml")):
        config = load_config(path)
        for agent in config.agents.values():  # hosted agents are built, never called
            if getattr(agent, "api_key_env", None):
                monkeypatch.setenv(agent.api_key_env, "not-a-key")  # type: ignore[union-attr]
        kind = kind_named(config.experiment.game)
        if not kind.arena_modes:
            served_games = "conversation, gtt, live-itt, strong, three-party, two-party"
            with pytest.raises(ValueError, match=f"the arena plays {served_games} games, not"):
                setup_from_config(config)
            continue
        modes = {mode.name for mode in setup_from_config(config).modes}
        served.setdefault(kind.name, set()).update(modes)
    for name, modes in served.items():
        assert modes <= set(kind_named(name).arena_modes), name
    arena_kinds = {n for n, k in builtin_kinds().items() if k.arena_modes}
    assert set(served) == arena_kinds, "an arena kind with no shipped config is untested"


def test_capabilities_reflect_the_design() -> None:
    gtt = game_for(load_config(CONFIGS / "gtt-offline.yaml").experiment)
    three = game_for(load_config(CONFIGS / "three-party-offline.yaml").experiment)
    assert OUTCOME_COLUMNS.of(gtt) is gtt and RESUMABLE.of(gtt) is gtt  # a fold over its messages
    assert RESUMABLE.of(three) is three and OUTCOME_COLUMNS.of(three) is None
    assert kind_named("live-itt").needs_people and not kind_named("gtt").needs_people


class _Plain:
    name = "plain-test-kind"

    def plan(self) -> list[TrialSpec]:
        return []

    def seats(self, spec: TrialSpec, agents: Mapping[str, Any]) -> dict[str, Seat]:
        return {}

    async def play(self, table: Table, spec: TrialSpec) -> GameResult:
        return GameResult("finished")

    def identity(self) -> dict[str, Any]:
        return {}


class _PlainExperiment(BaseModel):
    game: Literal["plain-test-kind"]


def test_a_kind_promising_a_capability_it_lacks_fails_when_built() -> None:
    kind = GameKind(
        "plain-test-kind",
        _PlainExperiment,
        lambda cfg, context: _Plain(),
        capabilities=frozenset({RESUMABLE}),
    )
    with pytest.raises(TypeError, match=r"declares \['resumable'\] but does not have them"):
        kind.build(_PlainExperiment(game="plain-test-kind"), GameContext())


def test_a_name_is_registered_once() -> None:
    other = GameKind("gtt", _PlainExperiment, lambda cfg, context: _Plain())
    with pytest.raises(ValueError, match="registered twice"):
        register(other)
    assert kind_named("gtt") is not other


def test_an_unknown_game_names_the_known_ones() -> None:
    with pytest.raises(ValueError, match=r"unknown game 'chess' \(known: .*three-party"):
        kind_named("chess")
