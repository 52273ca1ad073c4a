"""Nothing identifying reaches a client before its verdict: every frame the server sends during
full games is recorded (at the server, as sent) and searched for seat ids, channel names, agent
names, backends and the other person's id; and every frame must be one of the protocol's
closed frame types, so a new field cannot slip through unnoticed. The live integrative test
also keeps the AI's condition and life story from the judge, and the AI's answers from the
human agent for good."""

from __future__ import annotations

import json
from typing import Any

from arena_fixtures import SECRET_AGENT, Person, make_setup, pair, running_arena
from test_arena_strong_itt import AI, AI_ANSWERS
from test_arena_strong_itt import setup as live_itt_setup
from turinglab.arena.core import frames as F

MODELS = {m.model_fields["type"].default: m for m in F.ServerFrame.__args__}  # type: ignore[attr-defined]
HIDDEN = [SECRET_AGENT, "Zorblax", "seat_left", "seat_right", "seat_only", "ch-left", "ch-right",
          "ch-only", "person:", "scripted", "eliza", "DOCTOR", '"kind"']  # fmt: skip


def _before_reveal(frames: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for f in frames:
        if f["type"] == "reveal" or (f["type"] == "game" and f.get("reveal")):
            break
        out.append(f)
    return out


def _closed(frames: list[dict[str, Any]]) -> None:
    for frame in frames:  # closed models: an unknown field or type fails validation
        model = MODELS[frame["type"]]
        assert model.model_validate(frame).model_dump(mode="json") == frame


def _check(log: list[tuple[str, dict[str, Any]]], people: list[Person]) -> int:
    ids = {pid for pid, _ in log}
    checked = 0
    for pid in ids:
        mine = [f for p, f in log if p == pid]
        _closed(mine)
        early = _before_reveal(mine)
        assert any(f["type"] == "message" for f in early)
        text = json.dumps(early)
        for word in [*HIDDEN, *(ids - {pid})]:
            assert word not in text, f"{word!r} reached {pid} before the reveal"
        assert any(f["type"] == "reveal" for f in mine)
        checked += len(mine)
    return checked


async def test_no_identity_in_any_frame_before_the_verdict() -> None:
    log: list[tuple[str, dict[str, Any]]] = []
    setup = make_setup(ai_after_s=0.5)
    with running_arena(setup, frame_log=lambda pid, f: log.append((pid, f))) as (base, _app):
        # A three-party game between two people and the scripted AI witness.
        judge, witness, _gj, _gw = await pair(base, "three-party")
        for ch in ("A", "B"):
            await judge.send(type="message", channel=ch, text="hi, who are you?")
        await witness.until("message", sender="them")
        await witness.send(type="typing", channel="A")
        await witness.send(type="message", channel="A", text="just me")
        for _ in range(2):
            await judge.until("message", sender="them")
        await judge.drop()
        await judge.connect()  # a reconnect snapshot is searched too
        await judge.send(type="end")  # a verdict only after the end
        await judge.send(type="verdict", choice="A", confidence=40, reason="hunch")
        for p in (judge, witness):
            await p.until("reveal")

        # A lone person meets ELIZA in two-party; another plays practice.
        solo, practice = Person(base), Person(base)
        for p, mode in ((solo, "two-party"), (practice, "practice")):
            await p.connect()
            await p.send(type="join", mode=mode, consent=True)
            await p.until("game")
            await p.send(type="message", channel="A", text="are you a computer?")
            await p.until("message", sender="them")
            await p.send(type="end")
            await p.until("phase", phase="verdict")
            await p.send(type="verdict", choice="human", confidence=10, reason="")
            await p.until("reveal")
        people = [judge, witness, solo, practice]
        checked = _check(log, people)
        assert checked >= 30
        # The search is not vacuous: the reveal does name the AI witness.
        assert "Zorblax (scripted)" in json.dumps([f for _, f in log])
        for p in people:
            await p.close()


async def test_gtt_modes_name_nobody_before_the_end() -> None:
    """A person judging may know the target's name (the question is about it) but not the
    imitator's, nor which one X is; a person imitating learns nobody's name; nobody sees a
    model's instructions, seat ids or the other person's id."""
    from test_arena_gtt import NAMES, gtt_setup, join, lines, until_state

    log: list[tuple[str, dict[str, Any]]] = []
    with running_arena(gtt_setup(), frame_log=lambda pid, f: log.append((pid, f))) as (base, app):
        judge, first = await join(base, "gtt-distinguish")
        await until_state(judge, lambda s: s["phase"] == "writing")
        await judge.send(type="message", channel="study", text="hi")
        await until_state(judge, lambda s: len(lines(s, "study")) == 2)
        await judge.send(type="end")
        await until_state(judge, lambda s: s["chat"] == "test")
        await judge.send(type="message", channel="test", text="who are you?")
        await until_state(judge, lambda s: s["can_decide"])
        await judge.drop()
        await judge.connect()  # a reconnect snapshot is searched too
        await judge.send(type="verdict", choice="target", confidence=50, reason="")
        await until_state(judge, lambda s: s["reveal"] is not None)

        actor, _ = await join(base, "gtt-act")
        await until_state(actor, lambda s: s["chat"] == "study")
        await actor.send(type="end")
        while True:
            state = await until_state(actor, lambda s: s["phase"] != "waiting")
            if state["reveal"] is not None:
                break
            if state["phase"] == "writing":
                await actor.send(type="message", channel="test", text="i am you")

        games = {}
        for game in app.state.arena.games.values():
            (view,) = game.views.values()
            games[view.participant.id] = game
        for pid, game in games.items():
            mine = [f for p, f in log if p == pid]
            for frame in mine:  # closed models: an unknown field or type fails validation
                assert MODELS[frame["type"]].model_validate(frame).model_dump(mode="json") == frame
            cut = next(i for i, f in enumerate(mine) if f.get("reveal"))
            early = json.dumps(mine[:cut])
            told = {first["target"]} if game.mode.name == "gtt-distinguish" else set()
            hidden = [*NAMES, *(set(NAMES.values()) - told), "scripted", "person:", '"specimen"',
                      '"unknown"', "x_is_target", "You are taking part", "imitate you",
                      *(set(games) - {pid})]  # fmt: skip
            for word in hidden:
                assert word not in early, f"{word!r} reached {pid} before the end"
            assert any(name in json.dumps(mine[cut:]) for name in NAMES.values())
        await judge.close()
        await actor.close()


def _answered(frame: dict[str, Any], n: int) -> bool:
    history = frame.get("history") or []
    return frame["type"] == "strong" and len(history) == n and bool(history[-1]["replies"])


async def test_live_itt_hides_the_ai_from_the_judge_and_its_answers_from_the_person() -> None:
    log: list[tuple[str, dict[str, Any]]] = []
    setup = live_itt_setup("deceitful-ai", limit=5)
    with running_arena(setup, frame_log=lambda pid, f: log.append((pid, f))) as (base, app):
        a, b = Person(base), Person(base)
        for p in (a, b):
            await p.connect()
            await p.send(type="join", mode="live-itt", consent=True)
        first = await a.until("strong", timeout=15)
        judge, agent = (a, b) if first["role"] == "investigator" else (b, a)
        for n in range(1, 6):
            await judge.send(type="message", channel="A", text=f"where did you grow up? ({n})")
            await agent.until("strong", timeout=15, phase="answering")
            await agent.send(type="typing", channel="A")
            await agent.send(type="message", channel="A", text=f"near the sea, {n}")
            if n == 3:
                await judge.drop()
                await judge.connect()  # a reconnect snapshot is searched too
            state = judge.frames[-1]  # after a reconnect, its snapshot may show them already
            while not _answered(state, n):  # both answers to question n are on the judge's screen
                state = await judge.recv(15)
        assert state["phase"] == "verdict"
        await judge.send(type="verdict", choice="B", confidence=55, reason="gut")
        for p in (judge, agent):
            await p.until("strong", timeout=15, phase="ended")
        (record,) = app.state.arena.finished
        await a.close()
        await b.close()
    params = record["trial"]["params"]
    story = params["life_story"]
    ids = {pid for pid, _ in log}
    assert len(ids) == 2
    person_of = {v["participant"]: s for s, v in record["seats"].items() if v["kind"] == "human"}
    for pid in ids:
        mine = [f for p, f in log if p == pid]
        _closed(mine)
        cut = next(i for i, f in enumerate(mine) if f.get("phase") == "ended")
        early = json.dumps(mine[:cut])
        secrets = [AI, "Murrow", "scripted", "agent_a", "agent_b", "deceitful", "human_seat",
                   story, story.split(",")[0], "person:", *(ids - {pid})]  # fmt: skip
        for word in secrets:
            assert word not in early, f"{word!r} reached the {person_of[pid]} before the end"
        if person_of[pid] != "judge":  # the human agent: never the AI's answers, not even after
            assert not any(answer in json.dumps(mine) for answer in AI_ANSWERS)
            assert "near the sea, 5" in early
        else:
            assert all(answer in early for answer in AI_ANSWERS)
        # Not vacuous: the end does reveal the AI and its story to both.
        assert "Murrow (scripted)" in json.dumps(mine[cut:]) and story in json.dumps(mine[cut:])
