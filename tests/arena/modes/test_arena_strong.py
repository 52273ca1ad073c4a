"""The Strong Turing Test in the arena over real websockets: two people (investigator and human
respondent) against a scripted AI system; images uploaded over HTTP; ties and preferences stored
as clicked; nothing about who is who reaches a client before the end."""

from __future__ import annotations

import asyncio
import io
import json
import threading
from typing import Any

import aiohttp
import pandas as pd
import pytest
from PIL import Image

from arena_fixtures import Person, running_arena
from turinglab.agents.base import Agent, AgentReply, CallContext, ChatMessage
from turinglab.agents.scripted import ScriptedAgent
from turinglab.arena import ArenaSettings, ArenaSetup
from turinglab.arena.modes.strong_mode import strong_mode, stt_rows
from turinglab.games.strong import StrongExperiment
from turinglab.human.strong import stt_scores, validate_stt

SYSTEM_AGENT = "zorblax-system-9"  # names that must never reach a client before the end
STAND_IN = "quillon-standin-4"
INVESTIGATOR_BOT = "vexil-investigator-2"
SECRETS = (SYSTEM_AGENT, STAND_IN, INVESTIGATOR_BOT, "Zorblax", "human_1", '"system"', "person:")


INVESTIGATOR_SAYS = ["What did you eat today?", "1", "Describe rain.", "tie"]


class HeldInvestigator(ScriptedAgent):
    """Decides the first turn only once `decide` is set: a test that sends twice in one turn
    must not depend on whether the next question came before its second send."""

    def __init__(self) -> None:
        super().__init__(INVESTIGATOR_BOT, INVESTIGATOR_SAYS)
        self.decide = threading.Event()

    async def reply(self, history: list[ChatMessage], ctx: CallContext) -> AgentReply:
        if sum(m.role == "assistant" for m in history) == 1:  # its next words decide turn 1
            await asyncio.to_thread(self.decide.wait, 30)
        return await super().reply(history, ctx)


def strong_setup(system: Agent | None = None, investigator: Agent | None = None) -> ArenaSetup:
    """Modes: two people; solo practice as investigator; solo as respondent to an AI."""
    agents: dict[str, Agent] = {
        SYSTEM_AGENT: system or ScriptedAgent(SYSTEM_AGENT, ["Oh, toast, mostly.", "Wet."]),
        STAND_IN: ScriptedAgent(STAND_IN, ["cereal, as always", "drippy and cold"]),
        INVESTIGATOR_BOT: investigator or ScriptedAgent(INVESTIGATOR_BOT, INVESTIGATOR_SAYS),
    }
    base = {
        "game": "strong",
        "investigators": [INVESTIGATOR_BOT],
        "systems": [SYSTEM_AGENT],
        "humans": [STAND_IN],
        "stand_ins": [STAND_IN],
        "turns": 2,
        "max_chars": 280,
        "input_timeout_s": 60,
    }
    two = StrongExperiment.model_validate(base)
    pair = StrongExperiment.model_validate({**base, "humans": [STAND_IN], "turns": 3})
    modes = [
        strong_mode("strong", "Strong Turing Test", pair),
        strong_mode("strong-practice", "STT practice: you investigate", two, solo=True),
        strong_mode(
            "strong-respond", "STT practice: you answer", two, solo=True, person_as="respondent"
        ),
    ]
    names = {SYSTEM_AGENT: "Zorblax (scripted)", STAND_IN: "Quillon (scripted)"}
    return ArenaSetup(modes, agents, names, ArenaSettings(max_wait_s=30))


def png(colour: tuple[int, int, int] = (20, 90, 200)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (16, 10), colour).save(out, format="PNG")
    return out.getvalue()


async def upload(person: Person, data: bytes, kind: str = "image/png") -> tuple[int, Any]:
    url = person.base + "/arena/image"
    async with person.http.post(url, data=data, headers={"Content-Type": kind}) as resp:
        return resp.status, await resp.json()


async def state(person: Person, **match: Any) -> dict[str, Any]:
    return await person.until("strong", timeout=15, **match)


async def test_two_people_tie_preference_image_and_no_leaks() -> None:
    with running_arena(strong_setup()) as (base, app):
        a, b = Person(base), Person(base)
        try:
            for p in (a, b):
                await p.connect()
            await a.send(type="join", mode="strong", consent=True)
            await b.send(type="join", mode="strong", consent=True)
            sa, sb = await state(a), await state(b)
            inv, resp = (a, b) if sa["role"] == "investigator" else (b, a)
            assert {sa["role"], sb["role"]} == {"investigator", "respondent"}

            # Images: refused from a respondent and when not an image; accepted otherwise.
            status, body = await upload(resp, png())
            assert status == 400 and "Only the investigator" in body["error"]
            status, body = await upload(inv, b"GIF89a not really", "image/gif")
            assert status == 400 and "not a PNG or JPEG" in body["error"]
            status, body = await upload(inv, png())
            assert status == 200
            await inv.send(
                type="message", channel="A", text="What colour is this?", image=body["id"]
            )
            seen = await state(resp, phase="answering")
            (turn,) = seen["history"]
            assert turn["question"] == "What colour is this?"
            # The image by reference: the media route gives it to the game's people only.
            (url,) = turn["images"]
            assert url.startswith(f"/arena/media/{seen['game']}/")
            async with resp.http.get(base + url) as r:
                assert r.status == 200 and r.content_type == "image/png"
                assert "immutable" in r.headers["Cache-Control"]
                assert Image.open(io.BytesIO(await r.read())).size == (16, 10)
            stranger = Person(base)
            try:
                await stranger.connect()
                async with stranger.http.get(base + url) as r:
                    assert r.status == 404
            finally:
                await stranger.close()
            await resp.send(type="message", channel="A", text="blue, a nice blue")
            choosing = await state(inv, phase="choosing")
            replies = choosing["history"][0]["replies"]
            assert sorted(r["text"] for r in replies) == ["Oh, toast, mostly.", "blue, a nice blue"]
            assert all(r["author"] is None and not r["yours"] for r in replies)
            await inv.send(type="preference", tie=True)
            after = await state(resp, phase="waiting")
            while not after["history"][0]["decided"]:
                after = await state(resp)
            assert after["history"][0]["tie"] is True
            assert [r["yours"] for r in after["history"][0]["replies"]].count(True) == 1

            # Turn 2: a preference for the person's reply.
            await state(inv, phase="asking", can_end=True)
            await inv.send(type="message", channel="A", text="Say something about rain.")
            await state(resp, phase="answering")
            await resp.send(type="message", channel="A", text="it rained on my bike again")
            choosing = await state(inv, phase="choosing")
            labels = {r["text"]: r["label"] for r in choosing["history"][1]["replies"]}
            picked = labels["it rained on my bike again"]
            await inv.send(type="preference", reply=picked)

            # The investigator ends before turn 3; everybody sees the scores.
            await state(inv, phase="asking")
            await inv.send(type="end")
            end = await state(inv, phase="ended")
            scores = {s["kind"]: s for s in end["scores"]}
            assert scores["human"]["wins"] == 1.5 and scores["human"]["win_rate"] == 0.75
            assert scores["ai"]["wins"] == 0.5 and scores["ai"]["name"] == "Zorblax (scripted)"
            r_end = await state(resp, phase="ended")
            assert next(s for s in r_end["scores"] if s["you"])["kind"] == "human"

            (record,) = app.state.arena.finished
            prefs = [j for j in record["judgements"] if j["kind"] == "preference"]
            assert [(j["turn"], j["tie"], j["choice"]) for j in prefs] == [
                (1, True, None),
                (2, False, "human_1"),
            ]
            assert prefs[1]["details"]["label"] == str(picked)
            assert record["messages"][0]["images"][0].startswith("data:image/png;base64,")

            # The sessions feed the STT analysis as they are.
            table = validate_stt(pd.DataFrame(stt_rows(app.state.arena.finished)))
            panel = next(
                sc for sc in stt_scores(table) if sc.side == SYSTEM_AGENT and sc.opponent == "panel"
            )
            assert (panel.wins, panel.ties, panel.turns, panel.win_rate) == (0, 1, 2, 0.25)

            # The leak check: before the end no frame names an agent, a seat or a side.
            for person in (inv, resp):
                cut = next(i for i, f in enumerate(person.frames) if f.get("phase") == "ended")
                early = json.dumps(person.frames[:cut])
                for secret in SECRETS:
                    assert secret not in early, secret
                assert '"author": null' in early or person is resp
        finally:
            await a.close()
            await b.close()


async def test_solo_respondent_answers_an_ai_investigator() -> None:
    investigator = HeldInvestigator()
    with running_arena(strong_setup(investigator=investigator)) as (base, app):
        me = Person(base)
        try:
            await me.connect()
            await me.send(type="join", mode="strong-respond", consent=True)
            seen = await state(me, phase="answering")
            assert seen["role"] == "respondent"
            assert seen["history"][0]["question"] == "What did you eat today?"
            await me.send(type="message", channel="A", text="porridge with honey")
            # A second send for the same turn is refused, not queued for the next turn.
            await me.send(type="message", channel="A", text="and tea")
            refused = await me.until("error")
            assert refused["code"] == "wait"
            investigator.decide.set()
            seen = await state(me, phase="answering")
            assert seen["history"][0]["decided"] and seen["history"][0]["chosen"] == 1
            await me.send(type="message", channel="A", text="grey and steady")
            end = await state(me, phase="ended")
            assert end["history"][1]["tie"] is True
            assert end["history"][0]["your_reply"] == "porridge with honey"
            (record,) = app.state.arena.finished
            assert record["solo"] and record["status"] == "finished"
        finally:
            await me.close()


async def test_upload_needs_a_session_and_a_game() -> None:
    with running_arena(strong_setup()) as (base, _):
        url = base + "/arena/image"
        async with aiohttp.ClientSession() as http, http.post(url, data=png()) as resp:
            assert resp.status == 401
        me = Person(base)
        try:
            await me.connect()
            status, body = await upload(me, png())
            assert status == 409 and "not in a session" in body["error"]
            status, body = await upload(me, b"\x89PNG\r\n\x1a\n" + b"0" * (2 * 1024 * 1024))
            assert status == 413
        finally:
            await me.close()


def test_setup_from_an_stt_config() -> None:
    from turinglab.arena.modes.strong_mode import strong_setup_for
    from turinglab.config import EMBEDDED_AGENTS, ScriptedAgentConfig

    configs = {**EMBEDDED_AGENTS, "friend": ScriptedAgentConfig(kind="scripted", replies=["hi"])}
    exp = StrongExperiment(
        game="strong", investigators=["person"], systems=["eliza"], humans=["friend"]
    )
    made = strong_setup_for(exp, configs)
    assert [m.name for m in made.modes] == ["strong", "strong-practice"]
    assert set(made.agents) == {"eliza", "friend"}
    with_ai = exp.model_copy(update={"investigators": ["person", "friend"]})
    assert [m.name for m in strong_setup_for(with_ai, configs).modes][-1] == "strong-respond"
    bad = exp.model_copy(update={"humans": ["person"]})
    with pytest.raises(ValueError, match="no agent named person"):
        strong_setup_for(bad, configs)
