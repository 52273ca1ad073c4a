"""A page whose socket closed as its game ended on another process is shown that end.

Two server processes (PostgreSQL + Redis) and a three-party game owned by one of them; one
person's socket is on the other. That socket closes (as when its process is SIGKILLed), and
the game then ends (the admin ends it) and its end is committed. The person comes back to a
process that does not own the game, naming where they were in it. Redis has no route for them
any more (deleted at the end) and the store no live game: the process asks the one where the
game ended, which sends the page what it missed, the reveal, not the lobby (in the
three-process fault benchmark, 2-5 people a run went from their game straight to the lobby).

And when the process where it ended does not answer (it died; its heartbeat outlives it), the
person is shown that end within moments, from the store (its transcript and reveal: the
process asked is not needed for it), not left waiting: after ENDED_ASK_S, or at once when that
process is known dead. Then the lobby, as after any game.
"""

from __future__ import annotations

import asyncio
import signal
from typing import Any

import pytest
import redis
from sqlalchemy import select

from arena_fixtures import Person
from test_arena_admin_cluster import _end
from test_arena_cluster_queue_adopt import _pid
from test_arena_multiprocess import Processes
from test_arena_resume import reconnect
from test_arena_takeover import SERVER, _match
from test_arena_takeover_inputs_wait_for_rebuild import two_processes
from turinglab.arena.cluster.cluster_store_routes import ENDED_ASK_S
from turinglab.arena.core.abandon import ABANDONED, LEFT_FLAG, TOLD_LEFT, TOLD_STAYED
from turinglab.arena.core.admin_end import ADMIN_ENDED, ADMIN_FLAG
from turinglab.arena.core.stored_end import told_from_flags
from turinglab.games.spec import FLAGGED, GameResult
from turinglab.store.database import PLAYING, Store
from turinglab.store.schema import games

pytestmark = [pytest.mark.database, pytest.mark.slow]


async def _away_as_it_ends(
    arena: Processes, store: Store, people: list[Person]
) -> tuple[Person, dict[str, Any], str]:
    """Two people matched; the one whose socket is not on the game's owner drops, the game is
    ended by the admin and its end committed. Returns (that person, the last game frame
    they saw, the owner's base)."""
    first, second = Person(arena.bases[1]), Person(arena.bases[0])
    people += [first, second]
    for p in (first, second):
        assert (await p.connect())["type"] == "status"
    _judge, _witness, game = await _match(first, second, "three-party")
    with store.engine.connect() as conn:
        named = games.c.setup["arena_game"].as_string() == game
        (worker,) = conn.execute(select(games.c.worker).where(named)).one()
    owner = arena.ports.index(int(str(worker).split("/", 1)[0]))
    away, stays = (first, second) if owner == 0 else (second, first)
    seen = next(f for f in reversed(away.frames) if f["type"] == "game")
    await away.drop()
    await _end(arena.bases[owner], game)
    await stays.until("reveal")
    for _ in range(200):  # the end committed: no live game for the store to route them to
        with store.engine.connect() as conn:
            playing = conn.execute(select(games.c.id).where(games.c.status == PLAYING)).all()
        if not playing:
            break
        await asyncio.sleep(0.05)
    assert not playing, "the game's end was never committed"
    client = redis.Redis.from_url("redis://127.0.0.1:6379/0")
    try:  # and its route deleted (sent after the end): Redis no longer says where they play
        route = f"turinglab:arena:{arena.ns}:player:{_pid(away)}"
        for _ in range(200):
            if not client.exists(route):
                break
            await asyncio.sleep(0.05)
        assert not client.exists(route), "the ended game's route was never deleted"
    finally:
        client.close()
    return away, seen, arena.bases[owner]


async def test_a_page_back_elsewhere_is_shown_the_end_it_missed(postgres_url: str) -> None:
    async with two_processes(SERVER, postgres_url) as (arena, store, people):
        away, seen, owner = await _away_as_it_ends(arena, store, people)
        assert away.base != owner
        await reconnect(away, game=seen["game"], stream=seen["stream"], seq=seen["seq"])
        first = await away.until_any(("reveal", "status"), timeout=10)
        assert first["type"] == "reveal", f"shown {first} instead of the end it missed"
        assert "researchers ended this game" in first["flagged"]
        await away.until("resumed", timeout=10)
        # What they do next starts here: a join is played, not sent to the last owner.
        await away.send(type="join", mode="three-party", consent=True)
        assert (await away.until("status", timeout=10))["state"] == "waiting"


async def test_a_page_back_without_its_place_is_shown_the_lobby(postgres_url: str) -> None:
    """A page reloaded (no resume point) after the game: the lobby, not "waiting" (the process
    it had queued on took it for still queued there, seated by another one)."""
    async with two_processes(SERVER, postgres_url) as (arena, store, people):
        away, _seen, _owner = await _away_as_it_ends(arena, store, people)
        await reconnect(away)
        assert (await away.until("status", timeout=10))["state"] == "idle"


async def test_when_the_process_where_it_ended_is_silent_the_end_comes_from_the_store(
    postgres_url: str,
) -> None:
    async with two_processes(SERVER, postgres_url) as (arena, store, people):
        away, seen, owner = await _away_as_it_ends(arena, store, people)
        dead = arena.procs[arena.bases.index(owner)]
        dead.send_signal(signal.SIGSTOP)  # silent; its heartbeat lasts the takeover delay
        try:
            began = asyncio.get_running_loop().time()
            await reconnect(away, game=seen["game"], stream=seen["stream"], seq=seen["seq"])
            shown = await away.until_any(("game", "status"), timeout=ENDED_ASK_S + 10)
            took = asyncio.get_running_loop().time() - began
            assert took < ENDED_ASK_S + 3, f"shown after {took:.1f} s"
            _is_the_end(shown, seen)
            # Then `resumed`, as any answer to a resume: a page whose join went with the
            # silent process sends it again then (bench: 30 left waiting without it).
            await away.until("resumed", timeout=10)
            await _then_the_lobby(away)
        finally:
            dead.send_signal(signal.SIGCONT)


async def test_when_the_process_where_it_ended_has_died_the_end_comes_from_the_store(
    postgres_url: str,
) -> None:
    async with two_processes(SERVER, postgres_url) as (arena, store, people):
        away, seen, owner = await _away_as_it_ends(arena, store, people)
        dead = arena.procs[arena.bases.index(owner)]
        dead.send_signal(signal.SIGKILL)
        dead.wait(10)
        client = redis.Redis.from_url("redis://127.0.0.1:6379/0")
        try:  # known dead: its heartbeat has expired
            beat = f"turinglab:arena:{arena.ns}:alive:*"
            for _ in range(300):
                if len(client.keys(beat)) == 1:
                    break
                await asyncio.sleep(0.05)
            assert len(client.keys(beat)) == 1, "the dead process's heartbeat never expired"
        finally:
            client.close()
        await reconnect(away, game=seen["game"], stream=seen["stream"], seq=seen["seq"])
        _is_the_end(await away.until_any(("game", "status"), timeout=10), seen)
        await away.until("resumed", timeout=10)
        await _then_the_lobby(away)


def _is_the_end(shown: dict[str, Any], seen: dict[str, Any]) -> None:
    """The snapshot of the game the page was in, over: everything said, and its reveal."""
    assert shown["type"] == "game", f"shown {shown} instead of the end it missed"
    assert shown["game"] == seen["game"] and shown["phase"] == "ended", shown
    assert shown["reveal"] is not None and "researchers ended" in shown["reveal"]["flagged"]
    assert shown["messages"] == seen["messages"], "not the transcript the page had"


async def _then_the_lobby(person: Person) -> None:
    await person.send(type="leave")  # the page's "play again"
    assert (await person.until("status", timeout=10))["state"] == "idle"


def test_people_are_told_from_the_stored_flags_what_they_were_told_at_the_end() -> None:
    """An end rebuilt from the store says what the end said: who left (abandon.py), or that
    the researchers ended it (admin_end.py); any other flag, the reveal's own words."""
    told = told_from_flags
    left = GameResult(ABANDONED, flags=[LEFT_FLAG.format(role="witness", grace=12)])
    assert (told(left, "witness"), told(left, "interrogator")) == (TOLD_LEFT, TOLD_STAYED)
    admin = GameResult(FLAGGED, flags=[ADMIN_FLAG.format(reason="stuck")])
    assert told(admin, "witness") == told(admin, "interrogator") == ADMIN_ENDED
    assert told(GameResult(FLAGGED, flags=["arena: server lost"]), "witness") is None
