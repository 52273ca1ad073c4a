"""Resilient frames in one process (a real server, real websockets): numbered game frames and
resume, inputs applied once however often they are re-sent, heartbeats, and `/metrics`.

A witness whose socket drops while the interrogator writes and types reconnects saying the
last frame it saw (`/ws?game=…&stream=…&seq=…`): it gets exactly the frames after it, in order,
each once, then `resumed`, and no snapshot. A resume from an unknown stream gets a snapshot.
The same message id sent twice, and sent again after the reply (as a page does after a
reconnect), is shown and played once; the repeats are acknowledged (`ack`). A rejected input's
error names it (`ref`), so a page stops showing "Sending…"; so does a message the game had
not taken yet when the talk ended (it never will). Takeover across processes is in
tests/arena/cluster/test_arena_resume_cluster.py.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

import aiohttp

from arena_fixtures import ADMIN_PASSWORD, ChatGame, Person, make_setup, pair, running_arena

AUTH = {"Authorization": aiohttp.encode_basic_auth("admin", ADMIN_PASSWORD)}


async def reconnect(person: Person, **query: Any) -> None:
    """Open a new socket for `person`, resuming from `query` (game, stream, seq) if given."""
    await person.drop()
    url = person.base.replace("http", "ws") + "/ws"
    person.ws = await person.http.ws_connect(url, params={k: str(v) for k, v in query.items()})


async def test_a_reconnecting_witness_gets_exactly_the_frames_it_missed() -> None:
    with running_arena() as (base, _app):
        judge, witness, _gj, gw = await pair(base, "two-party")
        try:
            stream, seen = gw["stream"], gw["seq"]
            assert isinstance(stream, str) and isinstance(seen, int)
            await witness.drop()  # gone while the interrogator writes and types

            await judge.send(type="message", id="m-1", after=0, channel="A", text="hello?")
            mine = await judge.until("message", ref="m-1")
            assert mine["sender"] == "you" and mine["text"] == "hello?"
            for _ in range(3):  # typing frames are part of the stream too
                await judge.send(type="typing", channel="A")
            await judge.send(type="ping")
            await judge.until("pong")  # the typing frames were handled before this

            await reconnect(witness, game=gw["game"], stream=stream, seq=seen)
            got = []
            while (frame := await witness.recv())["type"] != "resumed":
                got.append(frame)
            assert [f["type"] for f in got] == ["message", "typing", "typing", "typing"]
            assert [f["seq"] for f in got] == list(range(seen + 1, seen + 5))
            assert got[0]["text"] == "hello?" and got[0]["sender"] == "them"
            assert "ref" not in got[0]  # the interrogator's input id is theirs alone
            assert frame == {"type": "resumed", "game": gw["game"], "stream": stream,
                             "seq": seen + 4}  # fmt: skip

            # Nothing else follows (no snapshot): the next frame is the answer to a ping.
            await witness.send(type="ping")
            assert (await witness.recv())["type"] == "pong"

            # Resuming again from the end: nothing to send, only where the stream is.
            await reconnect(witness, game=gw["game"], stream=stream, seq=seen + 4)
            assert (await witness.recv())["type"] == "resumed"

            # A stream this server does not have (the game was rebuilt elsewhere, or a stale
            # tab): a snapshot with everything, then where the stream is now.
            await reconnect(witness, game=gw["game"], stream="0000dead", seq=2)
            snap = await witness.recv()
            assert snap["type"] == "game" and snap["seq"] == seen + 4
            assert [m["text"] for m in snap["messages"]] == ["hello?"]
            assert (await witness.recv())["type"] == "resumed"
        finally:
            await judge.close()
            await witness.close()


async def test_a_message_re_sent_is_shown_and_played_once() -> None:
    with running_arena() as (base, _app):
        judge, witness, _gj, _gw = await pair(base, "two-party")
        try:
            # Sent twice at once (a page that resends on reconnect): one message.
            for _ in range(2):
                await judge.send(type="message", id="k-1", after=0, channel="A", text="one")
            assert (await judge.until("message", ref="k-1"))["text"] == "one"
            assert (await witness.until("message"))["text"] == "one"

            await witness.send(type="message", id="w-1", after=1, channel="A", text="reply")
            await judge.until("message", sender="them")

            # The same id once more, after the reply: acknowledged, not said again.
            await judge.send(type="message", id="k-1", after=0, channel="A", text="one")
            assert (await judge.until("ack"))["ref"] == "k-1"

            # An id this process has never seen, for a message already said since the page
            # last saw its chat (`after`): how a resend after a takeover is recognised.
            await judge.send(type="message", id="k-lost", after=0, channel="A", text="one")
            assert (await judge.until("ack"))["ref"] == "k-lost"

            # The witness was shown "one" exactly once, and nothing after its reply.
            await witness.send(type="ping")
            await witness.until("pong")
            texts = [f["text"] for f in witness.frames if f["type"] == "message"]
            assert texts == ["one", "reply"]

            # A rejected input names itself, so the page stops waiting for it.
            await witness.send(type="message", id="w-2", after=2, channel="A", text="again")
            error = await witness.until("error")
            assert error["code"] == "wait" and error["ref"] == "w-2"

            # The game goes on with the next id.
            await judge.send(type="message", id="k-2", after=2, channel="A", text="two")
            assert (await witness.until("message"))["text"] == "two"
        finally:
            await judge.close()
            await witness.close()


class SlowToTake(ChatGame):
    """Never gets round to a witness's message: it is still on its way when the talk ends."""

    def _message(self, table: Any, seat: str, item: Any, tasks: set, inbox: Any) -> None:
        if seat == "interrogator":
            super()._message(table, seat, item, tasks, inbox)


async def test_a_message_the_talk_ended_before_is_answered() -> None:
    setup = make_setup()
    slow = SlowToTake("two-party-test", {"seat_only": "ch-only"})
    modes = [replace(m, game=slow) if m.name == "two-party" else m for m in setup.modes]
    with running_arena(replace(setup, modes=modes)) as (base, _app):
        judge, witness, _gj, _gw = await pair(base, "two-party")
        try:
            await judge.send(type="message", id="k-1", after=0, channel="A", text="hello?")
            await witness.until("message", sender="them")
            await witness.send(type="message", id="w-1", after=1, channel="A", text="hi")
            await witness.send(type="ping")
            await witness.until("pong")  # taken by the server, not said by the game
            await judge.send(type="end", id="e-1")
            assert (await witness.until("phase"))["phase"] == "verdict"
            late = await witness.until("error", timeout=5)
            assert late["ref"] == "w-1" and late["code"] == "too-late"
            assert "was not sent" in late["message"]
        finally:
            await judge.close()
            await witness.close()


async def test_metrics_need_the_admin_password_and_count_what_happened() -> None:
    with running_arena() as (base, _app):
        judge, witness, _gj, gw = await pair(base, "two-party")
        try:
            async with aiohttp.ClientSession() as http:
                async with http.get(base + "/metrics") as r:
                    assert r.status == 401
                bad = {"Authorization": aiohttp.encode_basic_auth("admin", "guess")}
                async with http.get(base + "/metrics", headers=bad) as r:
                    assert r.status == 401

                await reconnect(witness, game=gw["game"], stream=gw["stream"], seq=gw["seq"])
                await witness.until("resumed")
                async with http.get(base + "/metrics", headers=AUTH) as r:
                    assert r.status == 200
                    assert r.headers["content-type"].startswith("text/plain; version=0.0.4")
                    body = await r.text()
            values = metric_values(body)
            assert values["turinglab_arena_games_live"] == 1
            assert values["turinglab_arena_people_connected"] == 2
            assert values["turinglab_arena_frames_sent_total"] >= 4  # status, waiting, games
            assert values["turinglab_arena_socket_connects_total"] == 3
            assert values["turinglab_arena_resumes_total"] == 1
            assert values["turinglab_arena_resume_snapshots_total"] == 0
            assert "# TYPE turinglab_arena_frames_sent_total counter" in body
            # Without Redis there is no relay: no cross-process metrics are claimed.
            assert "relay_latency" not in body
        finally:
            await judge.close()
            await witness.close()


def metric_values(body: str) -> dict[str, float]:
    out = {}
    for line in body.splitlines():
        if line and not line.startswith("#"):
            name, value = line.rsplit(" ", 1)
            out[name] = float(value)
    return out


async def test_a_ping_is_answered_even_while_waiting_for_a_match() -> None:
    with running_arena() as (base, _app):
        person = Person(base)
        try:
            assert (await person.connect())["type"] == "status"
            await person.send(type="join", mode="three-party", consent=True)
            assert (await person.until("status"))["state"] == "waiting"
            await person.send(type="ping")
            assert (await asyncio.wait_for(person.until("pong"), 10))["type"] == "pong"
        finally:
            await person.close()
