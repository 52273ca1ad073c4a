"""The arena as a transport for the engine's own games: the three-party game of
games/three_party.py between two people and ELIZA, and a solo two-party game against ELIZA,
over real websockets. The game (not the arena) enforces the rules, records the verdict and
scores it; the arena only routes — and still hides who is who until the reveal."""

from __future__ import annotations

import itertools
import json
import time
from typing import Any

from arena_fixtures import Person, engine_setup, pair, running_arena
from turinglab.arena.modes.engine_modes import interrogation_mode
from turinglab.games.two_party import TwoPartyExperiment


async def test_engine_three_party_game_through_the_arena() -> None:
    log: list[tuple[str, dict[str, Any]]] = []
    records: list[dict[str, Any]] = []
    with running_arena(
        engine_setup(), on_finished=records.append, frame_log=lambda p, f: log.append((p, f))
    ) as (base, app):
        judge, witness, gj, _gw = await pair(base, "three-party")
        assert gj["channels"] == ["A", "B"]
        for ch in ("A", "B"):
            await judge.send(type="message", channel=ch, text=f"Hello {ch}, I feel tired today")
        heard = await witness.until("message", sender="them")
        human = heard["text"][6]
        ai = "B" if human == "A" else "A"
        await witness.send(type="message", channel="A", text="same here, long week")
        got = {human: None, ai: None}
        while None in got.values():
            m = await judge.until("message", sender="them")
            got[m["channel"]] = m["text"]
        assert got[human] == "same here, long week" and got[ai].isupper()  # ELIZA's capitals

        # Turns alternate: the transport refuses a second message before the game sees it.
        await witness.send(type="message", channel="A", text="hello??")
        err = await witness.until("error")
        assert err["code"] == "wait"

        await judge.send(type="end")
        assert (await judge.until("phase"))["phase"] == "verdict"
        await judge.send(type="verdict", choice=human, confidence=70, reason="typed like a person")
        reveal = await judge.until("reveal")
        await witness.until("reveal")
        assert reveal["correct"] is True and reveal["verdict"] == human
        assert {s["channel"]: s["name"] for s in reveal["sides"]}[ai] == "ELIZA"

        (rec,) = records
        assert rec["status"] == "finished" and rec["trial"]["game"] == "three-party"
        human_seat = rec["trial"]["params"]["human_seat"]
        assert rec["seats"][human_seat]["kind"] == "human"
        (j,) = rec["judgements"]
        assert (j["verdict"], j["confidence"], j["reason"]) == (
            human_seat, 70.0, "typed like a person"
        )  # fmt: skip
        texts = [m["text"] for m in rec["messages"] if m["sender"] == human_seat]
        assert texts == ["same here, long week"]

        # Nothing before the reveal names a seat, the agent or the other person.
        for pid in {p for p, _ in log}:
            early = []
            for _, f in ((p, f) for p, f in log if p == pid):
                if f["type"] == "reveal":
                    break
                early.append(f)
            text = json.dumps(early)
            for word in ("witness_a", "witness_b", "eliza", "ELIZA", "person:", "human_seat"):
                assert word not in text, (word, pid)
        for p in (judge, witness):
            await p.close()
        assert app.state.arena.export()["games"][0]["game"] == rec["game"]


async def test_ai_witness_typing_delay_shows_a_typing_indicator() -> None:
    setup = engine_setup()
    # 1.5 s reading before any typing shows, then 0.1 s per character typed.
    quick = {"base_s": 1.5, "per_char_mean": 0.1, "per_char_sd": 0.0, "think_scale": 0.01}
    two = TwoPartyExperiment.model_validate(
        {"game": "two-party", "interrogators": ["x"], "seed": 5, "typing_delay": True,
         "ai_witnesses": [{"agent": "eliza", "persona": "none"}], "delay": quick}
    )  # fmt: skip
    setup.modes = [interrogation_mode("practice", "Practice", two, solo=True)]
    with running_arena(setup) as (base, _app):
        p = Person(base)
        await p.connect()
        await p.send(type="join", mode="practice", consent=True)
        await p.until("game")
        sent = time.monotonic()
        await p.send(type="message", channel="A", text="I dream about computers")
        # Reading first (no indicator), then typing frames as a person's browser sends them
        # (the same frame, more than 2 s apart), then the reply.
        frames: list[tuple[float, dict[str, Any]]] = []
        while not frames or frames[-1][1].get("sender") != "them":
            frame = await p.until_any(("typing", "message"))
            frames.append((time.monotonic(), frame))
        typing = [(at, f) for at, f in frames if f["type"] == "typing"]
        shown = [{k: v for k, v in f.items() if k not in ("seq", "stream")} for _, f in typing]
        assert typing and all(f == {"type": "typing", "channel": "A"} for f in shown)
        assert typing[0][0] - sent >= 1.5  # after reading, never at once
        assert all(b[0] - a[0] > 1.9 for a, b in itertools.pairwise(typing))
        assert frames[-1][1]["sender"] == "them" and frames[-1][1]["text"].isupper()
        await p.close()


async def test_engine_two_party_practice_against_eliza() -> None:
    with running_arena(engine_setup()) as (base, app):
        p = Person(base)
        await p.connect()
        await p.send(type="join", mode="practice", consent=True)
        game = await p.until("game")
        assert game["practice"] is True and game["judge_choices"] == ["human", "ai"]
        await p.send(type="message", channel="A", text="My mother takes care of me")
        reply = await p.until("message", sender="them")
        assert reply["text"].isupper()
        await p.send(type="end")
        await p.until("phase", phase="verdict")
        await p.send(type="verdict", choice="ai", confidence=95, reason="ELIZA-like")
        reveal = await p.until("reveal")
        assert reveal["correct"] is True
        export = app.state.arena.export()
        assert export["games"] == [] and export["practice_games"][0]["status"] == "finished"
        await p.close()
