"""Shared pieces of the arena's tests: a small real game, a real server, real clients.

`ChatGame` is a minimal interrogator-and-witnesses game that follows the engine's `Game`
protocol (the arena's tests need one before games/two_party.py and three_party.py land): the
interrogator writes on one channel per witness, people's messages come from their inboxes, AI
witnesses answer through `table.ask` after showing a typing indicator, and the game ends with
the interrogator's verdict. Seat and channel names here are unlike the aliases
clients see, so the leak tests can search frames for them.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
from collections.abc import Iterator, Mapping
from typing import Any

import aiohttp
import uvicorn
from yarl import URL

from turinglab.agents.base import Agent
from turinglab.agents.eliza import ElizaAgent
from turinglab.agents.human import MESSAGE, HumanAgent, HumanInput
from turinglab.agents.scripted import ScriptedAgent
from turinglab.arena import ArenaMode, ArenaSettings, ArenaSetup, create_app
from turinglab.arena.modes.engine_modes import interrogation_mode
from turinglab.bench.arena_services import listening_socket
from turinglab.games.events import TalkEnded, Typing
from turinglab.games.spec import FINISHED, GameResult, Judgement, TrialSpec
from turinglab.games.table import Seat, Table
from turinglab.games.three_party import ThreePartyExperiment
from turinglab.games.two_party import TwoPartyExperiment

SECRET_AGENT = "zorblax-witness-7"  # an agent name that must never reach a client early
ADMIN_PASSWORD = "correct horse battery staple"


class ChatGame:
    def __init__(self, name: str, channel_of: Mapping[str, str], typing_s: float = 0.05) -> None:
        self.name = name
        self.channel_of = dict(channel_of)
        self.seat_of = {c: s for s, c in channel_of.items()}
        self.typing_s = typing_s

    def plan(self) -> list[TrialSpec]:
        return []

    def identity(self) -> dict[str, Any]:
        return {"game": self.name}

    def seats(self, spec: TrialSpec, agents: Mapping[str, Agent]) -> dict[str, Seat]:
        out = {}
        for seat, name in spec.seats.items():
            agent = agents[name]
            kind = "human" if isinstance(agent, HumanAgent) else "agent"
            out[seat] = Seat(seat, name, agent, kind)
        return out

    async def play(self, table: Table, spec: TrialSpec) -> GameResult:
        humans = {s: st.agent for s, st in table.seats.items() if isinstance(st.agent, HumanAgent)}
        inbox: asyncio.Queue[tuple[str, HumanInput | BaseException]] = asyncio.Queue()

        async def pump(seat: str, agent: HumanAgent) -> None:
            while True:
                inbox.put_nowait((seat, await agent.next_input()))

        tasks = {asyncio.create_task(pump(s, a)) for s, a in humans.items()}
        deadline = table.clock.now() + float(spec.params.get("duration_s", 300))
        playing = True
        try:
            while True:
                timeout = max(0.0, deadline - table.clock.now()) if playing else None
                try:
                    seat, item = await asyncio.wait_for(inbox.get(), timeout)
                except TimeoutError:
                    playing = self._stop(table)
                    continue
                if isinstance(item, BaseException):
                    raise item
                if item.kind == MESSAGE and playing:
                    self._message(table, seat, item, tasks, inbox)
                elif item.kind == "end" and seat == "interrogator":
                    playing = self._stop(table)
                elif item.kind == "verdict" and seat == "interrogator":
                    return self._result(table, item)
        finally:
            for task in tasks:
                task.cancel()

    def _stop(self, table: Table) -> bool:
        table.announce(TalkEnded("interrogator-ended"))
        return False

    def _message(self, table: Table, seat: str, item: HumanInput, tasks: set, inbox: Any) -> None:
        if seat == "interrogator":
            channel = str(item.channel)
            witness = self.seat_of[channel]
            table.post(seat, item.text, visible_to=(seat, witness), channel=channel)
            if not isinstance(table.seats[witness].agent, HumanAgent):
                tasks.add(asyncio.create_task(self._ai_reply(table, witness, channel, inbox)))
        else:
            channel = self.channel_of[seat]
            table.post(seat, item.text, visible_to=(seat, "interrogator"), channel=channel)

    async def _ai_reply(self, table: Table, witness: str, channel: str, inbox: Any) -> None:
        table.show(Typing(channel), "interrogator")
        try:
            await table.clock.sleep(self.typing_s)
            reply = await table.ask(witness, table.view(witness, channel))
        except Exception as err:
            inbox.put_nowait((witness, err))
            return
        seen_by = (witness, "interrogator")
        table.post(witness, reply.text, visible_to=seen_by, channel=channel, reply=reply)

    def _result(self, table: Table, item: HumanInput) -> GameResult:
        verdict = str(item.data["verdict"])
        if verdict in ("human", "ai"):  # two-party
            (witness,) = self.channel_of
            correct = (verdict == "human") == (table.seats[witness].kind == "human")
        else:
            correct = table.seats[verdict].kind == "human"
        judgement = Judgement(
            judge="interrogator",
            kind="verdict",
            verdict=verdict,
            confidence=float(item.data["confidence"]),
            reason=str(item.data.get("reason", "")),
            created_at=table.clock.now(),
        )
        return GameResult(FINISHED, correct=correct, judgements=[judgement])


def make_setup(**settings: Any) -> ArenaSetup:
    two = ChatGame("two-party-test", {"seat_only": "ch-only"})
    three = ChatGame("three-party-test", {"seat_left": "ch-left", "seat_right": "ch-right"})
    agents: dict[str, Agent] = {
        SECRET_AGENT: ScriptedAgent(SECRET_AGENT, ["hi there", "i'm from leeds", "lol no"]),
        "eliza": ElizaAgent("eliza"),
    }
    modes = [
        ArenaMode("three-party", "Three-party", three, "interrogator",
                  {"seat_left": "ch-left", "seat_right": "ch-right"}, (SECRET_AGENT,)),
        ArenaMode("two-party", "Two-party", two, "interrogator", {"seat_only": "ch-only"},
                  ("eliza",), verdict="human-or-ai"),
        ArenaMode("practice", "Practice vs ELIZA", two, "interrogator", {"seat_only": "ch-only"},
                  ("eliza",), verdict="human-or-ai", solo=True),
    ]  # fmt: skip
    return ArenaSetup(
        modes, agents, {SECRET_AGENT: "Zorblax (scripted)"}, ArenaSettings(**settings)
    )


def serve_on_fd(app: Any, fd: int) -> None:
    """In a server subprocess: serve `app` on the listening socket the test passed down."""
    sock = socket.socket(fileno=fd)
    uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on")).run(sockets=[sock])


@contextlib.contextmanager
def serving_in_thread(app: Any, **options: Any) -> Iterator[str]:
    """A real uvicorn server for `app` in a thread, started; yields its base URL. `options`:
    more of uvicorn's settings (proxy_headers=True, …)."""
    sock = listening_socket()
    port = int(sock.getsockname()[1])
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on", **options))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    for _ in range(3000):  # up to a minute on a busy machine; a failed start ends the thread
        if server.started or not thread.is_alive():
            break
        threading.Event().wait(0.02)
    try:
        assert server.started, "the arena server did not start"
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


@contextlib.contextmanager
def running_arena(setup: ArenaSetup | None = None, **create: Any) -> Iterator[tuple[str, Any]]:
    """A real uvicorn server on a free port in a thread; yields (base URL, app)."""
    app = create_app(setup or make_setup(), admin_password=ADMIN_PASSWORD, **create)
    with serving_in_thread(app) as base:
        yield base, app


class Person:
    """A participant over a real websocket (aiohttp client with its own cookie jar)."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.http = aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True))
        self.ws: aiohttp.ClientWebSocketResponse | None = None
        self.frames: list[dict[str, Any]] = []

    async def connect(self) -> dict[str, Any]:
        if not self.http.cookie_jar.filter_cookies(URL(self.base)):
            # A session starts only with consent (the page's POST /consent).
            async with self.http.post(self.base + "/consent", json={"consent": True}) as r:
                r.raise_for_status()
        self.ws = await self.http.ws_connect(self.base.replace("http", "ws") + "/ws")
        return await self.recv()

    async def send(self, **frame: Any) -> None:
        assert self.ws is not None
        await self.ws.send_json(frame)

    async def recv(self, timeout: float = 30.0) -> dict[str, Any]:  # ms, unless very busy
        assert self.ws is not None
        # A deadline of our own: aiohttp's `timeout` starts again at each websocket ping the
        # server sends (every 20 s), so a frame that never came hung the test for ever.
        async with asyncio.timeout(timeout):
            frame = await self.ws.receive_json()
        self.frames.append(frame)
        return frame

    async def until(self, type_: str, timeout: float = 30.0, **match: Any) -> dict[str, Any]:
        while True:
            frame = await self.recv(timeout)
            if frame["type"] == type_ and all(frame.get(k) == v for k, v in match.items()):
                return frame

    async def until_any(self, types: tuple[str, ...], timeout: float = 30.0) -> dict[str, Any]:
        while True:
            frame = await self.recv(timeout)
            if frame["type"] in types:
                return frame

    async def frames_within(self, seconds: float) -> list[dict[str, Any]]:
        """Every frame sent to this person in the next `seconds` (`frames` holds only what
        was received: a frame nobody reads is never there)."""
        got: list[dict[str, Any]] = []
        deadline = asyncio.get_running_loop().time() + seconds
        with contextlib.suppress(TimeoutError):
            while (left := deadline - asyncio.get_running_loop().time()) > 0:
                got.append(await self.recv(timeout=left))
        return got

    async def drop(self) -> None:
        if self.ws is not None:
            await self.ws.close()
            self.ws = None

    async def close(self) -> None:
        await self.drop()
        await self.http.close()


async def pair(base: str, mode: str) -> tuple[Person, Person, dict[str, Any], dict[str, Any]]:
    """Two people join a mode; returns (interrogator, witness) and their game snapshots."""
    a, b = Person(base), Person(base)
    for p in (a, b):
        assert (await p.connect())["type"] == "status"
    await a.send(type="join", mode=mode, consent=True)
    assert (await a.until("status"))["state"] == "waiting"
    await b.send(type="join", mode=mode, consent=True)
    ga, gb = await a.until("game"), await b.until("game")
    assert ga["game"] == gb["game"]
    if ga["role"] == "interrogator":
        return a, b, ga, gb
    return b, a, gb, ga


RULES = {"typing_delay": False, "time_limit_s": 120, "seed": 5}


def engine_setup() -> ArenaSetup:
    """The engine's own three-party game with ELIZA, and a solo two-party practice mode."""
    witnesses = [{"agent": "eliza", "persona": "none"}]
    three = ThreePartyExperiment.model_validate(
        {"game": "three-party", "interrogators": ["x"], "human_witnesses": ["y"],
         "ai_witnesses": witnesses, **RULES}
    )  # fmt: skip
    two = TwoPartyExperiment.model_validate(
        {"game": "two-party", "interrogators": ["x"], "ai_witnesses": witnesses, **RULES}
    )
    modes = [
        interrogation_mode("three-party", "Three-party", three),
        interrogation_mode("practice", "Practice (two-party)", two, solo=True),
    ]
    return ArenaSetup(modes, {"eliza": ElizaAgent("eliza")}, {"eliza": "ELIZA"}, ArenaSettings())
