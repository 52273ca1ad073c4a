"""Every way out of a study, over the real HTTP and websocket protocol, and the code each earns
(arena/web/handoff.py): the completion code only for every study round played and the survey;
leaving early gives the early-exit code with the rounds done kept; practice never counts;
nobody to play with gives the timed-out code; declining before playing keeps nothing, and
declining after playing marks the data withdrawn, which no export then holds."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import aiohttp
import yaml

from arena_fixtures import ADMIN_PASSWORD, Person, make_setup, running_arena
from turinglab.arena.core.store_bridge import ArenaStore
from turinglab.arena.core.study_config import HandOff, Recruitment, StudyConfig
from turinglab.arena.modes.setups import setup_from_config
from turinglab.config import load_config
from turinglab.store.database import Store

URL = "https://app.prolific.com/submissions/complete?cc="
CODES = {"completion": "FULL1", "early_exit": "PART2", "timed_out": "WAIT3", "screened_out": "NO4"}
AUTH = {"Authorization": "Basic " + base64.b64encode(f"admin:{ADMIN_PASSWORD}".encode()).decode()}
RECRUITMENT = Recruitment(**{end: HandOff(code=c, url=URL + c) for end, c in CODES.items()})


def _setup() -> Any:
    study = StudyConfig(recruitment=RECRUITMENT)
    # Two rounds each (one per role); a lone interrogator meets ELIZA after 1 s; 3 s at most.
    return make_setup(rounds=2, ai_after_s=1.0, max_wait_s=3.0, study=study, seed=3)


async def _handoff(p: Person) -> dict[str, Any]:
    async with p.http.get(p.base + "/handoff") as r:
        assert r.status == 200, await r.text()
        return dict(await r.json())


async def _play_out(judge: Person, choice: str = "ai") -> None:
    """The interrogator ends the talk and gives a verdict; both see the reveal."""
    await judge.send(type="end")
    await judge.until("phase", phase="verdict")
    await judge.send(type="verdict", choice=choice, confidence=70, reason="too quick")
    await judge.until("reveal")


async def _survey(p: Person) -> None:
    await p.send(type="survey", answers={"comments": "done"})
    await p.until("status", state="survey-saved")


async def _admin_json(base: str, path: str) -> Any:
    async with aiohttp.ClientSession(headers=AUTH) as s, s.get(base + path) as r:
        r.raise_for_status()
        text = await r.text()
    if path.endswith(".jsonl"):
        return [json.loads(line) for line in text.splitlines() if line]
    return json.loads(text)


async def test_each_exit_path_gets_its_own_code_and_the_export_says_so(tmp_path: Path) -> None:
    setup = _setup()
    store = ArenaStore(Store(str(tmp_path / "arena.db")), setup)
    with running_arena(setup, store=store) as (base, _app):
        # The page carries no code: the server decides which one is earned.
        async with aiohttp.ClientSession() as s, s.get(base + "/") as r:
            page = await r.text()
        assert not any(code in page for code in CODES.values())

        # Declining before playing: no session, nothing kept, the screened-out code.
        nobody = Person(base)
        told = await _handoff(nobody)
        assert (told["end"], told["code"]) == ("screened_out", "NO4")
        assert "no data" in told["text"]
        await nobody.close()

        a, b = Person(base), Person(base)
        for p in (a, b):
            await p.connect()
        await a.send(type="join", mode="two-party", consent=True)
        await a.until("status", state="waiting")
        await b.send(type="join", mode="two-party", consent=True)
        ga, _ = await a.until("game"), await b.until("game")
        judge, witness = (a, b) if ga["role"] == "interrogator" else (b, a)
        async with judge.http.get(base + "/handoff") as r:  # no code in the middle of it
            assert r.status == 409
        await _play_out(judge)
        await witness.until("reveal")

        # The witness of round 1 interrogates next, alone: ELIZA after 1 s. Both roles done.
        await witness.send(type="join", mode="two-party", consent=True)
        assert (await witness.until("game", timeout=10))["role"] == "interrogator"
        await _play_out(witness)
        await _survey(witness)
        told = await _handoff(witness)
        assert (told["end"], told["code"], told["url"]) == ("completion", "FULL1", URL + "FULL1")
        assert (told["rounds_done"], told["rounds_total"]) == (2, 2)

        # The interrogator of round 1 may only witness now, and nobody comes: timed out.
        await judge.send(type="join", mode="two-party", consent=True)
        assert (await judge.until("status", timeout=10, state="no-match"))["waited_s"] >= 3
        await _survey(judge)
        told = await _handoff(judge)
        assert (told["end"], told["code"], told["rounds_done"]) == ("timed_out", "WAIT3", 1)

        # Practice, then one study round, then "Finish & exit survey": the early-exit code.
        early = Person(base)
        await early.connect()
        await early.send(type="join", mode="practice", consent=True)
        await early.until("game")
        await _play_out(early)
        await early.send(type="join", mode="two-party", consent=True)
        assert (await early.until("game", timeout=10))["rounds"] == {"played": 1, "total": 2}
        await _play_out(early)
        await _survey(early)
        told = await _handoff(early)
        assert (told["end"], told["code"], told["rounds_done"]) == ("early_exit", "PART2", 1)
        await early.send(type="join", mode="two-party", consent=True)  # the study is over
        assert (await early.until("error"))["code"] == "survey-done"

        # Declining after playing: the data marked withdrawn, the screened-out code.
        gone = Person(base)
        await gone.connect()
        await gone.send(type="join", mode="two-party", consent=True)
        gone_game = await gone.until("game", timeout=10)
        await _play_out(gone)
        async with gone.http.post(base + "/withdraw", json={}) as r:
            told = await r.json()
        assert (told["end"], told["code"]) == ("screened_out", "NO4")
        assert "withdrawn" in told["text"] and "left out of every export" in told["text"]
        assert (await _handoff(gone))["end"] == "screened_out"

        export = await _admin_json(base, "/admin/export.json")
        rows = await _admin_json(base, "/admin/export/study.jsonl")
        admin_html = await _admin_text(base)
        for p in (a, b, early, gone):
            await p.close()

    people = {p["participant"]: p for p in export["participants"]}
    ends = {pid: (p.get("study_end") or {}).get("end") for pid, p in people.items()}
    assert sorted(e for e in ends.values() if e) == ["completion", "early_exit", "timed_out"]
    assert export["withdrawn_participants"] == 1
    assert len(people) == 3  # the withdrawn person is not listed
    assert all(g["game"] != gone_game["game"] for g in export["games"])
    assert len(export["games"]) == 3 and len(export["practice_games"]) == 1
    by_judge = {r["interrogator"]: r for r in rows}
    assert len(rows) == 3 and all(r["game"] != gone_game["game"] for r in rows)
    assert {r["interrogator_study_end"] for r in rows} == {"completion", "timed_out", "early_exit"}
    assert (
        by_judge[next(p for p, e in ends.items() if e == "early_exit")]["interrogator_rounds_done"]
        == "1"
    )
    assert "early exit" in admin_html and "1 of 2" in admin_html


async def _admin_text(base: str) -> str:
    async with aiohttp.ClientSession(headers=AUTH) as s, s.get(base + "/admin") as r:
        return await r.text()


async def test_the_admin_shows_the_configs_seed_and_name_and_each_finished_games_verdict(
    tmp_path: Path,
) -> None:
    config = tmp_path / "study.yaml"
    shipped = (Path(__file__).parents[3] / "configs" / "arena_study.yaml").read_text()
    data = yaml.safe_load(shipped)
    data["experiment"]["ai_witnesses"] = [{"agent": "eliza", "persona": "none"}]
    data["experiment"]["seed"] = 7
    data["agents"], data["store"] = {}, None
    data["arena"]["design"] = {"wait_min_s": 0.1, "wait_max_s": 0.2}
    config.write_text(yaml.safe_dump(data))
    setup = setup_from_config(load_config(config))
    assert setup.settings.seed == 7 and setup.name == "arena-study"
    with running_arena(setup) as (base, _app):
        p = Person(base)
        await p.connect()
        await p.send(type="join", mode="two-party", consent=True)
        game = await p.until("game", timeout=20)
        await _play_out(p)
        home = await _admin_text(base)
        game_page = f"{base}/admin/game/{game['game']}"
        async with aiohttp.ClientSession(headers=AUTH) as s, s.get(game_page) as r:
            page = await r.text()
        await p.close()
    assert "seed 7" in home and "study <strong>arena-study</strong>" in home
    assert f'href="/admin/game/{game["game"]}"' in home  # finished games are linked
    assert "too quick" in home and "<td>70</td>" in home
    assert "<h2>Verdict</h2>" in page and "<td>ai</td><td>70</td>" in page
    assert "too quick" in page
