"""Live integrative-test sessions as ITT judgements: people play sessions over real websockets
(scripted AI), the arena writes them to a SQLite store, the admin export and
`turinglab export RUN --format itt` give the judgements file, and `turinglab itt score` on it
gives the confusion matrix worked out by hand from who was judged right."""

from __future__ import annotations

import copy
import csv
import io
import json
from pathlib import Path

import aiohttp
import pytest

from arena_fixtures import ADMIN_PASSWORD, Person, running_arena
from test_arena_strong_itt import AI
from test_cli_errors import turinglab
from turinglab.agents.scripted import ScriptedAgent
from turinglab.arena import ArenaSettings, ArenaSetup
from turinglab.arena.core.store_bridge import ArenaStore
from turinglab.arena.modes.live_itt_mode import live_itt_judgements, live_itt_mode
from turinglab.games.live_itt import LiveITTExperiment
from turinglab.itt.judgements import JUDGEMENT_COLUMNS
from turinglab.store.database import Store

STAND_IN = "chitchat-replay"


def setup() -> ArenaSetup:
    cfg = LiveITTExperiment.model_validate(
        {"game": "live-itt", "ai_agents": [AI], "stand_ins": [STAND_IN], "exchange_limits": [1]}
    )
    agents = {
        AI: ScriptedAgent(AI, ["just cooking dinner"], cycle=True),
        STAND_IN: ScriptedAgent(STAND_IN, ["lol yeah same"], cycle=True),
    }
    modes = [
        live_itt_mode("live-itt", "Live integrative test", cfg),
        live_itt_mode("live-itt-practice", "Practice: you judge", cfg, solo=True),
    ]
    return ArenaSetup(modes, agents, {AI: "Murrow (scripted)"}, ArenaSettings(seed=3))


async def judged_session(base: str, answer: str, right: bool) -> str:
    """Two new people play one exchange; the judge names the person (right) or the AI (wrong).
    Returns the label the judge called human."""
    a, b = Person(base), Person(base)
    try:
        for p in (a, b):
            await p.connect()
            await p.send(type="join", mode="live-itt", consent=True)
        first = await a.until("strong", timeout=15)
        judge, agent = (a, b) if first["role"] == "investigator" else (b, a)
        await judge.send(type="message", channel="A", text="what are you doing right now?")
        await agent.until("strong", timeout=15, phase="answering")
        await agent.send(type="message", channel="A", text=answer)
        state = await judge.until("strong", timeout=15, phase="verdict")
        texts = [r["text"] for r in state["history"][-1]["replies"]]
        person = "AB"[texts.index(answer)]
        called = person if right else "AB".replace(person, "")
        await judge.send(type="verdict", choice=called, confidence=70, reason=f"said {answer}")
        await judge.until("strong", timeout=15, phase="ended")
        return called
    finally:
        await a.close()
        await b.close()


async def practice_session(base: str) -> None:
    p = Person(base)
    try:
        await p.connect()
        await p.send(type="join", mode="live-itt-practice", consent=True)
        await p.until("strong", timeout=15, phase="asking")
        await p.send(type="message", channel="A", text="hello?")
        await p.until("strong", timeout=15, phase="verdict")
        await p.send(type="verdict", choice="A", confidence=50, reason="")
        await p.until("strong", timeout=15, phase="ended")
    finally:
        await p.close()


@pytest.mark.server
async def test_sessions_export_as_judgements_that_itt_score_reads(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    arena_setup = setup()
    kept = ArenaStore(Store(str(db)), arena_setup)
    outcomes = [("typing this on the bus", True), ("watching tv", False), ("cooking", True)]
    with running_arena(arena_setup, store=kept) as (base, app):
        for answer, right in outcomes:
            await judged_session(base, answer, right)
        await practice_session(base)  # solo practice is never study data
        async with aiohttp.ClientSession() as http:
            url = base + "/admin/export/live-itt.csv"
            async with http.get(url) as r:
                assert r.status == 401
            auth = {"Authorization": aiohttp.encode_basic_auth("admin", ADMIN_PASSWORD)}
            async with http.get(url, headers=auth) as r:
                assert r.status == 200 and r.headers["content-type"].startswith("text/csv")
                served = await r.text()
            async with http.get(base + "/admin", headers=auth) as r:  # its kit's download
                assert 'href="/admin/export/live-itt.csv"' in await r.text()
        finished = list(app.state.arena.finished)
    kept.close()
    assert len(finished) == 4

    rows = list(csv.DictReader(io.StringIO(served)))
    assert list(rows[0])[: len(JUDGEMENT_COLUMNS)] == list(JUDGEMENT_COLUMNS)
    assert len(rows) == 6  # two answerers in each of the three study sessions
    # the verdict's response time (from the last answer shown), so --min-rt applies
    assert all(r["rt"] and float(r["rt"]) >= 0 for r in rows)
    study = [g for g in finished if not g["solo"]]
    for game, (answer, right) in zip(study, outcomes, strict=True):
        trial = game["trial"]
        mine = [r for r in rows if r["item"].startswith(trial["key"] + "/")]
        human = next(r for r in mine if r["source"] == "human")
        machine = next(r for r in mine if r["source"] == "machine")
        assert human["judge"] == machine["judge"] == trial["seats"]["judge"]
        assert human["judge"].startswith("person:") and human["judge_type"] == "human"
        assert (human["model"], machine["model"]) == ("", AI)
        assert (human["label"], machine["label"]) == (("H", "M") if right else ("M", "H"))
        assert human["task"] == f"live-{trial['params']['condition']}" and human["length"] == "1"
        side = human["item"].rsplit("/", 1)[1]
        assert trial["seats"][{"A": "agent_a", "B": "agent_b"}[side]].startswith("person:")
        said = [m["text"] for m in game["messages"] if m["sender"] == trial["params"]["human_seat"]]
        assert said == [answer]

    # The same file from the store through the CLI, then scored.
    out = tmp_path / "itt"
    done = turinglab("export", kept.run_id, "--format", "itt", "--store", str(db), "--out",
                     str(out), cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    said = " ".join(done.stdout.split())  # rich wraps long lines
    assert "6 judgements from 3 live integrative-test sessions" in said
    assert (out / "judgements.csv").read_bytes().decode() == served
    scored = turinglab("itt", "score", str(out / "judgements.csv"), "--json", cwd=tmp_path)
    assert scored.returncode == 0, scored.stderr
    result = json.loads(scored.stdout)
    overall = result["overall"]
    # Right, wrong, right: the person was called human 2 of 3 times, the AI 1 of 3 times
    # (the scores are rounded to 4 places).
    assert overall["n"] == 6
    assert overall["p_H_given_H"] == 0.6667
    assert overall["p_M_given_H"] == 0.3333
    assert overall["p_H_given_M"] == 0.3333
    assert overall["p_M_given_M"] == 0.6667
    assert overall["detectability"] == 0.6667
    assert list(result["per_model"]) == [AI]
    assert list(result["per_length"]) == ["1"]


def test_flagged_practice_and_unfinished_sessions_give_no_judgements() -> None:
    game = {
        "solo": False,
        "status": "finished",
        "flags": [],
        "judgements": [{"kind": "verdict", "verdict": "agent_b"}],
        "trial": {
            "key": "arena:live-itt#0",
            "game": "live-itt",
            "seats": {"judge": "person:j", "agent_a": AI, "agent_b": "person:h"},
            "params": {"human_seat": "agent_b", "ai_seat": "agent_a", "condition":
                       "deceitful-human", "exchanges": 5},
        },
    }  # fmt: skip
    (ai, human) = live_itt_judgements([game])
    assert (ai.source, ai.model, ai.label, ai.item) == ("machine", AI, "M", "arena:live-itt#0/A")
    assert (human.source, human.label, human.task, human.length) == (
        "human",
        "H",
        "live-deceitful-human",
        5,
    )
    for change in ({"flags": ["arena: timeout"]}, {"solo": True}, {"status": None},
                   {"judgements": []}, {"status": "flagged"}):  # fmt: skip
        assert live_itt_judgements([{**copy.deepcopy(game), **change}]) == []
    other = copy.deepcopy(game)
    other["trial"]["game"] = "strong"
    assert live_itt_judgements([other]) == []
