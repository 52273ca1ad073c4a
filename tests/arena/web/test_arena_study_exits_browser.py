"""Issue 31's study end to end in Chromium: the shipped two-party and three-party study configs
(made quick: ELIZA witnesses, short drawn waits) with participants arriving from Prolific links,
one browser context each, through every way out of a study:

* complete: every study round played (or, two-party, witness rounds the design excused), the
  survey → the completion code and Prolific's completion URL;
* early exit: practice and one study round, then "Finish & exit survey" → the early-exit code;
* declined before playing → the screened-out code, no session kept;
* declined after playing (a withdrawal) → the screened-out code, their data out of the export;
* timed out (three-party: nobody else came) → the timed-out code.

Each code is the one shown on the page and the one in the URL Prolific was sent to (after a
countdown); the export keeps each end with its rounds done and leaves the withdrawn person
and their games out.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from arena_fixtures import running_arena
from study_browser import (
    ARGS,
    CHROMIUM,
    Visitor,
    admin_get,
    again,
    arrive,
    codes,
    decline,
    fast_study,
    join,
    next_stage,
    play_game,
    play_on,
    setup_of,
    survey_and_code,
    together,
)
from turinglab.arena.core.store_bridge import ArenaStore
from turinglab.store.database import Store

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="Debian chromium is not installed"),
]

COMPLETE = "https://app.prolific.com/submissions/complete?cc="


def _sent_to(v: Visitor, code: str) -> None:
    """Prolific saw this person once, with this code, after the page counted down."""
    assert v.landed == [COMPLETE + code], (v.name, v.landed)
    # The note counted down from 3 (a busy machine may skip a second, never go back up).
    left = [int(n.split()[4]) for n in v.notes]
    assert v.notes[0] == "Taking you back in 3 seconds…" and len(left) >= 2, v.notes
    assert left == sorted(left, reverse=True) and len(set(left)) == len(left), v.notes
    assert v.errors == [] and v.failed == [], (v.name, v.errors, v.failed)


def _export(base: str) -> tuple[dict[str, Any], dict[str, dict[str, Any]], list[Any], str]:
    export = admin_get(base, "/admin/export.json")
    people = {
        p["recruitment"].get("PROLIFIC_PID"): p for p in export["participants"] if p["recruitment"]
    }
    return export, people, admin_get(base, "/admin/export/study.jsonl"), admin_get(base, "/admin")


async def test_a_two_party_study_through_every_way_out(tmp_path: Path) -> None:
    from playwright.async_api import async_playwright

    # Two rounds each (one as interrogator, one as witness); a person left only a witness
    # round is offered for 4 s, then excused (the design's fallback, not a timeout).
    data = fast_study("arena_study.yaml", rounds=2, max_wait_s=60, witness_wait_s=4)
    code = codes(data)
    setup = setup_of(data, tmp_path)
    store = ArenaStore(Store(str(tmp_path / "arena.db")), setup)
    mode = "Two-party Turing test"
    with running_arena(setup, store=store) as (base, _app):
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            a, b = await together(arrive(browser, base, "ann"), arrive(browser, base, "bo"))
            # Both come at once: the design decides whether they meet (one interrogates the
            # other) or each meets an AI; either way each plays on until their part is done.
            await together(play_on(a, mode), play_on(b, mode))
            shown = await together(survey_and_code(a), survey_and_code(b))
            assert shown == [code["completion"]] * 2
            for v in (a, b):
                _sent_to(v, code["completion"])
                assert sorted(v.roles)[0] == "interrogator"  # each interrogated once

            # Early exit: practice (never counted), one study round, then the survey.
            early = await arrive(browser, base, "cy")
            await join(early, "Practice")
            assert await next_stage(early) == "game"
            await play_game(early)
            await again(early)
            await join(early, mode)
            assert await next_stage(early) == "game"
            await play_game(early)
            assert await early.page.locator("#again").is_visible()  # a round is left
            await early.page.locator("#to-survey").click()
            assert await survey_and_code(early) == code["early_exit"]
            assert early.thanks == "You finished early, after 1 of 2 rounds."
            _sent_to(early, code["early_exit"])

            # Declined after playing a study round: a withdrawal.
            gone = await arrive(browser, base, "di")
            await join(gone, mode)
            assert await next_stage(gone) == "game"
            await play_game(gone)
            await again(gone)
            assert await decline(gone) == code["screened_out"]
            _sent_to(gone, code["screened_out"])

            # Declined before playing: no session at all.
            nobody = await arrive(browser, base, "ed")
            assert await decline(nobody) == code["screened_out"]
            assert await nobody.page.context.cookies() == []
            _sent_to(nobody, code["screened_out"])
            await browser.close()
        export, people, rows, admin = _export(base)

    assert set(people) == {a.pid, b.pid, early.pid}  # the withdrawn one is not listed
    assert export["withdrawn_participants"] == 1
    for v in (a, b):
        end = people[v.pid]["study_end"]
        assert end["end"] == "completion"
        assert end["rounds_done"] + end.get("rounds_excused", 0) == 2
        assert end["rounds_done"] == len(v.games)
        if end.get("rounds_excused"):  # the page said so, rather than "all rounds played"
            assert v.sent_on == (
                "Your part is done: you played 1 of 2 rounds, and the rest are excused because "
                "no interrogator was free for you in time. Thank you!"
            )
    assert people[early.pid]["study_end"] == {
        "end": "early_exit", "rounds_done": 1, "rounds_total": 2
    }  # fmt: skip
    assert people[early.pid]["recruitment"] == {
        "PROLIFIC_PID": early.pid, "STUDY_ID": "study-1", "SESSION_ID": "s-cy"
    }  # fmt: skip
    played = {g["game"] for g in export["games"]}
    assert gone.games[0] not in played and gone.games[0] not in {r["game"] for r in rows}
    assert played == {*a.games, *b.games, early.games[1]}
    assert [g["game"] for g in export["practice_games"]] == [early.games[0]]
    assert {r["interrogator_prolific_pid"] for r in rows} <= {a.pid, b.pid, early.pid}
    assert "early exit" in admin and "1 of 2" in admin


async def test_a_three_party_study_through_every_way_out(tmp_path: Path) -> None:
    from playwright.async_api import async_playwright

    # Two rounds each: one interrogating two witnesses (a person, an AI), one as a witness.
    # Waits are short but longer than any step here, so only the lone visitor times out.
    data = fast_study("arena_three_party_study.yaml", rounds=2, max_wait_s=12, witness_wait_s=12)
    code = codes(data)
    setup = setup_of(data, tmp_path)
    store = ArenaStore(Store(str(tmp_path / "arena.db")), setup)
    mode = "Three-party Turing test"
    with running_arena(setup, store=store) as (base, _app):
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            one, two, three = await together(
                *(arrive(browser, base, n) for n in ("fay", "gus", "hal"))
            )
            # Round 1: two come at once; the one due first interrogates the other.
            await together(join(one, mode), join(two, mode))
            await together(next_stage(one), next_stage(two))
            roles = await together(play_game(one), play_game(two))
            judge, witness = (one, two) if roles[0] == "interrogator" else (two, one)
            # Round 2: the witness of round 1 may only interrogate now: they question the
            # newcomer. Round 3: the newcomer interrogates the first judge.
            await together(again(witness), again(judge))
            await together(join(witness, mode), join(three, mode))
            await together(next_stage(witness), next_stage(three))
            assert await together(play_game(witness), play_game(three)) == [
                "interrogator", "witness"
            ]  # fmt: skip
            await together(again(three))
            await together(join(three, mode), join(judge, mode))
            await together(next_stage(three), next_stage(judge))
            assert await together(play_game(three), play_game(judge)) == [
                "interrogator", "witness"
            ]  # fmt: skip
            # All rounds played: the only way on is the survey, and its code is the full one.
            for v in (one, two, three):
                assert not await v.page.locator("#again").is_visible()
                await v.page.locator("#to-survey").click()
            shown = await together(*(survey_and_code(v) for v in (one, two, three)))
            assert shown == [code["completion"]] * 3
            for v in (one, two, three):
                _sent_to(v, code["completion"])

            # A withdrawal and an early exit, who meet in one game after the early one's
            # practice.
            gone, early = await together(arrive(browser, base, "ida"), arrive(browser, base, "jo"))
            await join(early, "Practice")
            assert await next_stage(early) == "game"
            await play_game(early)
            await again(early)
            await together(join(gone, mode), join(early, mode))
            await together(next_stage(gone), next_stage(early))
            await together(play_game(gone), play_game(early))
            await together(again(gone))
            assert await decline(gone) == code["screened_out"]
            _sent_to(gone, code["screened_out"])
            await early.page.locator("#to-survey").click()
            assert await survey_and_code(early) == code["early_exit"]
            _sent_to(early, code["early_exit"])

            # Declined before playing.
            nobody = await arrive(browser, base, "kit")
            assert await decline(nobody) == code["screened_out"]
            _sent_to(nobody, code["screened_out"])
            assert await nobody.page.context.cookies() == []
            await browser.close()
        export, people, rows, admin = _export(base)

    assert set(people) == {one.pid, two.pid, three.pid, early.pid}
    assert export["withdrawn_participants"] == 1
    for v in (one, two, three):
        assert people[v.pid]["study_end"] == {
            "end": "completion", "rounds_done": 2, "rounds_total": 2
        }  # fmt: skip
    assert people[early.pid]["study_end"]["end"] == "early_exit"
    assert people[early.pid]["study_end"]["rounds_done"] == 1
    played = {g["game"] for g in export["games"]}
    assert played == {*one.games, *two.games, *three.games}  # not the withdrawn one's game
    assert gone.games[0] not in {r["game"] for r in rows}
    assert [g["game"] for g in export["practice_games"]] == [early.games[0]]
    # A row per witness (a person and an AI in each game) for `turinglab report`.
    assert len(rows) == 6 and {r["game"] for r in rows} == played
    assert sorted(r["witness_type"] for r in rows) == ["ai"] * 3 + ["human"] * 3
    assert {r["interrogator_study_end"] for r in rows} == {"completion"}
    assert "early exit" in admin


async def test_a_lone_three_party_visitor_is_timed_out_with_its_code(tmp_path: Path) -> None:
    """Nobody else comes: at the study's longest wait the page goes to the survey (saying
    so) and the timed-out code, which the export keeps."""
    from playwright.async_api import async_playwright

    data = fast_study("arena_three_party_study.yaml", rounds=2, max_wait_s=3, witness_wait_s=3)
    code = codes(data)
    setup = setup_of(data, tmp_path)
    store = ArenaStore(Store(str(tmp_path / "arena.db")), setup)
    with running_arena(setup, store=store) as (base, _app):
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            alone = await arrive(browser, base, "lu")
            assert "3 seconds" in await alone.page.locator("#wait-limit").inner_text()
            await join(alone, "Three-party Turing test")
            assert await next_stage(alone, timeout_ms=30_000) == "survey"  # waits 3 s
            assert await alone.page.locator("#nomatch").is_visible()
            assert await survey_and_code(alone) == code["timed_out"]
            assert alone.thanks.startswith("Nobody was free to play with you in time")
            _sent_to(alone, code["timed_out"])
            await browser.close()
        _, people, _, admin = _export(base)
    assert people[alone.pid]["study_end"] == {
        "end": "timed_out", "rounds_done": 0, "rounds_total": 2
    }  # fmt: skip
    assert people[alone.pid]["recruitment"]["PROLIFIC_PID"] == alone.pid
    assert "timed out" in admin
