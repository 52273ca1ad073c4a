"""A GTT game whose server process dies (SIGKILL) or hangs (SIGSTOP) finishes on the other one.

Two real server processes share one PostgreSQL database and Redis. A person connected to
process 1 judges a GDGTT game there: they study the target, then write once to X. Process 1
is killed, or paused past the takeover delay; process 2 claims the game and rebuilds it from
its committed messages (arena/takeover.py, the GTT kind's `resume`). The person, back at
process 2, sees every line so far with their turn where it was; the game keeps its stored
start (its time left is what it was); their verdict ends it, not flagged. A paused owner,
woken afterwards, writes nothing more: the message the person sent it while it hung is not
stored. The store, read in plain SQL: one game row, owned by process 2, its messages numbered
without a hole or a double, the person's lines each once, and one verdict.
"""

from __future__ import annotations

import asyncio
import signal
from dataclasses import replace
from typing import Any

import aiohttp
import pytest
from sqlalchemy import create_engine, text

from arena_fixtures import Person
from test_arena_gtt import gtt_setup, lines, until_state
from test_arena_multiprocess import arena_processes
from test_arena_takeover import SERVER as TAKEOVER_SERVER
from test_arena_takeover import TAKEOVER_AFTER_S, _live
from turinglab.arena import ArenaSetup
from turinglab.store.database import store_url

pytestmark = [pytest.mark.database, pytest.mark.slow]

SERVER = TAKEOVER_SERVER.replace(
    "from test_arena_takeover import takeover_setup",
    "from test_arena_takeover_gtt import gtt_takeover_setup as takeover_setup",
)
STUDY, ASKED = "Who are you?", "What is 6 times 7?"
TO_THE_PAUSED = "sent to a process that hangs"


def gtt_takeover_setup() -> ArenaSetup:
    """The GTT modes of test_arena_gtt.py's two scripted models, taken over quickly."""
    setup = gtt_setup()
    settings = setup.settings.model_copy(update={"takeover_after_s": TAKEOVER_AFTER_S})
    return replace(setup, settings=settings)


async def _partway(person: Person) -> dict[str, Any]:
    """Join GDGTT, study the target once, and write once to X: the person may decide now."""
    assert (await person.connect())["type"] == "status"
    await person.send(type="join", mode="gtt-distinguish", consent=True)
    await until_state(person, lambda s: s["phase"] == "writing" and s["chat"] == "study")
    await person.send(type="message", id="m1", channel="study", text=STUDY)
    await until_state(person, lambda s: len(lines(s, "study")) == 2)
    await person.send(type="end", id="e1")
    await until_state(person, lambda s: s["chat"] == "test" and s["phase"] == "writing")
    await person.send(type="message", id="m2", channel="test", text=ASKED)
    return await until_state(person, lambda s: s["can_decide"] and s["turns_left"] == 3)


async def _until_live(base: str, test: Any, timeout: float = 60.0) -> dict[str, Any]:
    """The one live game `base` lists, once `test` holds of it."""
    async with asyncio.timeout(timeout):
        while True:
            try:
                found = await _live(base)
            except (aiohttp.ClientError, AssertionError):
                found = []
            if len(found) == 1 and test(found[0]):
                return found[0]
            await asyncio.sleep(0.05)


def _stored(url: str) -> dict[str, Any]:
    """The arena's one game as stored, read in plain SQL (not through the code under test)."""
    engine = create_engine(store_url(url))
    try:
        with engine.connect() as conn:
            rows = conn.execute(
                text("SELECT id, status, worker, owner_epoch, setup FROM games ORDER BY id")
            ).all()
            # Other rows are not games (a survey's, say): an arena game names its arena id.
            ((gid, status, worker, epoch, setup),) = [r for r in rows if r.setup.get("arena_game")]
            said = conn.execute(
                text(
                    "SELECT seq, sender, phase, text FROM messages WHERE game_id = :g ORDER BY seq"
                ),
                {"g": gid},
            ).all()
            verdicts = conn.execute(
                text("SELECT kind, verdict, confidence FROM judgements WHERE game_id = :g"),
                {"g": gid},
            ).all()
    finally:
        engine.dispose()
    return {
        "game": setup["arena_game"],
        "status": status,
        "worker": worker,
        "epoch": epoch,
        "said": said,
        "verdicts": verdicts,
    }


@pytest.mark.parametrize("how", ["SIGKILL", "SIGSTOP"])
async def test_a_gtt_game_finishes_on_the_other_process(postgres_url: str, how: str) -> None:
    async with arena_processes(SERVER, postgres_url) as arena:
        one, two = arena.bases
        owner = arena.procs[0]
        person = Person(one)
        try:
            before = await _partway(person)
            game = before["game"]
            # Every message so far committed (the owner's list counts stored ones): 3 game
            # instructions, the study's 3 lines, the person's question and X's reply.
            was = await _until_live(one, lambda g: g["messages"] >= 8)
            assert was["game"] == game and was["owner"].startswith(f"{arena.ports[0]}/")

            if how == "SIGKILL":
                owner.send_signal(signal.SIGKILL)
                owner.wait(10)
                await person.drop()
            else:
                owner.send_signal(signal.SIGSTOP)
                # Queued in the hung process's socket: it must never reach the game or the store.
                await person.send(type="message", id="m3", channel="test", text=TO_THE_PAUSED)
                mine = f"{arena.ports[1]}/"
                await _until_live(two, lambda g: g["owner"].startswith(mine))  # claimed
                person.ws = None  # the hung socket is given up, as the page gives it up
            person.base = two
            first = await person.connect()
            back = first if first["type"] == "gtt" else await person.until("gtt", timeout=20)

            # The same game, everything the person saw, and their turn where it was.
            assert back["game"] == game
            assert back["chats"] == before["chats"]
            keys = ("phase", "chat", "can_decide", "turns_left", "role", "target")
            assert {k: back[k] for k in keys} == {k: before[k] for k in keys}
            now = await _until_live(two, lambda g: g["owner"].startswith(f"{arena.ports[1]}/"))
            assert now["game"] == game and now["started_at"] == was["started_at"]

            await person.send(type="verdict", id="v1", choice="imitator", confidence=70)
            end = await until_state(person, lambda s: s["reveal"] is not None, timeout=20)
            assert end["reveal"]["flagged"] is None and end["reveal"]["verdict"] == 0
            if how == "SIGSTOP":
                owner.send_signal(signal.SIGCONT)  # it wakes up, with the input queued for it
                # Once it answers again it has read its socket: anything it wrote is in now.
                await _answers(one)
        finally:
            if how == "SIGSTOP" and owner.poll() is None:
                owner.send_signal(signal.SIGCONT)
            await person.close()

    kept = _stored(postgres_url)
    assert kept["game"] == game
    assert kept["status"] == "finished" and kept["worker"].startswith(f"{arena.ports[1]}/")
    assert kept["epoch"] == 1  # claimed once
    assert [m.seq for m in kept["said"]] == list(range(len(kept["said"])))
    by_person = [(m.phase, m.text) for m in kept["said"] if m.sender == "distinguisher"]
    assert by_person == [
        ("query", STUDY),
        ("query", "STOP"),
        ("main", ASKED),
        ("main", "<answer>0</answer>"),
    ]
    x_said = [m for m in kept["said"] if m.sender == "unknown"]
    assert len(x_said) == 1  # X answered once, before the takeover, and was not asked again
    assert kept["verdicts"] == [("gtt-verdict", "imitator", 70.0)]


async def _answers(base: str) -> None:
    """Wait until `base` answers HTTP again (a woken process has run its event loop)."""
    async with asyncio.timeout(60), aiohttp.ClientSession() as http:
        while True:
            try:
                async with http.get(base + "/healthz") as r:
                    if r.status == 200:
                        return
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.1)
