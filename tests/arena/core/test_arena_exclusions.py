"""A played arena study, exported, reported: the exclusion flags travel with the export and
`turinglab report` drops the excluded games with no hand editing (SPEC §2: prior participation;
fewer than 2 interrogator messages with a witness). The exit survey of someone who never got a
partner is exported too. Everything goes through the store, as `turinglab serve` runs it."""

from __future__ import annotations

import json
import re
from pathlib import Path

import aiohttp

from arena_fixtures import ADMIN_PASSWORD, Person, make_setup, pair, running_arena
from test_arena_export import report_page
from turinglab.arena.core.store_bridge import ArenaStore
from turinglab.store.database import Store

AUTH = {"Authorization": aiohttp.encode_basic_auth("admin", ADMIN_PASSWORD)}


async def _three_party(base: str, exchanges: int, prior: str) -> None:
    """A game with `exchanges` interrogator messages to each witness, then the survey."""
    judge, witness, _gj, _gw = await pair(base, "three-party")
    for turn in range(exchanges):
        for ch in ("A", "B"):
            await judge.send(type="message", channel=ch, text=f"question {turn} {ch}")
        heard = await witness.until("message", sender="them")
        await witness.send(type="message", channel=heard["channel"], text=f"me, a person {turn}")
        got: set[str] = set()
        while len(got) < 2:
            got.add((await judge.until("message", sender="them"))["channel"])
    await judge.send(type="end")
    await judge.send(type="verdict", choice="A", confidence=55, reason="a hunch")
    await judge.until("reveal")
    await judge.send(type="survey", answers={"prior_awareness": prior, "gender": "Female"})
    await judge.until("status", state="survey-saved")
    for p in (judge, witness):
        await p.close()


async def _never_played(base: str) -> None:
    p = Person(base)
    await p.connect()
    await p.send(type="join", mode="three-party", consent=True)
    await p.until("status", state="no-match", timeout=15)
    await p.send(type="survey", answers={"prior_awareness": "No", "comments": "nobody came"})
    await p.until("status", state="survey-saved")
    await p.close()


async def _get(base: str, path: str) -> str:
    async with aiohttp.ClientSession() as http, http.get(base + path, headers=AUTH) as r:
        assert r.status == 200, await r.text()
        return await r.text()


async def test_exported_exclusion_flags_are_applied_by_the_report(tmp_path: Path) -> None:
    setup = make_setup(max_wait_s=1.0)
    kept = ArenaStore(Store(str(tmp_path / "arena.db")), setup)
    with running_arena(setup, store=kept) as (base, _app):
        await _never_played(base)  # first, so nobody else is waiting to be matched with them
        await _three_party(base, 2, "No")  # kept
        await _three_party(base, 1, "No")  # one message to each witness: excluded
        await _three_party(base, 2, "Took part before")  # prior participation: excluded
        await _three_party(base, 3, "Heard of it")  # heard of it is not taking part: kept
        export = json.loads(await _get(base, "/admin/export.json"))
        body = await _get(base, "/admin/export/study.jsonl")

    games = sorted(export["games"], key=lambda g: g["started_at"])
    flags = [(g["exclude_prior_participation"], g["exclude_few_messages"]) for g in games]
    assert flags == [(False, False), (False, True), (True, False), (False, False)]
    surveys = {p["participant"]: p for p in export["participants"]}
    alone = [p for p in surveys.values() if p["games"] == []]
    assert len(alone) == 1 and alone[0]["survey"]["comments"] == "nobody came"
    assert len(export["games"]) == 4  # the survey holder is not a game

    rows = [json.loads(line) for line in body.splitlines()]
    assert len(rows) == 8
    by_game: dict[str, set[tuple[bool, bool]]] = {}
    for r in rows:
        by_game.setdefault(r["game"], set()).add(
            (r["exclude_prior_participation"], r["exclude_few_messages"])
        )
        assert r["prior_participation"] == r["exclude_prior_participation"]
    assert sorted(len(v) for v in by_game.values()) == [1, 1, 1, 1]  # flags are per game
    path = tmp_path / "arena-study.jsonl"
    path.write_text(body)

    text = re.sub(r"<[^>]+>", " ", report_page(path, tmp_path / "report"))
    assert "Exclusions: 2 of 4 games (4 of 8 rows) removed; 2 games kept." in text
    rules = re.findall(r"(prior_participation|few_messages)\s+(\d+)\s+(\d+)\s+(\d+)", text)
    assert ("prior_participation", "1", "2", "0") in rules
    assert ("few_messages", "1", "2", "0") in rules
