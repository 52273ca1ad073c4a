"""Garbage-collector settings for long-running event-loop processes: the arena's server
(arena/web/serve.py) and the simulated people of its load benchmark (bench/arena_people.py).

Nothing heavy is imported here, so a benchmark client can use it without the arena.
"""

from __future__ import annotations

import gc


def settle_heap() -> None:
    """Make the garbage collector's full passes rarer and shorter while serving.

    A full pass walks every object and stops everything meanwhile: on a small machine a few
    hundred milliseconds once people's connections fill the heap. What start-up made (modules,
    classes, the app: ~100,000 objects) is frozen out of those passes for good; and a full
    pass may come only after 100 (not 10) middle-generation passes, since what the arena keeps
    lives long (games, people) and the young generations find what dies young."""
    gc.collect()
    gc.freeze()
    young, middle, _ = gc.get_threshold()
    gc.set_threshold(young, middle, 100)
