"""An input sent while a taken-over game is being rebuilt waits for it, not for a dead owner.

Two server processes (PostgreSQL + Redis); a three-party game owned by process 1, with one
person connected to each process. Process 1 is SIGKILLed. Process 2 claims the game and is
made slow to rebuild it (3 s after routing its people to itself, as hundreds of claimed games
would take): in that window its cache still names process 1 as the owner. The person on
process 2 sends an input then, once: it must be applied when the game is rebuilt, not
forwarded to the dead process and lost until the page happens to send it again. The person of
the dead process, reconnecting then, is shown their game once rebuilt, not the lobby. The
person on process 2 is told, as the dead process is noticed, that their game is being moved.

And a person of the dead process whose reconnect the survivor takes longer than the abandon
grace to complete (as in a reconnect storm on a saturated survivor) is back, not gone: the
game goes on rather than ending as abandoned by someone whose socket is open.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from arena_fixtures import Person
from test_arena_multiprocess import Processes, arena_processes
from test_arena_resume import reconnect
from test_arena_takeover import SERVER, _match
from turinglab.arena.core.abandon import TOLD_STAYED
from turinglab.store.database import PLAYING, Store
from turinglab.store.schema import games, judgements

pytestmark = [pytest.mark.database, pytest.mark.slow]

REBUILD_S = 3.0
SLOW_SERVER = SERVER.replace(
    "setup = takeover_setup()",
    f"""
import asyncio
from turinglab.arena.cluster.cluster_takeover import Takeover
_route_here = Takeover._route_here
async def _slow_route_here(self, claimed):
    notes = await _route_here(self, claimed)
    await asyncio.sleep({REBUILD_S})  # routed here, not rebuilt yet: as with hundreds of games
    return notes
Takeover._route_here = _slow_route_here
setup = takeover_setup()""",
)


GRACE_S = 3.0  # abandon_after_s of the slow-connect server
SLOW_CONNECT_S = GRACE_S + 5  # past the grace, counted from the takeover
SLOW_CONNECT_SERVER = SERVER.replace(
    "setup = takeover_setup()",
    f"""
import asyncio
from dataclasses import replace
from turinglab.arena.cluster.cluster_takeover import Takeover
_taken = []
_route_here = Takeover._route_here
async def _noted_route_here(self, claimed):
    _taken.append(True)
    return await _route_here(self, claimed)
Takeover._route_here = _noted_route_here
_owner_once_rebuilt = Takeover.owner_once_rebuilt
async def _slow_owner_once_rebuilt(self, pid):
    if _taken:  # a connect after the takeover: the survivor is swamped
        await asyncio.sleep({SLOW_CONNECT_S})
    return await _owner_once_rebuilt(self, pid)
Takeover.owner_once_rebuilt = _slow_owner_once_rebuilt
setup = takeover_setup()
settings = setup.settings.model_copy(update=dict(abandon_after_s={GRACE_S}))
setup = replace(setup, settings=settings)""",
)


@contextlib.asynccontextmanager
async def two_processes(
    server: str, url: str
) -> AsyncIterator[tuple[Processes, Store, list[Person]]]:
    """Two arena processes of `server`, the store, and a list for the people a test makes:
    closed, all of them, afterwards."""
    async with arena_processes(server, url) as arena:
        store = Store(url)
        people: list[Person] = []
        try:
            yield arena, store, people
        finally:
            store.close()
            for p in people:
                await p.close()


async def _claimed_by(store: Store, port: int) -> None:
    """Until the live game's row names a process of `port` as its worker (the claim)."""
    for _ in range(300):
        with store.engine.connect() as conn:
            playing = select(games.c.worker).where(games.c.status == PLAYING)
            workers = [w for (w,) in conn.execute(playing)]
        if workers and all(str(w).startswith(f"{port}/") for w in workers):
            return
        await asyncio.sleep(0.05)
    with store.engine.connect() as conn:
        every = select(games.c.status, games.c.worker, games.c.game)
        rows = [tuple(r) for r in conn.execute(every)]
    raise AssertionError(f"the game was not claimed by process {port}: {rows}")


async def _owner_port(store: Store) -> int:
    """The port of the process whose row names it the live game's worker."""
    with store.engine.connect() as conn:
        playing = select(games.c.worker).where(games.c.status == PLAYING)
        workers = [w for (w,) in conn.execute(playing)]
    assert len(workers) == 1, workers
    return int(str(workers[0]).split("/", 1)[0])


async def _matched(
    arena: Processes, store: Store, people: list[Person]
) -> tuple[Person, Person, Person, Person, int]:
    """Two people, one on each process, matched: (judge, witness, here, gone, dead), where
    `gone` is the person on the process that owns the game, arena.procs[dead], to be killed.
    Which process seats the pair is asked of the store, not assumed: a run that killed the
    other one found no takeover (its connect "not slowed"), on 2026-11-28."""
    first, second = Person(arena.bases[1]), Person(arena.bases[0])
    people += [first, second]  # closed by the caller
    for p in (first, second):
        assert (await p.connect())["type"] == "status"
    judge, witness, _game = await _match(first, second, "three-party")
    dead = arena.ports.index(await _owner_port(store))
    here, gone = (first, second) if dead == 0 else (second, first)
    return judge, witness, here, gone, dead


async def test_an_input_sent_during_the_rebuild_is_applied_without_a_resend(
    postgres_url: str,
) -> None:
    async with two_processes(SLOW_SERVER, postgres_url) as (arena, store, people):
        judge, witness, here, gone, dead = await _matched(arena, store, people)
        survivor = 1 - dead
        snap = next(f for f in here.frames if f["type"] == "game")
        # A question shown, so the game and what was said are stored before the kill.
        await judge.send(type="message", id="q-1", after=0, channel="A", text="hi A, ok?")
        await judge.until("message", ref="q-1")
        after = len(snap["messages"]) + 1
        if here is witness:  # it answers a question asked before the kill
            await judge.send(type="message", id="q-2", after=0, channel="B", text="hi B, ok?")
            await judge.until("message", ref="q-2")
            heard = await witness.until("message", sender="them")
            sent = {"channel": "A", "text": f"fine, thanks ({heard['text'][:8]})"}
        else:  # it asks the other witness its first question
            sent = {"channel": "B", "text": "what did you have for breakfast?"}

        arena.procs[dead].send_signal(signal.SIGKILL)
        arena.procs[dead].wait(10)
        await gone.drop()
        await _claimed_by(store, arena.ports[survivor])
        began = asyncio.get_running_loop().time()
        await here.send(type="message", id="in-rebuild", after=after, **sent)
        # The person of the dead process comes back meanwhile: routed here, where the game
        # is not rebuilt yet. They wait for it, not shown the lobby.
        gone.base = arena.bases[survivor]
        assert (await gone.connect())["type"] == "game"
        # Sent once, never again: shown (so stored) once the game is rebuilt (the slow
        # rebuild took over 20 s once in a loaded full run: the wait is not the promise).
        shown = await here.until("message", ref="in-rebuild", timeout=60)
        assert shown["text"] == sent["text"]
        took = asyncio.get_running_loop().time() - began
        assert took < REBUILD_S + 5, f"applied {took:.1f} s after it was sent"
        # Told why its game went quiet as soon as the dead process was noticed.
        (moving,) = [f for f in here.frames if f["type"] == "error"]
        assert moving["code"] == "moving" and "picking your game up" in moving["message"]


async def test_a_person_whose_reconnect_is_slow_after_a_takeover_is_not_counted_gone(
    postgres_url: str,
) -> None:
    async with two_processes(SLOW_CONNECT_SERVER, postgres_url) as (arena, store, people):
        judge, _witness, here, gone, dead = await _matched(arena, store, people)
        survivor = 1 - dead
        await judge.send(type="message", id="q-1", after=0, channel="A", text="hi A, ok?")
        await judge.until("message", ref="q-1")

        arena.procs[dead].send_signal(signal.SIGKILL)
        arena.procs[dead].wait(10)
        await gone.drop()
        await _claimed_by(store, arena.ports[survivor])
        gone.base = arena.bases[survivor]
        began = asyncio.get_running_loop().time()
        back = await gone.connect()  # open at once, connected only after SLOW_CONNECT_S
        told = []  # a connect that waits is told why meanwhile (after RELAY_NOTICE_S)
        while back["type"] == "error" and back["code"] == "relay-delayed":
            told.append(back)
            back = await gone.recv()
        took = asyncio.get_running_loop().time() - began
        assert took >= SLOW_CONNECT_S - 0.5, f"the connect was not slowed ({took:.1f} s)"
        assert told, f"waited {took:.1f} s for its game and was told nothing"
        assert back["type"] == "game" and back["phase"] != "ended", back
        ended = [f for p in (here, gone) for f in p.frames if f["type"] == "reveal"]
        assert not ended, f"a person with an open socket was counted gone: {ended}"


CATCH_UP_S = 1.5  # how long a rebuilt game takes to catch up (its clock, its commits)
SHORT_GAME_SERVER = SERVER.replace(
    "setup = takeover_setup()",
    f"""
import asyncio
import arena_fixtures
from turinglab.games.interrogation import Interrogation
arena_fixtures.RULES["time_limit_s"] = 4  # over before the kill: the verdict is being given
_run = Interrogation.run
async def _slow_to_catch_up(self, resume_from=None):
    if resume_from is not None:  # as under a takeover's load: the verdict form comes late
        await asyncio.sleep({CATCH_UP_S})
    return await _run(self, resume_from)
Interrogation.run = _slow_to_catch_up
setup = takeover_setup()""",
)


async def _killed_and_back(
    arena: Processes, store: Store, gone: Person, dead: int
) -> dict[str, Any]:
    """The owner arena.procs[dead] is SIGKILLed; once the other process has claimed the game,
    `gone` (a person of the dead one) connects there; returns the first frame they get."""
    arena.procs[dead].send_signal(signal.SIGKILL)
    arena.procs[dead].wait(10)
    await gone.drop()
    await _claimed_by(store, arena.ports[1 - dead])
    gone.base = arena.bases[1 - dead]
    return await gone.connect()


async def _verdict_taken(
    judge: Person, witness: Person, store: Store, confidence: int
) -> tuple[list[tuple[Any, ...]], list[float]]:
    """The judge's page (re-)sends a verdict: taken (not refused), both shown the reveal.
    Returns the stored games' (status, flags) and judgements' confidences."""
    verdict = {"choice": "A", "confidence": confidence, "reason": "asked about the weather"}
    await judge.send(type="verdict", id="v-1", **verdict)
    shown = await judge.until_any(("reveal", "error"), timeout=20)
    assert shown["type"] == "reveal", f"the verdict was refused: {shown}"
    await witness.until("reveal", timeout=20)
    with store.engine.connect() as conn:
        rows = [tuple(r) for r in conn.execute(select(games.c.status, games.c.flags))]
        made = list(conn.execute(select(judgements.c.confidence)).scalars())
    return rows, made


async def test_a_verdict_resent_to_a_rebuilt_game_whose_time_is_up_is_taken(
    postgres_url: str,
) -> None:
    """The talk was over (time up) and the interrogator's verdict went to the process that
    died. The page sends it again as soon as the rebuilt game's snapshot comes, before the
    rebuilt game has caught up and asked for it: it is taken, not refused as "not now" (the
    page counts a refusal as an answer and would not send it again; 41 games of a fault run
    ended without a verdict)."""
    async with two_processes(SHORT_GAME_SERVER, postgres_url) as (arena, store, people):
        judge, witness, here, gone, dead = await _matched(arena, store, people)
        await judge.until("phase", phase="verdict", timeout=30)
        assert (await _killed_and_back(arena, store, gone, dead))["type"] == "game"
        if judge is here:
            await judge.until("game", timeout=20)  # the rebuilt game's snapshot
        rows, made = await _verdict_taken(judge, witness, store, 70)
        assert made == [70], (rows, made)  # stored once


async def test_a_game_ended_by_the_interrogator_goes_on_to_the_verdict_after_a_takeover(
    postgres_url: str,
) -> None:
    """The interrogator ended the talk early and the owner died before their verdict: the
    rebuilt game goes on to the verdict, not back to the talk (the end is kept in the
    transcript as the game's note), and the verdict their page sends again is taken."""
    async with two_processes(SERVER, postgres_url) as (arena, store, people):
        judge, witness, _here, gone, dead = await _matched(arena, store, people)
        await judge.send(type="message", id="q-1", after=0, channel="A", text="hi A, ok?")
        await judge.until("message", ref="q-1")
        await judge.send(type="end", id="e-1")
        # Shown once stored, then the verdict asked.
        await judge.until("message", sender="game", text="You ended the conversation.")
        await judge.until("phase", phase="verdict", timeout=30)
        back = await _killed_and_back(arena, store, gone, dead)
        rebuilt = back if gone is judge else await judge.until("game", timeout=20)
        assert rebuilt["phase"] == "verdict", rebuilt["phase"]
        rows, made = await _verdict_taken(judge, witness, store, 60)
        assert all(r == ("finished", []) for r in rows) and made == [60], (rows, made)


LEAVE_GRACE_S = 4.0
DEAF_SERVER = SERVER.replace(
    "setup = takeover_setup()",
    f"""
import os
from dataclasses import replace
from turinglab.arena.cluster.cluster import Cluster
from turinglab.arena.cluster.cluster_takeover import Takeover
def _marked():
    return os.path.exists("/tmp/deaf-" + {{ns!r}} + "-" + str({{port!r}}))
_deliver = Cluster._deliver
def _deaf(self, data):
    # Marked: the owner's answers to this process's catch-up never land (as when they are
    # still on their way), so the owner it knows stays the dead one; and it takes nothing
    # over (the other survivor does).
    if _marked() and data.frame.get("type") in ("game", "resumed"):
        return
    _deliver(self, data)
Cluster._deliver = _deaf
_take_over_lost = Takeover.take_over_lost
async def _not_here(self):
    if not _marked():
        await _take_over_lost(self)
Takeover.take_over_lost = _not_here
setup = takeover_setup()
settings = setup.settings.model_copy(update=dict(abandon_after_s={LEAVE_GRACE_S}))
setup = replace(setup, settings=settings)""",
)


async def test_a_departure_from_a_third_process_during_a_takeover_is_told(
    postgres_url: str,
) -> None:
    """The owner dies; a person of its game reconnects to a third process, which asks the dead
    owner, then (its games claimed) the new one, which counts them present through it. They
    leave before the answer comes back: the new owner must be told, not only the dead one the
    third process still names. Seen in a fault run: the game ran to its end and its verdict
    timeout, 135 s, before the partner was told; no verdict either."""
    async with arena_processes(DEAF_SERVER, postgres_url, 3) as arena:
        store = Store(postgres_url)
        first, second = Person(arena.bases[1]), Person(arena.bases[0])
        marker = Path(f"/tmp/deaf-{arena.ns}-{arena.ports[2]}")
        try:
            for p in (first, second):
                assert (await p.connect())["type"] == "status"
            await _match(first, second, "three-party")
            dead = arena.ports.index(await _owner_port(store))
            gone, stays = (first, second) if dead == 1 else (second, first)
            third = arena.bases[2]
            marker.touch()
            arena.procs[dead].send_signal(signal.SIGKILL)
            arena.procs[dead].wait(10)
            gone.base = third
            await reconnect(gone)  # answered by nobody: asked of the dead owner, then the new
            await _claimed_by(store, arena.ports[1 - dead])
            with pytest.raises(TimeoutError):  # present through the third process
                await stays.until("reveal", timeout=LEAVE_GRACE_S + 1.0)
            await gone.close()  # leaves for good
            reveal = await stays.until("reveal", timeout=LEAVE_GRACE_S + 15)
            assert reveal["flagged"] == TOLD_STAYED
        finally:
            marker.unlink(missing_ok=True)
            store.close()
            for p in (first, second):
                await p.close()
