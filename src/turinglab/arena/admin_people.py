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

from turinglab.arena.metrics_page import fallbacks_here
from turinglab.games.spec import FINISHED, FLAGGED
from turinglab.store.arena_people import People, Person

if TYPE_CHECKING:
    from turinglab.arena.cluster import Cluster
    from turinglab.arena.hub import Arena

MAX_PEOPLE_LISTED = 300  # newest first; the count says how many there are in all


@dataclass
class StudyView:
    people: People
    games: dict[str, int]  # by status: playing, finished, flagged…
    scope: str  # whose people these are, in words ("": the only process's, all of them)
    fallbacks: int | None  # the study's blind-matching fallbacks; None: no study design
    fallbacks_here: int  # of them, this process's (since it started)
    process: str | None = None  # this process's name among several


async def study_view(arena: Arena, cluster: Cluster | None) -> StudyView:
    store = arena.store  # the open study's
    if store is not None:
        await store.flush()  # this process's latest consents and games count too
        people = await asyncio.to_thread(store.people, MAX_PEOPLE_LISTED)
        games = await asyncio.to_thread(store.game_counts)
    else:
        people, games = _in_memory(arena)
    here = fallbacks_here(arena, cluster)
    fallbacks: int | None = here
    if arena.setup.settings.design is None:
        fallbacks = None
    elif cluster is not None:
        fallbacks = await cluster.study_fallbacks()
    scope = ""
    if store is not None:
        scope = "every process's, read from the store"
    elif cluster is not None:
        scope = "this process's only: without a store processes cannot see each other's people"
    me = None if cluster is None else cluster.me
    return StudyView(people, games, scope, fallbacks, here, me)


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
