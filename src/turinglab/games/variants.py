"""Moved to `turinglab.variants` (below the games, where analysis can import it); kept so that
existing imports keep working."""

from turinglab.variants import *  # noqa: F403
