"""A GTT game whose server process dies (SIGKILL) or hangs (SIGSTOP) finishes on the other one.

Two real server processes share one PostgreSQL database and Redis. A person connected to
process 1 plays a GTT mode there partway, per mode's driver (`DRIVERS`): as the judge (GDGTT:
study the target, write once to X), as the actor (GTTQ: study the judge's model, answer its
first question), or watching two models (their second replies wait for a gate file the test
creates after the takeover, so the AI-only game stands still partway). Process 1 is killed,
or paused past the takeover delay; process 2 claims the game and rebuilds it from its
committed messages (arena/core/takeover.py, the GTT kind's `resume`).
The person, back at process 2, sees every line so far with their turn where it was; the game
keeps its stored start (its time left is what it was); it ends, not flagged. A paused owner,
woken afterwards, writes nothing more: the message the person sent it while it hung is not
stored. The store, read in plain SQL: one game row, claimed once by process 2, its messages
numbered without a hole, the person's lines each once, the verdicts once; and the engine,
played again over the stored transcript, says exactly it and ends on the same verdict.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from sqlalchemy import create_engine, text

from arena_fixtures import Person
from test_arena_gtt import gtt_setup, lines, until_state
from test_arena_multiprocess import arena_processes
from test_arena_takeover import SERVER as TAKEOVER_SERVER
from test_arena_takeover import TAKEOVER_AFTER_S, _live
from turinglab.agents.base import Agent, AgentReply, CallContext, ChatMessage
from turinglab.agents.human import HumanAgent
from turinglab.agents.scripted import ScriptedAgent
from turinglab.arena import ArenaSetup
from turinglab.games.kinds import RESUMABLE
from turinglab.games.spec import GameResult, TrialSpec
from turinglab.games.table import Table, TranscriptMessage
from turinglab.store.database import store_url

pytestmark = [pytest.mark.database, pytest.mark.slow]

SERVER = TAKEOVER_SERVER.replace(
    "from test_arena_takeover import takeover_setup",
    "from test_arena_takeover_gtt import gtt_takeover_setup as takeover_setup",
)
TO_THE_PAUSED = "sent to a process that hangs"


GATE = "TURINGLAB_TEST_GTT_GATE"  # a file the models' second and later replies wait for


class Gated(ScriptedAgent):
    """A scripted model whose second and later replies wait until the file named by $GATE
    exists: an AI-only game stands still partway, where the test takes it over."""

    async def reply(self, history: list[ChatMessage], ctx: CallContext) -> AgentReply:
        gate = os.environ.get(GATE)
        if gate and any(m.role == "assistant" for m in history):
            while not os.path.exists(gate):
                await asyncio.sleep(0.02)
        return await super().reply(history, ctx)


def gtt_takeover_setup() -> ArenaSetup:
    """The GTT modes of test_arena_gtt.py's two scripted models, taken over quickly."""
    setup = gtt_setup()
    settings = setup.settings.model_copy(update={"takeover_after_s": TAKEOVER_AFTER_S})
    agents: dict[str, Agent] = {}
    for name, agent in setup.agents.items():
        assert isinstance(agent, ScriptedAgent)
        agents[name] = Gated(name, list(agent.replies))
    return replace(setup, agents=agents, settings=settings)


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
    held: bool = False  # the models wait for the gate until `finish` (no person holds it)
    # The partway message, as the page sends it again after the takeover (no ack came).
    resend: dict[str, Any] | None = None
    inputs: tuple[str, ...] = ()  # the input ids applied, in order (each once)


async def _studied(person: Person, mode: str, chat: str) -> None:
    """Join `mode`, study once ("hi"), and end the study: the test chat is next."""
    assert (await person.connect())["type"] == "status"
    await person.send(type="join", mode=mode, consent=True)
    await until_state(person, lambda s: s["phase"] == "writing" and s["chat"] == "study")
    await person.send(type="message", id="m1", channel="study", text="hi")
    await until_state(person, lambda s: len(lines(s, "study")) == 2)
    await person.send(type="end", id="e1")
    await until_state(person, lambda s: s["chat"] == "test" and s["phase"] == "writing")
    # Re-sent, with the same id, after the takeover.
    await person.send(**_resent(chat))


def _resent(text: str) -> dict[str, Any]:
    return {"type": "message", "id": "m2", "channel": "test", "text": text}


async def _judge_partway(person: Person) -> dict[str, Any]:
    """GDGTT: after the study and one message to X, the person may decide."""
    await _studied(person, "gtt-distinguish", "What is 6 times 7?")
    return await until_state(person, lambda s: s["can_decide"] and s["turns_left"] == 3)


async def _judge_finish(person: Person) -> dict[str, Any]:
    await person.send(type="verdict", id="v1", choice="imitator", confidence=70)
    end = await until_state(person, lambda s: s["reveal"] is not None, timeout=20)
    assert end["reveal"]["verdict"] == 0 and end["reveal"]["judge"] == "you"
    return end


async def _actor_partway(person: Person) -> dict[str, Any]:
    """GTTQ: after the study and one answer, the judge has asked its second question."""
    await _studied(person, "gtt-act", "Forty-two, obviously.")
    return await until_state(
        person, lambda s: s["phase"] == "writing" and len(lines(s, "test")) == 3
    )


async def _actor_finish(person: Person) -> dict[str, Any]:
    await person.send(type="message", id="m3", channel="test", text="Teal, like always.")
    end = await until_state(person, lambda s: s["reveal"] is not None, timeout=20)
    assert end["reveal"]["verdict"] in (0, 1) and end["reveal"]["imitator"] is True
    return end


async def _watch_partway(person: Person) -> dict[str, Any]:
    """gtt-watch: the judge's first message and X's answer; the judge's next waits."""
    assert (await person.connect())["type"] == "status"
    await person.send(type="join", mode="gtt-watch", consent=True)
    return await until_state(person, lambda s: len(lines(s, "test")) == 2)


async def _watch_finish(person: Person) -> dict[str, Any]:
    end = await until_state(person, lambda s: s["reveal"] is not None, timeout=20)
    assert end["reveal"]["verdict"] in (0, 1) and len(lines(end, "test")) > 2
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
    Driver("gtt-watch", "spectator", _watch_partway, _watch_finish, [], [], held=True),
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


@pytest.mark.parametrize("how", ["SIGKILL", "SIGSTOP"])
@pytest.mark.parametrize("driver", DRIVERS, ids=lambda d: d.mode)
async def test_a_gtt_game_finishes_on_the_other_process(
    postgres_url: str, driver: Driver, how: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gate = tmp_path / "go"
    monkeypatch.setenv(GATE, str(gate))  # the servers' models read it (they inherit it)
    if not driver.held:
        gate.touch()
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

            if how == "SIGKILL":
                owner.send_signal(signal.SIGKILL)
                owner.wait(10)
                await person.drop()
            else:
                owner.send_signal(signal.SIGSTOP)
                # Queued in the hung process's socket: it must never reach the game or the store.
                await person.send(type="message", id="late", channel="test", text=TO_THE_PAUSED)
                await _until_live(two, lambda g: g["owner"].startswith(mine))  # claimed
                person.ws = None  # the hung socket is given up, as the page gives it up
            person.base = two
            first = await person.connect()
            back = first if first["type"] == "gtt" else await person.until("gtt", timeout=20)

            # The same game, everything the person saw, and their turn where it was.
            assert back["game"] == game and back["chats"] == before["chats"]
            keys = ("phase", "chat", "can_decide", "can_stop", "turns_left", "role", "target")
            assert {k: back[k] for k in keys} == {k: before[k] for k in keys}
            if driver.resend is not None:  # its ack lost with the owner: the page sends it again
                await person.send(**driver.resend)
                await person.until("ack", ref=driver.resend["id"])  # applied before: not again
            now = await _until_live(two, lambda g: g["owner"].startswith(mine))
            assert now["game"] == game and now["started_at"] == was["started_at"]

            gate.touch()  # an AI-only game goes on now, at its new owner
            end = await driver.finish(person)
            assert end["reveal"]["flagged"] is None
            if how == "SIGSTOP":
                owner.send_signal(signal.SIGCONT)  # it wakes up, with the input queued for it
                await _answers(one)  # once it answers again, it has read that socket too
        finally:
            if how == "SIGSTOP" and owner.poll() is None:
                owner.send_signal(signal.SIGCONT)
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
    result = await _replayed(kept["spec"], said)
    assert result.verdict == end["reveal"]["verdict"]


async def _replayed(spec: TrialSpec, said: list[Any]) -> GameResult:
    setup = gtt_takeover_setup()
    people = {a: HumanAgent(a, a) for a in spec.seats.values() if a.startswith("person:")}
    mode = setup.modes[0]
    table = Table(seats=mode.game.seats(spec, {**setup.agents, **people}), caller=_no_call, seed=0)
    table.replay(
        [
            TranscriptMessage(
                seq=m.seq,
                sender=m.sender,
                text=m.text,
                visible_to=tuple(m.visible_to.split(",")),
                phase=m.phase,
                created_at=0.0,
                channel=m.channel,
            )
            for m in said
        ]
    )
    resumable = RESUMABLE.of(mode.game)
    assert resumable is not None
    result = await resumable.resume(table, spec, started_at=0.0)
    assert not table.catching_up
    return result


async def _no_call(agent: Agent, history: list[ChatMessage], ctx: CallContext) -> AgentReply:
    raise AssertionError("every message is stored: no agent is asked")


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
