"""An input sent while a taken-over game is being rebuilt waits for it, not for a dead owner.

Two server processes (PostgreSQL + Redis); a three-party game owned by process 1, with one
person connected to each process. Process 1 is SIGKILLed. Process 2 claims the game and is
made slow to rebuild it (3 s after routing its people to itself, as hundreds of claimed games
would take): in that window its cache still names process 1 as the owner. The person on
process 2 sends an input then, once: it must be applied when the game is rebuilt, not
forwarded to the dead process and lost until the page happens to send it again. The person of
the dead process, reconnecting then, is shown their game once rebuilt, not the lobby. The
person on process 2 is told, as the dead process is noticed, that their game is being moved.
"""

from __future__ import annotations

import asyncio
import signal

import pytest
from sqlalchemy import select

from arena_fixtures import Person
from test_arena_multiprocess import arena_processes
from test_arena_takeover import SERVER, _match
from turinglab.store.database import PLAYING, Store
from turinglab.store.schema import games

pytestmark = [pytest.mark.database, pytest.mark.slow]

REBUILD_S = 3.0
SLOW_SERVER = SERVER.replace(
    "setup = takeover_setup()",
    f"""
import asyncio
from turinglab.arena.cluster import Cluster
_route_here = Cluster._route_here
async def _slow_route_here(self, claimed):
    notes = await _route_here(self, claimed)
    await asyncio.sleep({REBUILD_S})  # routed here, not rebuilt yet: as with hundreds of games
    return notes
Cluster._route_here = _slow_route_here
setup = takeover_setup()""",
)


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


async def test_an_input_sent_during_the_rebuild_is_applied_without_a_resend(
    postgres_url: str,
) -> None:
    async with arena_processes(SLOW_SERVER, postgres_url) as arena:
        one, two = arena.bases
        here, gone = Person(two), Person(one)  # `gone`'s process takes the match, then dies
        store = Store(postgres_url)
        try:
            for p in (here, gone):
                assert (await p.connect())["type"] == "status"
            judge, witness, _game = await _match(here, gone, "three-party")
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

            arena.procs[0].send_signal(signal.SIGKILL)
            arena.procs[0].wait(10)
            await gone.drop()
            await _claimed_by(store, arena.ports[1])
            began = asyncio.get_running_loop().time()
            await here.send(type="message", id="in-rebuild", after=after, **sent)
            # The person of the dead process comes back meanwhile: routed here, where the game
            # is not rebuilt yet. They wait for it, not shown the lobby.
            gone.base = two
            assert (await gone.connect())["type"] == "game"
            # Sent once, never again: shown (so stored) once the game is rebuilt.
            shown = await here.until("message", ref="in-rebuild", timeout=20)
            assert shown["text"] == sent["text"]
            took = asyncio.get_running_loop().time() - began
            assert took < REBUILD_S + 5, f"applied {took:.1f} s after it was sent"
            # Told why its game went quiet as soon as the dead process was noticed.
            (moving,) = [f for f in here.frames if f["type"] == "error"]
            assert moving["code"] == "moving" and "picking your game up" in moving["message"]
        finally:
            store.close()
            for p in (here, gone):
                await p.close()
