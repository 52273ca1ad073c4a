"""Game kinds: how a game is planned, seated and played. The runner sees only this interface.

A new game is one module that defines its experiment config (a pydantic model with
`game: Literal["<name>"]`) and a factory registered here with `@register("<name>")`. The
runner, the store and the CLI never name a particular game.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from turinglab.agents.base import Agent
from turinglab.games.spec import GameResult, TrialSpec
from turinglab.games.table import Seat, Table


@dataclass(frozen=True)
class GameContext:
    """Facts about the agents a game may need (how FD prompts name a target, which agents are
    people or stand-ins)."""

    display_names: Mapping[str, str] = field(default_factory=dict)
    agent_kinds: Mapping[str, str] = field(default_factory=dict)  # agent name -> seat kind


class Game(Protocol):
    """One game kind, set up from its experiment config. Optional: `clock_for(seats)` (or a
    `clock` attribute) chooses the clock a table plays on; the runner uses real time otherwise."""

    name: str

    def plan(self) -> list[TrialSpec]:
        """Every trial of the design, each with its seed; deterministic."""
        ...

    def seats(self, spec: TrialSpec, agents: Mapping[str, Agent]) -> dict[str, Seat]:
        """Fresh seats for one trial."""
        ...

    async def play(self, table: Table, spec: TrialSpec) -> GameResult: ...

    def identity(self) -> dict[str, Any]:
        """What besides the config determines results (prompt texts): part of the run id."""
        ...


GameFactory = Callable[[Any, GameContext], Game]

_REGISTRY: dict[str, GameFactory] = {}


def register(name: str) -> Callable[[GameFactory], GameFactory]:
    def wrap(factory: GameFactory) -> GameFactory:
        _REGISTRY[name] = factory
        return factory

    return wrap


def game_for(experiment: Any, context: GameContext | None = None) -> Game:
    """The game an experiment config asks for (`experiment.game`)."""
    _load_builtin_games()
    try:
        factory = _REGISTRY[experiment.game]
    except KeyError:
        raise ValueError(
            f"unknown game {experiment.game!r} (known: {', '.join(sorted(_REGISTRY))})"
        ) from None
    return factory(experiment, context or GameContext())


def _load_builtin_games() -> None:
    # Imported on first use so that `turinglab --help` stays cheap; each module registers itself.
    import importlib

    for module in BUILTIN_GAME_MODULES:
        importlib.import_module(module)


# Each entry is a module that calls @register when imported.
BUILTIN_GAME_MODULES: list[str] = [
    "turinglab.games.gtt_kind",
    "turinglab.games.three_party",
    "turinglab.games.two_party",
    "turinglab.games.strong",
    "turinglab.games.conversation",
    "turinglab.games.itt_response",
]
