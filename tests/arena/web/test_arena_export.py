"""The admin's study export is a study file `turinglab report` reads with no hand editing:
games played over real websockets (three-party between two people and an AI witness, two-party
against ELIZA, and a practice game that must not appear) are exported and reported."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import aiohttp

from arena_fixtures import ADMIN_PASSWORD, SECRET_AGENT, Person, make_setup, pair, running_arena
from turinglab.human.schema import load_study


async def _play_three_party(base: str, pick_human: bool) -> None:
    judge, witness, _gj, _gw = await pair(base, "three-party")
    for turn in range(2):  # two exchanges with each witness: fewer would exclude the game
        for ch in ("A", "B"):
            await judge.send(type="message", channel=ch, text=f"hello {ch}")
        heard = await witness.until("message", sender="them")
        human = heard["text"][-1]
        await witness.send(type="message", channel="A", text=f"hey, tired today {turn}")
        got = set()
        while len(got) < 2:
            got.add((await judge.until("message", sender="them"))["channel"])
    other = "B" if human == "A" else "A"
    await judge.send(type="end")  # a verdict only after the end
    await judge.send(
        type="verdict", choice=human if pick_human else other, confidence=60, reason="r"
    )
    await judge.until("reveal")
    await witness.until("reveal")
    for p in (judge, witness):
        await p.send(type="survey", answers={"prior_awareness": "No", "gender": "Female"})
        await p.until("status", state="survey-saved")
        await p.close()


async def _play_alone(base: str, mode: str) -> None:
    p = Person(base)
    await p.connect()
    await p.send(type="join", mode=mode, consent=True)
    await p.until("game")
    for text in ("hello there", "how are you?"):
        await p.send(type="message", channel="A", text=text)
        await p.until("message", sender="them")
    await p.send(type="end")  # a verdict only after the end
    await p.send(type="verdict", choice="ai", confidence=90, reason="capitals")
    await p.until("reveal")
    await p.close()


async def test_study_export_feeds_turinglab_report(tmp_path: Path) -> None:
    with running_arena(make_setup(ai_after_s=0)) as (base, _app):
        await _play_three_party(base, pick_human=True)
        await _play_three_party(base, pick_human=False)
        await _play_alone(base, "two-party")
        await _play_alone(base, "practice")
        auth = {"Authorization": aiohttp.encode_basic_auth("admin", ADMIN_PASSWORD)}
        async with aiohttp.ClientSession() as s:
            async with s.get(base + "/admin/export/study.jsonl") as r:
                assert r.status == 401
            async with s.get(base + "/admin/export/study.jsonl", headers=auth) as r:
                assert r.status == 200
                body = await r.text()
    rows = [json.loads(line) for line in body.splitlines()]
    assert len(rows) == 2 + 2 + 1  # two rows per three-party game, one for two-party
    path = tmp_path / "arena-study.jsonl"
    path.write_text(body)
    study = load_study(path)
    assert set(study["format"]) == {"three-party", "two-party"}
    assert set(study["witness"]) == {"human", SECRET_AGENT, "eliza"}
    three = study[study["format"] == "three-party"]
    assert sorted(three.groupby("game")["judged_human"].sum()) == [1, 1]  # one pick per game
    human_rows = three[three["witness_type"] == "human"]
    assert sorted(human_rows["judged_human"]) == [False, True]
    assert (study["interrogator"].str.startswith("p-")).all()

    report_page(path, tmp_path / "report")


def report_page(study: Path, out: Path) -> str:
    """`turinglab report STUDY` as a user runs it; the report page's text."""
    done = subprocess.run(
        [sys.executable, "-m", "turinglab", "report", str(study), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return next(out.glob("*.html")).read_text()
