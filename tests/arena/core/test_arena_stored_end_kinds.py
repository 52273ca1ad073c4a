"""Every game kind's page is shown its end from the store when the process where it ended has
died (stored_end.py), in that kind's own end screen: STT, live ITT, GTT and ITT chat alike.

Two server processes (PostgreSQL + Redis) serving a solo mode of each kind. A person plays on
one; their socket closes; the admin ends the game there and its end is committed; that process
is SIGKILLed. The person comes back to the other process naming the place their page kept in
their game's stream (page_protocol.py's rules): they are sent that game's state, ended, saying
the researchers ended it (its kind's frame, which its page renders and takes), then `resumed`;
not the lobby."""

from __future__ import annotations

import asyncio
import signal

import pytest
import redis
from sqlalchemy import select

from arena_fixtures import Person
from arena_kinds import KINDS, joined
from test_arena_admin_cluster import _end
from test_arena_multiprocess import SERVER
from test_arena_resume import reconnect
from test_arena_takeover_inputs_wait_for_rebuild import two_processes
from turinglab.arena.core.admin_end import ADMIN_ENDED
from turinglab.arena.core.page_protocol import PageProtocol
from turinglab.store.database import PLAYING
from turinglab.store.schema import games

pytestmark = [pytest.mark.database, pytest.mark.slow]

EVERY_KIND_SERVER = SERVER.replace(
    "setup = make_setup(ai_after_s=600)",
    "from arena_kinds import every_kind_setup\nsetup = every_kind_setup()",
)
assert "every_kind_setup()" in EVERY_KIND_SERVER, "the multiprocess server's setup line moved"


async def _until(check: object, what: str) -> None:
    for _ in range(300):
        if check():  # type: ignore[operator]
            return
        await asyncio.sleep(0.05)
    raise AssertionError(what)


@pytest.mark.parametrize("name", list(KINDS))
async def test_a_page_whose_game_ended_on_a_killed_process_is_shown_its_end(
    name: str, postgres_url: str
) -> None:
    kind = KINDS[name]
    async with two_processes(EVERY_KIND_SERVER, postgres_url) as (arena, store, people):
        person = Person(arena.bases[0])
        people.append(person)
        assert (await person.connect())["type"] == "status"
        first = await joined(person, kind)
        game = first["game"]
        with store.engine.connect() as conn:
            named = games.c.setup["arena_game"].as_string() == game
            (worker,) = conn.execute(select(games.c.worker).where(named)).one()
        owner = arena.ports.index(int(str(worker).split("/", 1)[0]))
        await person.drop()
        await _end(arena.bases[owner], game)

        def committed() -> bool:
            with store.engine.connect() as conn:
                return not conn.execute(select(games.c.id).where(games.c.status == PLAYING)).all()

        await _until(committed, "the game's end was never committed")
        client = redis.Redis.from_url("redis://127.0.0.1:6379/0")
        try:
            route = f"turinglab:arena:{arena.ns}:player:"
            await _until(lambda: not list(client.scan_iter(route + "*")), "route never deleted")
            dead = arena.procs[owner]
            dead.send_signal(signal.SIGKILL)
            dead.wait(10)
            beat = f"turinglab:arena:{arena.ns}:alive:*"
            await _until(lambda: len(client.keys(beat)) == 1, "the heartbeat never expired")
        finally:
            client.close()
        person.base = arena.bases[1 - owner]  # back, on the process still up
        # The place the page kept from what it was sent (its own rules: page_protocol.py):
        # every kind's state is a frame of its stream, so the page names its game.
        page = PageProtocol()
        for frame in person.frames:
            page.frame(frame, 0)
        place = page.query()
        assert place is not None and place["game"] == game and place["stream"] == first["stream"]
        await reconnect(person, **place)
        shown = await person.until_any((kind.frame, "status"), timeout=15)
        assert shown["type"] == kind.frame, f"shown {shown} instead of the end it missed"
        assert shown["game"] == game and shown["phase"] == "ended", shown
        assert kind.flagged(shown) == ADMIN_ENDED, shown
        assert page.frame(shown, 0).take  # rebuilt: a new stream's snapshot, which it takes
        page.frame(await person.until("resumed", timeout=10), 0)
        assert page.query() == {"game": game, "stream": shown["stream"], "seq": shown["seq"]}
        await person.send(type="leave")  # the page's "play again": then the lobby
        assert (await person.until("status", timeout=10))["state"] == "idle"
