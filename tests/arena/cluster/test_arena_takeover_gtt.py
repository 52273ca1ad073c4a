"""A GTT game taken over after its owner died keeps the person's turn, and an input re-sent
after the takeover is applied once (PostgreSQL + Redis, two real server processes).

test_arena_takeover_modes.py plays every mode, the GTT's three among them, across a SIGKILL
and a SIGSTOP of its owner. This adds, for the two modes a person writes in (`DRIVERS`: the
judge of GDGTT, the actor of GTTQ), what the page does after a takeover: the state it is sent
again equals the one it had (every line, the phase, turns left, whether it may decide), and
its last message, whose ack was lost with the owner, re-sent with the same id, is acknowledged
and not applied again. The store, read in plain SQL: the person's lines each once, each input
id once in the order applied, the verdict form logged before the answer message it became;
and the engine, played again over the stored transcript, ends on the same verdict.
"""

from __future__ import annotations

import asyncio
import json
import signal
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import aiohttp
import pytest
from sqlalchemy import create_engine, text

from arena_fixtures import Person
from takeover_gtt_setup import gtt_takeover_setup
from takeover_play import WAIT_S
from takeover_replay import replayed
from test_arena_gtt import lines, until_state
from test_arena_multiprocess import arena_processes
from test_arena_takeover import SERVER as TAKEOVER_SERVER
from test_arena_takeover import _live
from turinglab.games.spec import TrialSpec
from turinglab.store.database import store_url

pytestmark = [pytest.mark.database, pytest.mark.slow]

SERVER = TAKEOVER_SERVER.replace(
    "from test_arena_takeover import takeover_setup",
    "from takeover_gtt_setup import gtt_takeover_setup as takeover_setup",
)


@dataclass(frozen=True)
class Driver:
    """How a person plays one GTT mode: partway (to the state the takeover must keep), then
    to its end; what their seat then holds in the store, and the verdicts stored."""

    mode: str
    seat: str
    partway: Callable[[Person], Awaitable[dict[str, Any]]]
    finish: Callable[[Person], Awaitable[dict[str, Any]]]
    person_said: list[tuple[str, str]]  # (phase, text), in order
    verdicts: list[tuple[str, str, float]]  # (kind, verdict, confidence)
    # The partway message, as the page sends it again after the takeover (no ack came).
    resend: dict[str, Any]
    inputs: tuple[str, ...]  # the input ids applied, in order (each once)


async def _studied(person: Person, mode: str, chat: str) -> None:
    """Join `mode`, study once ("hi"), and end the study: the test chat is next."""
    assert (await person.connect())["type"] == "status"
    await person.send(type="join", mode=mode, consent=True)
    await until_state(person, lambda s: s["phase"] == "writing" and s["chat"] == "study", WAIT_S)
    await person.send(type="message", id="m1", channel="study", text="hi")
    await until_state(person, lambda s: len(lines(s, "study")) == 2, WAIT_S)
    await person.send(type="end", id="e1")
    await until_state(person, lambda s: s["chat"] == "test" and s["phase"] == "writing", WAIT_S)
    # Re-sent, with the same id, after the takeover.
    await person.send(**_resent(chat))


def _resent(text: str) -> dict[str, Any]:
    return {"type": "message", "id": "m2", "channel": "test", "text": text}


async def _judge_partway(person: Person) -> dict[str, Any]:
    """GDGTT: after the study and one message to X, the person may decide."""
    await _studied(person, "gtt-distinguish", "What is 6 times 7?")
    return await until_state(person, lambda s: s["can_decide"] and s["turns_left"] == 3, WAIT_S)


async def _judge_finish(person: Person) -> dict[str, Any]:
    await person.send(type="verdict", id="v1", choice="imitator", confidence=70)
    end = await until_state(person, lambda s: s["reveal"] is not None, timeout=WAIT_S)
    assert end["reveal"]["verdict"] == 0 and end["reveal"]["judge"] == "you"
    return end


async def _actor_partway(person: Person) -> dict[str, Any]:
    """GTTQ: after the study and one answer, the judge has asked its second question."""
    await _studied(person, "gtt-act", "Forty-two, obviously.")
    return await until_state(
        person, lambda s: s["phase"] == "writing" and len(lines(s, "test")) == 3, WAIT_S
    )


async def _actor_finish(person: Person) -> dict[str, Any]:
    await person.send(type="message", id="m3", channel="test", text="Teal, like always.")
    end = await until_state(person, lambda s: s["reveal"] is not None, timeout=WAIT_S)
    assert end["reveal"]["verdict"] in (0, 1) and end["reveal"]["imitator"] is True
    return end


DRIVERS = [
    Driver(
        "gtt-distinguish",
        "distinguisher",
        _judge_partway,
        _judge_finish,
        [
            ("query", "hi"),
            ("query", "STOP"),
            ("main", "What is 6 times 7?"),
            ("main", "<answer>0</answer>"),
        ],
        [("gtt-verdict", "imitator", 70.0)],
        resend=_resent("What is 6 times 7?"),
        inputs=("m1", "e1", "m2", "v1"),
    ),
    Driver(
        "gtt-act",
        "unknown",
        _actor_partway,
        _actor_finish,
        [
            ("query", "hi"),
            ("query", "STOP"),
            ("main", "Forty-two, obviously."),
            ("main", "Teal, like always."),
        ],
        [],  # the model judges: its answer is the game's verdict, no person's judgement
        resend=_resent("Forty-two, obviously."),
        inputs=("m1", "e1", "m2", "m3"),
    ),
]


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
                    "SELECT seq, sender, phase, channel, visible_to, text FROM messages "
                    "WHERE game_id = :g ORDER BY seq"
                ),
                {"g": gid},
            ).all()
            controls = conn.execute(
                text(
                    "SELECT idx, after_seq, kind, data FROM control_events "
                    "WHERE game_id = :g ORDER BY idx"
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
        "spec": TrialSpec.from_json(setup["trial"]),
        "status": status,
        "worker": worker,
        "epoch": epoch,
        "said": said,
        "verdicts": verdicts,
        "controls": controls,
    }


@pytest.mark.parametrize("driver", DRIVERS, ids=lambda d: d.mode)
async def test_a_gtt_game_taken_over_keeps_the_turn_and_applies_a_resent_input_once(
    postgres_url: str, driver: Driver
) -> None:
    async with arena_processes(SERVER, postgres_url) as arena:
        one, two = arena.bases
        owner = arena.procs[0]
        mine = f"{arena.ports[1]}/"
        person = Person(one)
        try:
            before = await driver.partway(person)
            game = before["game"]
            # What the person was shown is committed (the commit gate): nothing to wait for.
            was = await _until_live(one, lambda g: g["game"] == game)
            assert was["game"] == game and was["owner"].startswith(f"{arena.ports[0]}/")

            owner.send_signal(signal.SIGKILL)
            owner.wait(10)
            await person.drop()
            person.base = two
            first = await person.connect()
            back = first if first["type"] == "gtt" else await person.until("gtt", timeout=WAIT_S)

            # The same game, everything the person saw, and their turn where it was.
            assert back["game"] == game and back["chats"] == before["chats"]
            keys = ("phase", "chat", "can_decide", "can_stop", "turns_left", "role", "target")
            assert {k: back[k] for k in keys} == {k: before[k] for k in keys}
            # Its ack lost with the owner: the page sends it again; applied before: not again.
            await person.send(**driver.resend)
            await person.until("ack", ref=driver.resend["id"], timeout=WAIT_S)
            now = await _until_live(two, lambda g: g["owner"].startswith(mine))
            assert now["game"] == game and now["started_at"] == was["started_at"]

            end = await driver.finish(person)
            assert end["reveal"]["flagged"] is None
        finally:
            await person.close()

    kept = _stored(postgres_url)
    assert kept["game"] == game and kept["status"] == "finished"
    assert kept["worker"].startswith(mine) and kept["epoch"] == 1  # claimed once
    said = kept["said"]
    assert [m.seq for m in said] == list(range(len(said)))
    assert [(m.phase, m.text) for m in said if m.sender == driver.seat] == driver.person_said
    assert kept["verdicts"] == driver.verdicts
    # The control log: what the messages do not say (the verdict form, its input id), once.
    controls = kept["controls"]
    assert [c.idx for c in controls] == list(range(len(controls)))
    data = [c.data if isinstance(c.data, dict) else json.loads(c.data) for c in controls]
    assert all(d["seat"] == driver.seat for d in data)
    # Each input applied once, the re-sent one too (StateFrameGame's InputAccepted).
    ids = [d["input_id"] for c, d in zip(controls, data, strict=True) if c.kind == "input"]
    assert ids == list(driver.inputs)
    forms = [(c, d) for c, d in zip(controls, data, strict=True) if c.kind == "verdict"]
    assert [(d["choice"], d["confidence"]) for _, d in forms] == [v[1:] for v in driver.verdicts]
    for c, _ in forms:  # the form logged before the answer message it became
        assert c.after_seq <= next(m.seq for m in said if m.text.startswith("<answer>"))
    # The stored transcript is a game by the engine's rules, start to end: played again over
    # all of it, the game says exactly it (no model's line twice, none missing) and ends.
    result = await replayed(gtt_takeover_setup(), driver.mode, kept["spec"], said)
    assert result.verdict == end["reveal"]["verdict"]
