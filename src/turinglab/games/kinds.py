"""Game kinds: how a game is planned, seated and played. The runner sees only this interface.

A new game is one module that defines its experiment config (a pydantic model with
`game: Literal["<name>"]`), its game class, and one `register(GameKind(...))`: the name, the
config model, the factory, the arena modes that play it, and the optional capabilities the game
implements. The runner, the store, the exports and the CLI never name a particular game and
never probe a game for methods: they ask its kind (`RESUMABLE.of(game)`, ...), typed.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar, cast, runtime_checkable

from turinglab.agents.base import Agent
from turinglab.games.clock import Clock
from turinglab.games.spec import GameResult, TrialSpec
from turinglab.games.study_rows import Spoken, StudyGame
from turinglab.games.table import Seat, Table

if TYPE_CHECKING:
    from pydantic import BaseModel


@dataclass(frozen=True)
class GameContext:
    """Facts about the agents a game may need (how FD prompts name a target, which agents are
    people or stand-ins)."""

    display_names: Mapping[str, str] = field(default_factory=dict)
    agent_kinds: Mapping[str, str] = field(default_factory=dict)  # agent name -> seat kind


class Game(Protocol):
    """One game kind, set up from its experiment config; what every game does."""

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


# ---- optional capabilities: what some games do, declared by their kind ---------------------


@runtime_checkable
class ChoosesClock(Protocol):
    """Chooses the clock a table plays on (timed games use simulated time when no person is
    seated, so a batch run never waits for real minutes); others play on real time."""

    def clock_for(self, seats: Mapping[str, Seat]) -> Clock: ...


@runtime_checkable
class Resumable(Protocol):
    """Goes on from a table's committed history (a live game whose server process died)."""

    async def resume(self, table: Table, spec: TrialSpec, *, started_at: float) -> GameResult: ...


@runtime_checkable
class PlannedCount(Protocol):
    """Counts its design without making it, so the planner refuses a huge one in one line."""

    size_field: str  # the config field that makes the design large, named in that line

    def planned_count(self) -> int: ...


@runtime_checkable
class OutcomeColumns(Protocol):
    """Moves its summary fields out of `details` into the outcome's own columns."""

    def outcome_columns(self, result: GameResult) -> dict[str, Any]: ...


@runtime_checkable
class AdaptiveSampling(Protocol):
    """Plans more trials for cells whose conclusion is unsettled (when its config asks)."""

    @property
    def adaptive(self) -> bool: ...

    def more_trials(
        self, planned: Sequence[TrialSpec], rows: Sequence[Mapping[str, Any]]
    ) -> list[TrialSpec]: ...

    def report_adaptive(
        self, rows: Sequence[Mapping[str, Any]], say: Callable[[str], None]
    ) -> None: ...


@runtime_checkable
class StudyRows(Protocol):
    """Describes a finished game for the human-study file, whose rows one builder writes for
    batch runs and arena studies alike (games/study_rows.py)."""

    def study_game(
        self,
        spec: TrialSpec,
        result: GameResult,
        *,
        seat_kinds: Mapping[str, str],
        messages: Sequence[Spoken],
        started_at: float | None = None,
    ) -> StudyGame: ...


@runtime_checkable
class PreferenceRows(Protocol):
    """Writes the Strong Turing Test preference file's rows for a finished game."""

    def stt_rows(self, spec: TrialSpec, result: GameResult) -> list[dict[str, Any]]: ...


C = TypeVar("C")


class Capability(Generic[C]):
    """A typed handle on one optional capability: `OUTCOME_COLUMNS.of(game)` is the game as an
    `OutcomeColumns` when its kind declares it, else None."""

    def __init__(self, name: str, protocol: type) -> None:
        self.name = name
        self.protocol = protocol

    def of(self, game: Game) -> C | None:
        kind = _REGISTRY.get(game.name)
        if kind is None or self not in kind.capabilities:
            return None
        return cast(C, game)  # game_for checked that the game implements the protocol

    def __repr__(self) -> str:
        return f"Capability({self.name!r})"


CHOOSES_CLOCK = Capability[ChoosesClock]("chooses its clock", ChoosesClock)
RESUMABLE = Capability[Resumable]("resumable", Resumable)
PLANNED_COUNT = Capability[PlannedCount]("planned count", PlannedCount)
OUTCOME_COLUMNS = Capability[OutcomeColumns]("outcome columns", OutcomeColumns)
ADAPTIVE_SAMPLING = Capability[AdaptiveSampling]("adaptive sampling", AdaptiveSampling)
STUDY_ROWS = Capability[StudyRows]("study rows", StudyRows)
PREFERENCE_ROWS = Capability[PreferenceRows]("preference rows", PreferenceRows)
CAPABILITIES: tuple[Capability[Any], ...] = (
    CHOOSES_CLOCK,
    RESUMABLE,
    PLANNED_COUNT,
    OUTCOME_COLUMNS,
    ADAPTIVE_SAMPLING,
    STUDY_ROWS,
    PREFERENCE_ROWS,
)


# ---- the registry ----------------------------------------------------------------------------

GameFactory = Callable[[Any, GameContext], Game]


@dataclass(frozen=True)
class GameKind:
    """Everything the layers above the games know about one kind, registered once."""

    name: str  # the config's `experiment.game`
    config: type[BaseModel]  # the experiment model (`game: Literal[name]`)
    factory: GameFactory
    arena_modes: tuple[str, ...] = ()  # the arena modes that play it with people
    capabilities: frozenset[Capability[Any]] = frozenset()
    needs_people: bool = False  # played only in the arena (`turinglab serve`), never in batch

    def build(self, experiment: Any, context: GameContext | None = None) -> Game:
        game = self.factory(experiment, context or GameContext())
        missing = [c.name for c in self.capabilities if not isinstance(game, c.protocol)]
        if missing:  # a registration that promises more than the class has: a bug, said early
            raise TypeError(f"game kind {self.name!r} declares {missing} but does not have them")
        return game


_REGISTRY: dict[str, GameKind] = {}


def register(kind: GameKind) -> GameKind:
    if _REGISTRY.get(kind.name, kind) != kind:
        raise ValueError(f"game kind {kind.name!r} is registered twice")
    _REGISTRY[kind.name] = kind
    return kind


def kinds() -> dict[str, GameKind]:
    """Every registered kind, the built-in ones loaded."""
    _load_builtin_games()
    return dict(_REGISTRY)


def kind_named(name: str) -> GameKind:
    known = kinds()
    try:
        return known[name]
    except KeyError:
        raise ValueError(f"unknown game {name!r} (known: {', '.join(sorted(known))})") from None


def game_for(experiment: Any, context: GameContext | None = None) -> Game:
    """The game an experiment config asks for (`experiment.game`)."""
    return kind_named(experiment.game).build(experiment, context)


def _load_builtin_games() -> None:
    # Imported on first use so that `turinglab --help` stays cheap; each module registers itself.
    for module in BUILTIN_GAME_MODULES:
        importlib.import_module(module)


# Each entry is a module that calls `register` when imported.
BUILTIN_GAME_MODULES: list[str] = [
    "turinglab.games.gtt_kind",
    "turinglab.games.three_party",
    "turinglab.games.two_party",
    "turinglab.games.strong",
    "turinglab.games.conversation",
    "turinglab.games.itt_response",
    "turinglab.games.live_itt",
]
