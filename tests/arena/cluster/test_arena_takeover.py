"""A server process killed mid-game: another process takes its games over (PostgreSQL + Redis).

Two real server processes share one PostgreSQL database and Redis. Two games are owned by
process 1: the engine's three-party game (which can resume from its history) and a chat game
of a kind that cannot. Process 1 is SIGKILLed mid-game; its people reconnect to process 2,
which has claimed both games: the three-party game goes on (every message so far shown again,
the clock counted from the stored start, ELIZA answering from the history) and completes; the
other ends flagged "server lost" with its messages kept, and its people are told so. Both
are stored once. Both processes' admin pages list every live game with its owning process.
"""

from __future__ import annotations

import asyncio
import json
import signal
import time
import uuid
from dataclasses import replace
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import redis

from arena_fixtures import (
    ADMIN_PASSWORD,
    Person,
    engine_setup,
    make_setup,
    pair,
    running_arena,
)
from test_arena_multiprocess import arena_processes, drop_namespace
from turinglab.arena import ArenaSettings, ArenaSetup
from turinglab.arena.cluster.cluster_messages import own_prefix, relayed_payload
from turinglab.arena.core.live_reveal import LOST_TEXT, SERVER_LOST
from turinglab.arena.core.store_bridge import ArenaStore
from turinglab.store.database import Store
from turinglab.store.schema import games

TESTS = Path(__file__).parents[2]
AUTH = {"Authorization": aiohttp.encode_basic_auth("admin", ADMIN_PASSWORD)}
TAKEOVER_AFTER_S = 1.5


def takeover_setup() -> ArenaSetup:
    """The engine's three-party game (resumable) and a chat game whose kind cannot resume."""
    engine, chat = engine_setup(), make_setup()
    chat_mode = chat.mode("three-party")
    assert chat_mode is not None and not hasattr(chat_mode.game, "resume")
    return ArenaSetup(
        [*engine.modes, replace(chat_mode, name="chat")],
        {**engine.agents, **chat.agents},
        {**engine.display_names, **chat.display_names},
        ArenaSettings(ai_after_s=600, takeover_after_s=TAKEOVER_AFTER_S),
    )


SERVER = """
import sys
sys.path.insert(0, {tests!r})
from arena_fixtures import serve_on_fd
from arena_fixtures import ADMIN_PASSWORD
from test_arena_takeover import takeover_setup
from turinglab.arena import create_app
from turinglab.arena.core.store_bridge import ArenaStore
from turinglab.store.database import Store
from turinglab.store.schema import games
setup = takeover_setup()
app = create_app(
    setup, admin_password=ADMIN_PASSWORD, store=ArenaStore(Store({db!r}), setup, worker={port!r}),
    redis_url="redis://127.0.0.1:6379/0", secret="shared test secret", namespace={ns!r},
)
serve_on_fd(app, {fd})
"""


async def _match(waiter: Person, taker: Person, mode: str) -> tuple[Person, Person, str]:
    """`waiter` queues first, so `taker`'s process takes the match and owns the game."""
    await waiter.send(type="join", mode=mode, consent=True)
    assert (await waiter.until("status"))["state"] == "waiting"
    await taker.send(type="join", mode=mode, consent=True)
    gw, gt = await waiter.until("game"), await taker.until("game")
    assert gw["game"] == gt["game"]
    judge, witness = (waiter, taker) if gw["role"] == "interrogator" else (taker, waiter)
    return judge, witness, gw["game"]


async def _exchange(judge: Person, witness: Person, turn: int) -> list[str]:
    """The judge asks both witnesses; the person answers; returns what people typed."""
    typed = []
    start = len(judge.frames)
    for ch in ("A", "B"):
        typed.append(f"question {turn} for {ch}")
        await judge.send(type="message", channel=ch, text=typed[-1])

    def arrived(sender: str) -> set[str]:
        return {
            f["channel"]
            for f in judge.frames[start:]
            if f["type"] == "message" and f.get("sender") == sender
        }

    while arrived("you") != {"A", "B"}:  # both questions in the game before anyone answers
        await judge.recv()
    heard = await witness.until("message", sender="them")
    typed.append(f"answer {turn} to {heard['text']}")
    await witness.send(type="message", channel="A", text=typed[-1])
    while arrived("them") != {"A", "B"}:
        await judge.recv()
    return typed


async def _live(base: str) -> list[dict[str, Any]]:
    async with (
        aiohttp.ClientSession(headers=AUTH) as http,
        http.get(base + "/admin/live.json") as r,
    ):
        assert r.status == 200
        return list(await r.json())


async def _live_stored(
    bases: tuple[str, ...], at_least: dict[str, int]
) -> list[list[dict[str, Any]]]:
    """Each process's live list, once they show at least these many stored messages per game
    (the group commit takes milliseconds) and no message lands between the reads (an AI
    witness may still be answering)."""
    for _ in range(600):
        seen = [await _live(base) for base in bases]
        counts = [{g["game"]: g["messages"] for g in live} for live in seen]
        stored = all(c.get(game, 0) >= n for c in counts for game, n in at_least.items())
        if stored and all(live == seen[0] for live in seen):
            return seen
        await asyncio.sleep(0.05)
    raise AssertionError(f"live games {counts}, expected at least {at_least} on every process")


async def _reconnect(person: Person, base: str) -> dict[str, Any]:
    """Reconnect a person whose process died to another one (the cookie goes with them)."""
    person.base = base
    first = await person.connect()
    return first if first["type"] == "game" else await person.until("game", timeout=15)


async def _reveal(person: Person) -> dict[str, Any]:
    """The reveal a person was sent, as a frame or inside a game snapshot."""
    for frame in person.frames:
        if frame["type"] == "reveal" or (frame["type"] == "game" and frame.get("reveal")):
            return dict(frame if frame["type"] == "reveal" else frame["reveal"])
    return await person.until("reveal", timeout=15)


@pytest.mark.database
async def test_a_killed_process_s_games_are_taken_over(postgres_url: str) -> None:
    async with arena_processes(SERVER, postgres_url) as arena:
        ports, procs = arena.ports, arena.procs
        one, two = arena.bases
        people = [Person(two), Person(one), Person(two), Person(one)]
        try:
            for p in people:
                assert (await p.connect())["type"] == "status"
            a, b, c, d = people  # b and d are on process 1, which takes both matches
            judge, witness, resumable = await _match(a, b, "three-party")
            chat_judge, _chat_witness, lost = await _match(c, d, "chat")
            typed = await _exchange(judge, witness, 0)
            await chat_judge.send(type="message", channel="A", text="are you a bot?")
            await chat_judge.until("message", sender="you", text="are you a bot?")
            # Every process lists every live game, with its owner (process 1) and messages so far
            # (once the group commit, milliseconds, has landed).
            seen = await _live_stored((one, two), {resumable: 4, lost: 1})
            assert seen[0] == seen[1]
            by_game = {g["game"]: g for g in seen[1]}
            assert set(by_game) == {resumable, lost}
            assert all(g["owner"].startswith(f"{ports[0]}/") and g["owner_alive"] for g in seen[1])
            assert by_game[resumable]["messages"] == 4 and by_game[lost]["messages"] >= 1
            assert by_game[resumable]["mode"] == "three-party" and by_game[lost]["mode"] == "chat"
            before = {p: [m["text"] for m in p.frames if m["type"] == "message"] for p in people}

            procs[0].send_signal(signal.SIGKILL)
            procs[0].wait(10)
            for p in (b, d):
                await p.drop()

            # The people on process 1 reconnect to process 2 and find their game, all of it; those
            # on process 2 all along are sent the rebuilt game as it is taken over.
            shown = {p: await _reconnect(p, two) for p in (b, d)}
            shown |= {p: await p.until("game", timeout=15) for p in (a, c)}
            texts = {p: [m["text"] for m in snap["messages"]] for p, snap in shown.items()}
            assert all(shown[p]["game"] == resumable for p in (a, b))
            assert all(shown[p]["game"] == lost for p in (c, d))
            assert texts[judge] == before[judge] and len(texts[judge]) == 4  # read all 4 before
            for p in people:  # others may not have read the last frames sent before the kill
                assert texts[p][: len(before[p])] == before[p]
            chat_said = texts[chat_judge]  # the interrogator sees every message of a chat game

            # The non-resumable game ended flagged, and its people were told why.
            for p in (c, d):
                assert (await _reveal(p))["flagged"] == LOST_TEXT

            # The resumable one goes on at process 2: same game, the clock from the stored start.
            (now_live,) = await _live(two)
            assert now_live["game"] == resumable and now_live["owner"].startswith(f"{ports[1]}/")
            assert now_live["started_at"] == by_game[resumable]["started_at"]
            typed += await _exchange(judge, witness, 1)
            await judge.send(type="end")  # a verdict only after the end
            await judge.send(
                type="verdict", choice="A", confidence=60, reason="typed like a person"
            )
            for p in (judge, witness):
                assert (await p.until("reveal"))["flagged"] is None
            assert await _live(two) == []
        finally:
            for p in people:
                await p.close()

    kept = ArenaStore(Store(postgres_url), takeover_setup())
    try:
        games = {g["game"]: g for g in kept.records()}
        assert set(games) == {resumable, lost}  # each stored once, under its first row
        done = games[resumable]
        assert done["status"] == "finished" and len(done["judgements"]) == 1
        humans = {s for s, v in done["seats"].items() if v["kind"] == "human"}
        assert [m["text"] for m in done["messages"] if m["sender"] in humans] == typed
        assert [m["seq"] for m in done["messages"]] == list(range(len(done["messages"])))
        eliza = [m for m in done["messages"] if m["sender"] not in humans | {"game"}]
        assert len(eliza) == 2  # the AI witness answered before and after the takeover
        flagged = games[lost]
        assert flagged["stored_status"] == "flagged" and flagged["flags"] == [SERVER_LOST]
        assert [m["text"] for m in flagged["messages"]] == chat_said
        assert chat_said[0] == "are you a bot?"
        assert flagged["judgements"] == []
    finally:
        kept.close()
        kept.store.close()


async def test_a_process_presumed_dead_gives_up_the_games_taken_from_it(tmp_path: Path) -> None:
    """A process silent past its TTL (a long pause) whose game another process claimed stops
    playing it and writes nothing more for it: the game is never played twice."""
    ns = f"test-{uuid.uuid4().hex[:8]}"
    setup = make_setup(ai_after_s=600, takeover_after_s=1.0)
    kept = ArenaStore(Store(str(tmp_path / "arena.db")), setup)
    create = {
        "store": kept,
        "redis_url": "redis://127.0.0.1:6379/0",
        "secret": "s",
        "namespace": ns,
    }
    client = redis.Redis.from_url("redis://127.0.0.1:6379/0")
    try:
        with running_arena(setup, **create) as (base, app):
            judge, witness, game, _ = await pair(base, "three-party")
            try:
                await judge.send(type="message", channel="A", text="said before")
                await judge.until("message", sender="you")
                await kept.flush()
                arena = app.state.arena
                (gid,) = arena.stored_ids()
                live = arena.games[game["game"]]
                pid = next(v.participant.id for v in live.views.values() if v.role != "witness")
                with kept.store.writing() as conn:  # another process claims it meanwhile
                    conn.execute(games.update().where(games.c.id == gid).values(worker="x/1"))
                client.delete(f"turinglab:arena:{ns}:alive:{kept.worker}")  # we were silent
                for _ in range(600):  # up to 30 s: a state, however busy the machine
                    if game["game"] not in arena.games:
                        break
                    await asyncio.sleep(0.05)
                assert game["game"] not in arena.games
                # Its new owner's frames reach the people connected here: not dropped as stale
                # (this process still named itself their owner, and every frame but a snapshot
                # from another was dropped: a page here saw its game no more).
                frame = {"type": "error", "code": "x", "message": "from its new owner"}
                payload = relayed_payload(own_prefix("x/1"), pid, time.time(), json.dumps(frame))
                client.publish(f"turinglab:arena:{ns}:to:{pid}", payload)
                assert (await judge.until("error"))["message"] == "from its new owner"
                await judge.send(type="message", channel="B", text="said after")
                assert (await judge.until("error"))["code"] == "no-game"
            finally:
                await judge.close()
                await witness.close()
        (record,) = kept.records()
        said = [m["text"] for m in record["messages"]]
        assert said[0] == "said before" and "said after" not in said
        assert record["status"] is None  # still playing, under its new owner
    finally:
        kept.close()
        client.close()
        drop_namespace(ns)
