"""The browser arena: people play Turing tests over websockets, as human agents of the engine.

Nothing in the engine imports this package; it imports the engine. The public names load on
first use (PEP 562 module `__getattr__`): importing a submodule (the frames, a mode, the study
export) does not pull in FastAPI, and a core install without the 'arena' extra can still
import them.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from turinglab.arena.core.modes import ArenaMode, ArenaSettings, ArenaSetup
    from turinglab.arena.web.app import create_app

# public name -> module that defines it
_EXPORTS = {
    "ArenaMode": "turinglab.arena.core.modes",
    "ArenaSettings": "turinglab.arena.core.modes",
    "ArenaSetup": "turinglab.arena.core.modes",
    "create_app": "turinglab.arena.web.app",
}
# `serve` is not re-exported: the name is the submodule `turinglab.arena.web.serve` (the function is
# `turinglab.arena.web.serve.serve`); a lazy name would be shadowed once that module is imported.

__all__ = ["ArenaMode", "ArenaSettings", "ArenaSetup", "create_app"]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'turinglab.arena' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
