"""People in ITT topic conversations over real websockets: two people, or a person and a
scripted AI, hold a conversation through the arena's live engine; the store keeps it, `turinglab
export RUN --format itt` writes it as conversation dataset rows with its topic, and the rows
make judging trials with the paper's topic control question."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from arena_fixtures import Person, running_arena
from test_cli_errors import turinglab
from turinglab.agents.scripted import ScriptedAgent
from turinglab.arena import ArenaSettings, ArenaSetup
from turinglab.arena.core.abandon import TOLD_STAYED
from turinglab.arena.core.matchmaking_wait import MatchDesign
from turinglab.arena.core.modes import ArenaMode
from turinglab.arena.core.store_bridge import ArenaStore
from turinglab.arena.modes.itt_chat_mode import MODE, TITLE, TOLD_TOO_SLOW, itt_chat_mode
from turinglab.arena.modes.setups import setup_from_config
from turinglab.config import parse_config
from turinglab.games.conversation import ConversationExperiment
from turinglab.itt.batches import build_batch, candidates
from turinglab.itt.dataset import conversations, load_dataset
from turinglab.store.database import Store

pytestmark = pytest.mark.server

AI = "pat"
AI_LINES = ["oh nice, I mostly listen to jazz", "do you play anything yourself?",
            "I tried the piano once, it did not last"]  # fmt: skip
PEOPLE_LINES = ["hey! what music are you into lately?", "mostly old soul records, you?",
                "same, I love a good horn section", "we should swap playlists"]  # fmt: skip


def chat_setup(ai_after_s: float, seed: int = 4, **mode: float) -> ArenaSetup:
    cfg = ConversationExperiment.model_validate(
        {"game": "conversation", "pairs": [[AI, AI]], "exchanges": 4, "topics": ["music"]}
    )
    agents = {AI: ScriptedAgent(AI, AI_LINES)}
    settings = ArenaSettings(seed=seed, ai_after_s=ai_after_s)
    modes: list[ArenaMode] = [itt_chat_mode(MODE, TITLE, cfg, **mode)]
    return ArenaSetup(modes, agents, {AI: "Pat (scripted)"}, settings)


async def test_two_people_hold_a_topic_conversation_that_exports_as_itt_rows(
    tmp_path: Path,
) -> None:
    db = tmp_path / "arena.db"
    setup = chat_setup(ai_after_s=600)  # people only
    kept = ArenaStore(Store(str(db)), setup)
    with running_arena(setup, store=kept) as (base, app):
        a, b = Person(base), Person(base)
        try:
            for p in (a, b):
                assert (await p.connect())["type"] == "status"
                await p.send(type="join", mode=MODE, consent=True)
            first_a, first_b = await a.until("itt-chat"), await b.until("itt-chat")
            opener, other = (a, b) if first_a["you"] == "A" else (b, a)
            start = first_a if opener is a else first_b
            assert {first_a["you"], first_b["you"]} == {"A", "B"}
            assert start["topic"] == "music" and start["exchanges"] == 4
            brief = await opener.until("itt-chat", phase="writing")
            assert brief["lines"][0]["sender"] == "game"
            assert brief["lines"][0]["text"].startswith("Chat with your partner about music")
            assert brief["partner"] is None  # who the partner is stays hidden until the end
            # B may not write first; nothing is said for them.
            await other.send(type="message", channel="A", text="me first?")
            refused = await other.until("error")
            assert refused["code"] == "wait"
            await opener.send(type="typing", channel="A")
            assert (await other.until("typing"))["channel"] == "A"
            turns = [opener, other, opener, other]
            for n, (person, line) in enumerate(zip(turns, PEOPLE_LINES, strict=True)):
                # each writes once shown the partner's message (waited for below)
                await person.send(type="message", channel="A", text=line)
                if n < 3:
                    partner = other if person is opener else opener
                    got = await partner.until("itt-chat", phase="writing")
                    assert got["lines"][-1] == {**got["lines"][-1], "sender": "them", "text": line}
            ends = [await p.until("itt-chat", phase="ended") for p in (opener, other)]
            for end in ends:
                assert end["partner"] == "a person" and end["flagged"] is None
                assert [m["text"] for m in end["lines"] if m["sender"] != "game"] == PEOPLE_LINES
            # A study conversation is a round: every state frame says which (8 by default).
            states = [f for f in a.frames + b.frames if f["type"] == "itt-chat"]
            assert len(states) > 4
            assert all(f["rounds"] == {"played": 1, "total": 8} for f in states)
        finally:
            await a.close()
            await b.close()
        (game,) = app.state.arena.finished
    kept.close()
    assert game["status"] == "finished" and game["trial"]["params"]["topic"] == "music"

    out = tmp_path / "itt"
    done = turinglab("export", kept.run_id, "--format", "itt", "--store", str(db), "--out",
                     str(out), cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "4 messages from 1 arena conversations (1 H-H" in " ".join(done.stdout.split())
    rows = load_dataset(out / "responses.csv")
    assert [r.text for r in rows] == PEOPLE_LINES
    assert [r.speaker for r in rows] == ["A", "B", "A", "B"]
    assert {r.source for r in rows} == {"human"} and {r.topic for r in rows} == {"music"}
    people = {game["seats"][s]["participant"] for s in ("A", "B")}
    assert {r.agent for r in rows} == people
    (talked,) = conversations(rows)
    assert talked.kind == "H-H"


async def test_a_person_and_an_ai_hold_a_conversation_judgeable_like_the_others(
    tmp_path: Path,
) -> None:
    db = tmp_path / "arena.db"
    openers = []
    runs = []
    for seed in (1, 2, 3, 4, 5, 6):  # a lone person sits at A or B by the session's seed
        setup = chat_setup(ai_after_s=0, seed=seed)
        kept = ArenaStore(Store(str(db)), setup)
        with running_arena(setup, store=kept) as (base, _):
            p = Person(base)
            try:
                await p.connect()
                await p.send(type="join", mode=MODE, consent=True)
                state = await p.until("itt-chat")
                me = state["you"]
                openers.append(me == "A")
                mine = iter(PEOPLE_LINES)
                while state["phase"] != "ended":
                    if state["phase"] == "writing":
                        await p.send(type="message", channel="A", text=next(mine))
                    state = await p.until("itt-chat")
                assert state["partner"] == "an AI (Pat (scripted))"
                # Before the end no frame names the partner, its agent or its kind.
                before = json.dumps(p.frames[: p.frames.index(state)])
                assert '"pat"' not in before and "scripted" not in before
                assert "person:" not in before and '"ai"' not in before
                said = [m for m in state["lines"] if m["sender"] != "game"]
                assert len(said) == 4
                assert [m["sender"] for m in said] == (
                    ["you", "them"] * 2 if me == "A" else ["them", "you"] * 2
                )
                assert [m["text"] for m in said if m["sender"] == "them"] == AI_LINES[:2]
            finally:
                await p.close()
        kept.close()
        runs.append(kept.run_id)
    assert True in openers and False in openers  # both orders: H–AI and AI–H

    out = tmp_path / "itt"
    done = turinglab("export", runs[0], "--format", "itt", "--store", str(db), "--out",
                     str(out), cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    rows = load_dataset(out / "responses.csv")
    (talked,) = conversations(rows)
    assert talked.kind == "H-M" and talked.topic == "music"
    machine = [r for r in rows if r.source == "machine"]
    assert {r.agent for r in machine} == {AI} and [r.text for r in machine] == AI_LINES[:2]
    # Judgeable as any conversation: one trial per side, the topic as the control question.
    pool = candidates(rows)
    assert sorted(c.source for c in pool) == ["human", "machine"]
    batch = build_batch(pool, 2, judge="j", seed=0)
    for trial in batch.trials:
        assert trial.control is not None and trial.control.answer == "music"
        assert "music" in trial.control.options


def test_serve_offers_conversations_for_a_conversation_config() -> None:
    config = parse_config(
        {
            "name": "people-talk",
            "agents": {AI: {"kind": "scripted", "replies": AI_LINES}},
            "experiment": {"game": "conversation", "pairs": [[AI, AI]], "exchanges": 24},
        }
    )
    setup = setup_from_config(config)
    (mode,) = setup.modes
    assert mode.name == MODE and mode.ai_agents == (AI,) and not mode.solo
    # A study: whether a person meets a person or an AI is drawn, blind to the wait.
    assert setup.settings.design is not None


async def test_a_person_who_leaves_or_goes_silent_ends_the_conversation(tmp_path: Path) -> None:
    # Two people; B's connection goes and does not come back within 0.5 s.
    setup = chat_setup(ai_after_s=600, abandon_after_s=0.5)
    with running_arena(setup) as (base, app):
        a, b = Person(base), Person(base)
        try:
            for p in (a, b):
                await p.connect()
                await p.send(type="join", mode=MODE, consent=True)
            first = await a.until("itt-chat")
            opener, other = (a, b) if first["you"] == "A" else (b, a)
            await opener.send(type="message", channel="A", text=PEOPLE_LINES[0])
            await other.until("itt-chat", phase="writing")
            await other.drop()
            end = await opener.until("itt-chat", phase="ended")
            assert end["flagged"] == TOLD_STAYED
        finally:
            await a.close()
            await b.close()
        (game,) = app.state.arena.finished
    assert game["status"] == "abandoned" and "left" in game["flags"][0]
    assert [m["text"] for m in game["messages"] if m["sender"] in ("A", "B")] == PEOPLE_LINES[:1]

    # A person with an AI who never writes on their turn.
    setup = chat_setup(ai_after_s=0, reply_timeout_s=1.0)
    with running_arena(setup) as (base, app):
        p = Person(base)
        try:
            await p.connect()
            await p.send(type="join", mode=MODE, consent=True)
            end = await p.until("itt-chat", phase="ended")
            assert end["flagged"] == TOLD_TOO_SLOW
        finally:
            await p.close()
        (game,) = app.state.arena.finished
    assert game["status"] == "abandoned" and "wrote nothing for 1 s" in game["flags"][0]


async def test_the_study_design_seats_people_in_conversations() -> None:
    # Blind matching (matchmaking_wait.py) as a served config has it, with short waits: each
    # person ends up with a person or an AI as the design draws, and finishes the chat.
    setup = chat_setup(ai_after_s=600)
    design = MatchDesign(human_witness_share=1.0, wait_min_s=0.0, wait_max_s=0.3)
    setup.settings = setup.settings.model_copy(update={"design": design})

    async def chat(p: Person) -> str:
        await p.connect()
        await p.send(type="join", mode=MODE, consent=True)
        state = await p.until("itt-chat")
        lines = iter(PEOPLE_LINES)
        while state["phase"] != "ended":
            if state["phase"] == "writing":
                await p.send(type="message", channel="A", text=next(lines))
            state = await p.until("itt-chat")
        assert state["flagged"] is None
        return str(state["partner"])

    with running_arena(setup) as (base, app):
        people = [Person(base), Person(base)]
        try:
            partners = await asyncio.gather(*(chat(p) for p in people))
        finally:
            for p in people:
                await p.close()
        finished = list(app.state.arena.finished)
    assert set(partners) <= {"a person", "an AI (Pat (scripted))"}
    assert all(g["status"] == "finished" for g in finished) and 1 <= len(finished) <= 2
