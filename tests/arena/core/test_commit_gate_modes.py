"""Commit before show in the state-frame modes: the Strong Turing Test, the GTT and the live
integrative test, over real websockets, on PostgreSQL behind a TCP proxy that stalls.

With every connection to the store stalled, a message a person sends is shown to nobody (the
sender included: no state frame carries it), no AI is asked to answer it, and the person is
told saving is delayed; the moment the store answers, it is stored, shown, and answered. The
end of a session is shown only once it is saved. Each step waits for a frame or a row, never
for time to pass.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from arena_fixtures import Person, running_arena
from fault_fixtures import audit
from turinglab.agents.base import AgentReply, CallContext, ChatMessage
from turinglab.agents.scripted import ScriptedAgent
from turinglab.arena import ArenaSettings, ArenaSetup
from turinglab.arena.core.store_bridge import ArenaStore
from turinglab.arena.modes.gtt_mode import gtt_modes
from turinglab.arena.modes.live_itt_mode import live_itt_mode
from turinglab.arena.modes.strong_mode import strong_mode
from turinglab.config import GTTExperiment
from turinglab.games.kinds import GameContext
from turinglab.games.live_itt import LiveITTExperiment
from turinglab.games.strong import StrongExperiment
from turinglab.store.database import Store
from turinglab.testing.tcp_proxy import TcpProxy

pytestmark = [pytest.mark.database]

HELD = "held until saved?"


class Asked(ScriptedAgent):
    """A scripted agent that keeps the last message of every history it was asked on."""

    def __init__(self, name: str, replies: list[str]) -> None:
        super().__init__(name, replies, cycle=True)
        self.asked: list[str] = []

    async def reply(self, history: list[ChatMessage], ctx: CallContext) -> AgentReply:
        self.asked.append(history[-1].content if history else "")
        return await super().reply(history, ctx)


@contextlib.asynccontextmanager
async def stallable_arena(
    setup: ArenaSetup, postgres_url: str
) -> AsyncIterator[tuple[str, TcpProxy]]:
    """A real server (in a thread) storing on PostgreSQL through a proxy on this loop. Whatever
    blocks on the store runs off this loop, so the proxy keeps forwarding meanwhile."""
    proxy = TcpProxy("127.0.0.1", 5432)
    await proxy.start()
    db = postgres_url.replace("127.0.0.1:5432", f"127.0.0.1:{proxy.port}")
    store = await asyncio.to_thread(lambda: ArenaStore(Store(db), setup, max_outage_s=60))
    serving = running_arena(setup, store=store)
    try:
        base, _app = await asyncio.to_thread(serving.__enter__)
        try:
            yield base, proxy
        finally:
            proxy.flow()
            await asyncio.to_thread(serving.__exit__, None, None, None)
    finally:
        proxy.flow()
        await asyncio.to_thread(store.close)
        await proxy.stop()


async def stored(postgres_url: str, game: str) -> list[str]:
    """The texts the store holds for an arena game (read directly, not through the proxy)."""
    while True:
        games = await asyncio.to_thread(audit, postgres_url)
        if game in games:
            return games[game].texts
        await asyncio.sleep(0.05)


async def held_until_delayed(person: Person, frame_type: str, shows: Callable[[Any], bool]) -> None:
    """Read frames until the saving-delayed notice; none of them may show the held message."""
    while True:
        frame = await person.until_any((frame_type, "error"), timeout=30)
        if frame["type"] == "error":
            assert frame["code"] == "saving-delayed", frame
            return
        assert not shows(frame), frame


def asked_in(state: dict[str, Any]) -> bool:
    return any(turn["question"] == HELD for turn in state["history"])


async def until(person: Person, frame_type: str, test: Callable[[Any], bool]) -> dict[str, Any]:
    while True:
        frame = await person.until(frame_type, timeout=60)
        if test(frame):
            return frame


async def test_strong_question_and_end_wait_for_their_commit(postgres_url: str) -> None:
    system = Asked("zorblax-system", ["Toast, mostly."])
    stand_in = Asked("quillon-standin", ["cereal"])
    cfg = StrongExperiment.model_validate(
        {
            "game": "strong",
            "investigators": ["nobody"],
            "systems": [system.name],
            "humans": [stand_in.name],
            "stand_ins": [stand_in.name],
            "turns": 1,
        }
    )
    mode = strong_mode("strong-practice", "Practice", cfg, solo=True)
    setup = ArenaSetup([mode], {system.name: system, stand_in.name: stand_in}, {}, ArenaSettings())
    async with stallable_arena(setup, postgres_url) as (base, proxy):
        person = Person(base)
        try:
            await person.connect()
            await person.send(type="join", mode="strong-practice", consent=True)
            first = await until(person, "strong", lambda s: s["phase"] == "asking")
            assert await stored(postgres_url, first["game"]) == []  # its row has landed

            proxy.stall()
            await person.send(type="message", channel="A", text=HELD)
            await held_until_delayed(person, "strong", asked_in)
            assert system.asked == [] and stand_in.asked == []  # nobody answers it yet
            assert await stored(postgres_url, first["game"]) == []
            proxy.flow()
            choosing = await until(person, "strong", lambda s: s["phase"] == "choosing")
            assert asked_in(choosing) and len(choosing["history"][0]["replies"]) == 2
            assert HELD in await stored(postgres_url, first["game"])
            assert any(HELD in text for text in system.asked)

            # The end is shown only once the game's last message and its end are saved.
            proxy.stall()
            await person.send(type="preference", tie=True)
            await held_until_delayed(person, "strong", lambda s: s["phase"] == "ended")
            proxy.flow()
            end = await until(person, "strong", lambda s: s["phase"] == "ended")
            assert end["flagged"] is None and end["scores"]
            games = await asyncio.to_thread(audit, postgres_url)
            assert games[first["game"]].status == "finished"
        finally:
            await person.close()


def study_lines(state: dict[str, Any]) -> list[tuple[str, str]]:
    chats = [c for c in state["chats"] if c["name"] == "study"]
    return [(line["sender"], line["text"]) for c in chats for line in c["lines"]]


async def test_gtt_study_message_waits_for_its_commit(postgres_url: str) -> None:
    zorblax = Asked("zorblax-model", ["Hello. Which number comes after 41?"])
    quillon = Asked("quillon-model", ["forty-two, obviously"])
    experiment = GTTExperiment.model_validate(
        {"game": "gtt", "universe": [zorblax.name, quillon.name], "max_specimen_turns": 2}
    )
    modes = [m for m in gtt_modes(experiment, GameContext()) if m.name == "gtt-distinguish"]
    agents = {a.name: a for a in (zorblax, quillon)}
    setup = ArenaSetup(modes, dict(agents), {}, ArenaSettings(seed=3))
    async with stallable_arena(setup, postgres_url) as (base, proxy):
        person = Person(base)
        try:
            await person.connect()
            await person.send(type="join", mode="gtt-distinguish", consent=True)
            first = await until(person, "gtt", lambda s: s["phase"] == "writing")
            assert first["chat"] == "study"
            assert HELD not in await stored(postgres_url, first["game"])  # its row has landed

            proxy.stall()
            await person.send(type="message", channel="study", text=HELD)
            await held_until_delayed(person, "gtt", lambda s: ("you", HELD) in study_lines(s))
            assert zorblax.asked == [] and quillon.asked == []
            assert HELD not in await stored(postgres_url, first["game"])
            proxy.flow()
            answered = await until(person, "gtt", lambda s: len(study_lines(s)) == 2)
            assert study_lines(answered)[0] == ("you", HELD)
            assert HELD in await stored(postgres_url, first["game"])
            assert any(HELD in text for text in zorblax.asked + quillon.asked)
        finally:
            await person.close()


async def test_live_itt_question_waits_for_its_commit(postgres_url: str) -> None:
    ai = Asked("murrow-itt", ["just pasta"])
    stand_in = Asked("otto-standin", ["cheese on toast"])
    cfg = LiveITTExperiment.model_validate(
        {
            "game": "live-itt",
            "ai_agents": [ai.name],
            "stand_ins": [stand_in.name],
            "exchange_limits": [1],
        }
    )
    mode = live_itt_mode("live-itt-practice", "Practice", cfg, solo=True)
    setup = ArenaSetup([mode], {ai.name: ai, stand_in.name: stand_in}, {}, ArenaSettings())
    async with stallable_arena(setup, postgres_url) as (base, proxy):
        person = Person(base)
        try:
            await person.connect()
            await person.send(type="join", mode="live-itt-practice", consent=True)
            first = await until(person, "strong", lambda s: s["phase"] == "asking")
            # Only the game's brief to the stand-in may be stored yet (it is written as the
            # game starts), never a question.
            assert HELD not in await stored(postgres_url, first["game"])

            proxy.stall()
            await person.send(type="message", channel="A", text=HELD)
            await held_until_delayed(person, "strong", asked_in)
            assert ai.asked == [] and stand_in.asked == []
            proxy.flow()
            verdict = await until(person, "strong", lambda s: s["phase"] == "verdict")
            assert asked_in(verdict) and len(verdict["history"][0]["replies"]) == 2
            assert HELD in await stored(postgres_url, first["game"])
        finally:
            await person.close()
