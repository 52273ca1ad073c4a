"""Mode kits: what the arena knows about one kind of game it plays with people, registered once.

Each mode module (strong_mode.py, gtt_mode.py, itt_chat_mode.py, live_itt_mode.py,
engine_modes.py) ends with one `register(ModeKit(...))`: the experiment kinds it serves (the
config's `experiment.game`), how a config becomes an `ArenaSetup`, the live class that plays
its games (and so rebuilds them after a takeover: live.live_class), whether its AI witnesses
are timed before serving, the frame it sends whole and its admin downloads. Setups, the live
core, takeover and the web layer ask the kit, by the experiment's or the mode's game name; none
of them names a mode or probes one (`isinstance`, `getattr`), as the runner asks `games.kinds`
and never a game.

The mode modules load on the first lookup, not when this module is imported (the modes pull in
their games and agents; `turinglab --help` and a bare import of the frames stay cheap), the way
`games.kinds` loads its games.
"""

from __future__ import annotations

import importlib
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import UnionType
from typing import Any, Generic, TypeVar, cast

from pydantic import BaseModel

from turinglab.agents.base import Agent
from turinglab.arena.core.modes import ArenaMode, ArenaSettings, ArenaSetup
from turinglab.config import AgentConfig

E = TypeVar("E", bound=BaseModel)

# (experiment, the config's agents, settings or None: the kind's defaults) -> what is served
SetupFn = Callable[[E, Mapping[str, AgentConfig], ArenaSettings | None], ArenaSetup]
# (experiment, the built agents, the longest reply time) -> one measure per AI witness, each
# with a `fits` and a `line()` (witness_preflight.WitnessMeasure)
MeasureFn = Callable[[E, Mapping[str, Agent], float], Awaitable[Sequence[Any]]]


@dataclass(frozen=True)
class ModeKit(Generic[E]):
    """Everything core, web and cluster code know about one kind of arena game."""

    games: tuple[str, ...]  # the `experiment.game` values (and the games' names) it plays
    # The experiment config model (or union of models) those values validate to: E at runtime.
    experiment: type[BaseModel] | UnionType
    setup: SetupFn[E]
    # The LiveGame subclass that plays (and, after a takeover, rebuilds) its games; None:
    # LiveGame itself, the chat games'. Typed Any: live.py reads kits (live_class), so this
    # module cannot import it (nor can engine_modes.py, which must not reach the web stack).
    live_game: type[Any] | None
    # Times its AI witnesses against the delay model before serving (witness_preflight.py);
    # None: its kind is not measured.
    measure_witnesses: MeasureFn[E] | None = None
    # The frame type (frames.py) its live game sends whole, as its state, instead of a "game"
    # snapshot and message frames; None: the snapshot's. The page's protocol and the cluster's
    # relay treat these alike (state_frames(); tests/arena/core/test_mode_kits.py holds them to it).
    state_frame: str | None = None
    # The admin page's extra downloads for a study of this kind: (path, label as HTML).
    downloads: tuple[tuple[str, str], ...] = ()
    # The built-in exit survey's questions reworded for this kind's roles (survey_wording.py):
    # question key -> the fields that replace the default's.
    survey_rewording: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    # Its people upload images over HTTP (web/image_routes.py), which its live game keeps
    # (image_port.TakesImages).
    takes_images: bool = False

    def setup_for(
        self,
        experiment: BaseModel,
        agent_configs: Mapping[str, AgentConfig],
        settings: ArenaSettings | None = None,
    ) -> ArenaSetup:
        return self.setup(self._typed(experiment), agent_configs, settings)

    async def measured(
        self, experiment: BaseModel, agents: Mapping[str, Agent], reply_max_s: float
    ) -> Sequence[Any]:
        if self.measure_witnesses is None:
            return []
        return await self.measure_witnesses(self._typed(experiment), agents, reply_max_s)

    def _typed(self, experiment: BaseModel) -> E:
        # The config's union is told apart by `game`, so a kit found by name gets its own
        # model; anything else is a registration bug, said here rather than deep in a setup.
        if not isinstance(experiment, self.experiment):
            raise TypeError(f"{self.games}: not a {self.experiment} but {type(experiment)}")
        return cast(E, experiment)


_KITS: dict[str, ModeKit[Any]] = {}


def register(kit: ModeKit[E]) -> ModeKit[E]:
    for game in kit.games:
        if _KITS.get(game, kit) != kit:
            raise ValueError(f"arena mode kit for {game!r} is registered twice")
        _KITS[game] = kit
    return kit


def kits() -> dict[str, ModeKit[Any]]:
    """Every game name the arena plays -> its kit, the built-in mode modules loaded."""
    for module in set(BUILTIN_KIT_MODULES.values()):
        importlib.import_module(module)
    return dict(_KITS)


def kit_named(game: str) -> ModeKit[Any] | None:
    """The kit playing `game`, loading only its own module (a three-party study does not
    import the STT's image handling); None if no kit plays it."""
    module = BUILTIN_KIT_MODULES.get(game)
    if module is not None and game not in _KITS:
        importlib.import_module(module)
    return _KITS.get(game)


def kit_for(experiment_game: str) -> ModeKit[Any]:
    """The kit serving configs whose `experiment.game` is this; ValueError naming the kinds
    the arena plays if there is none."""
    kit = kit_named(experiment_game)
    if kit is None:
        served = ", ".join(sorted(kits()))
        raise ValueError(
            f"experiment.game: the arena plays {served} games, not {experiment_game!r}"
        )
    return kit


def kit_of(mode: ArenaMode) -> ModeKit[Any] | None:
    """The kit of the game a mode plays; None for a game no kit registered (a test's own)."""
    return kit_named(mode.game.name)


def state_frames() -> tuple[str, ...]:
    """Every frame type a live game sends whole as its state (`ModeKit.state_frame`)."""
    return tuple(sorted({k.state_frame for k in kits().values() if k.state_frame}))


def downloads(modes: Sequence[ArenaMode]) -> list[tuple[str, str]]:
    """The admin's extra downloads for a study of these modes, each once, in their order."""
    found = (d for m in modes if (kit := kit_of(m)) is not None for d in kit.downloads)
    return list(dict.fromkeys(found))


# game name -> the module that registers its kit when imported
# (tests/arena/core/test_mode_kits.py checks that each registers the names it is listed for,
# and nothing else).
BUILTIN_KIT_MODULES: dict[str, str] = {
    "three-party": "turinglab.arena.modes.engine_modes",
    "two-party": "turinglab.arena.modes.engine_modes",
    "strong": "turinglab.arena.modes.strong_mode",
    "gtt": "turinglab.arena.modes.gtt_mode",
    "conversation": "turinglab.arena.modes.itt_chat_mode",
    "live-itt": "turinglab.arena.modes.live_itt_mode",
}
