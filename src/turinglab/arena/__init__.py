"""The browser arena: people play Turing tests over websockets, as human agents of the engine.

Nothing in the engine imports this package; it imports the engine.
"""

from turinglab.arena.app import create_app
from turinglab.arena.modes import ArenaMode, ArenaSettings, ArenaSetup
from turinglab.arena.serve import serve

__all__ = ["ArenaMode", "ArenaSettings", "ArenaSetup", "create_app", "serve"]
