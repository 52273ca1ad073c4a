"""What /admin shows of the whole study, whichever process serves the page.

With a store every process writes there, so participants (ids, rounds, games, survey) and the
games' counts are read from it: behind a load balancer each process's page shows the same
study. Without one, memory is all there is: one process is the whole study; several without a
store show each their own people (said so on the page). Blind matching's fallbacks come from
Redis with several processes (every process adds to one count), else from this process.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING

from turinglab.games.spec import FINISHED, FLAGGED
from turinglab.store.arena_people import People, Person

if TYPE_CHECKING:
    from turinglab.arena.core.hub import Arena
    from turinglab.arena.core.hub_port import Hub

MAX_PEOPLE_LISTED = 300  # newest first; the count says how many there are in all


@dataclass
class StudyView:
    people: People
    games: dict[str, int]  # by status: playing, finished, flagged…
    scope: str  # whose people these are, in words ("": the only process's, all of them)
    fallbacks: int | None  # the study's blind-matching fallbacks; None: no study design
    fallbacks_here: int  # of them, this process's (since it started)
    process: str | None = None  # this process's name among several


async def study_view(hub: Hub) -> StudyView:
    arena = hub.arena
    store = arena.store  # the open study's
    if store is not None:
        await store.flush()  # this process's latest consents and games count too
        people = await asyncio.to_thread(store.people, MAX_PEOPLE_LISTED)
        games = await asyncio.to_thread(store.game_counts)
    else:
        people, games = _in_memory(arena)
    here = hub.fallbacks_here()
    fallbacks = None if arena.setup.settings.design is None else await hub.study_fallbacks()
    scope = hub.people_scope if store is None else "every process's, read from the store"
    return StudyView(people, games, scope, fallbacks, here, hub.process)


def _in_memory(arena: Arena) -> tuple[People, dict[str, int]]:
    everyone = list(arena.sessions.by_id.values())
    book = arena.lobby.rounds
    newest = [
        Person(
            participant=p.id,
            first_seen=None,
            games=len(p.games_played),
            rounds=book.played(p.id),
            recruitment=dict(p.recruitment),
            survey=p.survey is not None,
            end=None if p.ending is None else str(p.ending["end"]),
            withdrawn=p.withdrawn,
        )
        for p in everyone[-MAX_PEOPLE_LISTED:][::-1]
    ]
    done = arena.finished
    games = {
        "playing": sum(1 for g in arena.games.values() if g.result is None),
        FINISHED: done.total - done.flagged,
        FLAGGED: done.flagged,
    }
    return People(len(everyone), newest), {k: n for k, n in games.items() if n}
