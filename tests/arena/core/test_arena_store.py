"""Arena games in the generic store: written as they are played, read back by the admin export.

A game over real websockets is stored message by message; what was typed, the verdict and the
survey are what the store holds; a server process killed (SIGKILL) mid-game leaves the messages
said so far and the game visible as `playing`; a new server on the same store exports it all.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import aiohttp

from arena_fixtures import (
    ADMIN_PASSWORD,
    Person,
    make_setup,
    pair,
    running_arena,
)
from turinglab.arena.core.store_bridge import ArenaStore
from turinglab.bench.arena_services import listening_socket
from turinglab.store.database import Store

AUTH = {"Authorization": aiohttp.encode_basic_auth("admin", ADMIN_PASSWORD)}
TESTS = Path(__file__).parents[2]


async def _three_party(judge: Person, witness: Person) -> list[str]:
    """Two exchanges with each witness; returns the texts people typed, in order."""
    typed: list[str] = []
    for turn in range(2):
        for ch in ("A", "B"):
            text = f"question {turn} for {ch} ✓"
            await judge.send(type="message", channel=ch, text=text)
            typed.append(text)
        heard = await witness.until("message", sender="them")
        answer = f"answer {turn}: tired, it's {heard['text'][-1]}"
        await witness.send(type="message", channel="A", text=answer)
        typed.append(answer)
        got: set[str] = set()
        while len(got) < 2:
            got.add((await judge.until("message", sender="them"))["channel"])
    return typed


async def test_a_finished_game_is_stored_as_played(tmp_path: Path) -> None:
    setup = make_setup()
    db = str(tmp_path / "arena.db")
    kept = ArenaStore(Store(db), setup)
    with running_arena(setup, store=kept) as (base, app):
        judge, witness, gj, _gw = await pair(base, "three-party")
        typed = await _three_party(judge, witness)
        await judge.send(type="end")  # a verdict only after the end
        await judge.send(type="verdict", choice="A", confidence=70, reason="typos")
        await judge.until("reveal")
        await witness.until("reveal")
        await judge.send(type="survey", answers={"prior_awareness": "No"})
        await judge.until("status", state="survey-saved")
        live = app.state.arena.games[gj["game"]]
        await kept.flush()
        for p in (judge, witness):
            await p.close()
    kept.close()

    # A new process on the same store (a restart) sees the game exactly as played.
    again = ArenaStore(Store(db), setup)
    try:
        (game,) = again.records()
        assert game["game"] == gj["game"] and game["status"] == "finished"
        people = {s: v for s, v in game["seats"].items() if v["kind"] == "human"}
        assert len(people) == 2 and all(v["participant"].startswith("p-") for v in people.values())
        said = [m["text"] for m in game["messages"] if m["sender"] in people]
        assert said == typed
        assert game["messages"] == live.record()["messages"]
        (verdict,) = game["judgements"]
        chosen = live.views["interrogator"].partner[
            live.views["interrogator"].alias_to_channel["A"]
        ]
        assert verdict["verdict"] == chosen and verdict["confidence"] == 70
        assert game["correct"] == live.result.correct
        judge_id = people["interrogator"]["participant"]
        assert again.participants()[judge_id]["survey"] == {"prior_awareness": "No"}
        with running_arena(setup, store=again) as (base, _app):
            async with aiohttp.ClientSession(headers=AUTH) as http:
                async with http.get(base + "/admin/export.json") as r:
                    exported = await r.json()
                async with http.get(base + "/admin/export/study.jsonl") as r:
                    study = (await r.text()).splitlines()
        assert [g["game"] for g in exported["games"]] == [gj["game"]]
        assert len(study) == 2  # one row per witness of the one study game
    finally:
        again.close()


SERVER = """
import sys
sys.path.insert(0, {tests!r})
from arena_fixtures import ADMIN_PASSWORD, make_setup, serve_on_fd
from turinglab.arena import create_app
from turinglab.arena.core.store_bridge import ArenaStore
from turinglab.store.database import Store
setup = make_setup()
app = create_app(setup, admin_password=ADMIN_PASSWORD, store=ArenaStore(Store({db!r}), setup))
serve_on_fd(app, {fd})
"""


async def _wait_up(base: str, proc: subprocess.Popen[bytes]) -> None:
    async with aiohttp.ClientSession() as http:
        for _ in range(1200):  # a minute: a busy machine starts Python slowly
            assert proc.poll() is None, "the server process died"
            try:
                async with http.get(base + "/healthz") as r:
                    if r.status == 200:
                        return
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.05)
    raise AssertionError("the server did not start")


async def _stored_texts(db: str, texts: set[str]) -> None:
    """Wait until the server's group commit has written these messages (milliseconds)."""
    for _ in range(600):
        with contextlib.closing(sqlite3.connect(db)) as conn:
            if texts <= {row[0] for row in conn.execute("SELECT text FROM messages")}:
                return
        await asyncio.sleep(0.05)
    raise AssertionError(f"messages {sorted(texts)} not stored within 30 s")


async def test_a_killed_server_loses_nothing_already_said(tmp_path: Path) -> None:
    db = str(tmp_path / "arena.db")
    with listening_socket() as sock:  # the child serves on it; closed here once passed down
        code = SERVER.format(tests=str(TESTS), db=db, fd=sock.fileno())
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
        proc = subprocess.Popen([sys.executable, "-c", code], env=env, pass_fds=[sock.fileno()])
        base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    try:
        await _wait_up(base, proc)
        judge, witness, gj, _gw = await pair(base, "three-party")
        await judge.send(type="message", channel="A", text="first question")
        await judge.send(type="message", channel="B", text="second question")
        await witness.until("message", sender="them")
        await witness.send(type="message", channel="A", text="a human answer")
        await judge.until("message", sender="them", text="a human answer")
        await _stored_texts(db, {"first question", "second question", "a human answer"})
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        for p in (judge, witness):
            await p.close()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)

    after = ArenaStore(Store(db), make_setup())
    try:
        (game,) = after.records()
        assert game["game"] == gj["game"]
        assert game["status"] is None and game["stored_status"] == "playing"
        texts = [m["text"] for m in game["messages"]]
        assert "first question" in texts and "second question" in texts
        assert "a human answer" in texts
        assert len(texts) == len(set(texts))  # nothing written twice
    finally:
        after.close()


async def test_a_flagged_game_is_stored_flagged(tmp_path: Path) -> None:
    class Broken:
        name = "broken"
        endpoint = None

        async def reply(self, history: object, ctx: object) -> object:
            raise RuntimeError("server exploded")

        async def aclose(self) -> None:
            return None

    setup = make_setup()
    setup.agents = {**setup.agents, "eliza": Broken()}  # type: ignore[dict-item]
    kept = ArenaStore(Store(str(tmp_path / "arena.db")), setup)
    try:
        with running_arena(setup, store=kept) as (base, _app):
            p = Person(base)
            await p.connect()
            await p.send(type="join", mode="practice", consent=True)
            await p.until("game")
            await p.send(type="message", channel="A", text="hello")
            await p.until("reveal")
            await p.close()
            await kept.flush()
        (game,) = kept.records()
        assert game["stored_status"] == "flagged" and game["solo"]
        assert "server exploded" in game["flags"][0]
        assert [m["text"] for m in game["messages"] if m["sender"] == "interrogator"] == ["hello"]
        export = kept.export()
        assert export["games"] == [] and [g["game"] for g in export["practice_games"]] == [
            game["game"]
        ]
    finally:
        kept.close()
