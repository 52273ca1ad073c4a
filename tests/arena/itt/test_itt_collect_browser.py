"""Collecting human responses in a real browser (Debian's chromium through Playwright) against
a real arena server started with a stimuli folder: a participant consents, is refused once
(the message names the rules, nothing is stored), then answers a picture and a word; the
stored rows are what was typed. The page is also checked at phone width.

Set TURINGLAB_SCREENSHOTS=<dir> (e.g. docs/screenshots) to save screenshots at both widths.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from arena_fixtures import running_arena
from judge_fixtures import stimuli_folder
from test_arena_judge_browser import ARGS, CHROMIUM, DESKTOP, PHONE, shot
from turinglab.arena.itt.collect_store import HUMAN_RESPONSES, PARTICIPANTS, CollectStore
from turinglab.itt.dataset import load_dataset

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="Debian chromium is not installed"),
]
CAPTION = "Soft green grass covers the wide empty field"


def wait_for_trial(page: Any, number: int) -> str:
    page.wait_for_function(
        "n => document.querySelector('#progress-text').textContent.startsWith(n + ' of')",
        arg=number,
    )
    return "captioning" if page.locator("#stimulus img").count() else "word-association"


def saved(folder: Path) -> list[Any]:
    records = (folder / PARTICIPANTS).glob("*.json")
    return [a for r in records for a in json.loads(r.read_text())["answers"]]


@pytest.mark.parametrize("size", [DESKTOP, PHONE], ids=["1280", "390"])
def test_participant_answers_a_picture_and_a_word(tmp_path: Path, size: dict[str, int]) -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    width = size["width"]
    folder = stimuli_folder(tmp_path / "study", cues=("ocean",))
    store = CollectStore.open(folder, seed=1)
    with running_arena(collecting=store) as (base, _), sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(viewport=size)
        requests: list[str] = []
        errors: list[str] = []
        page.on("request", lambda r: requests.append(r.url))
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(base + "/respond")
        page.locator("#v-start").wait_for()
        shot(page, f"respond-start-{width}")
        page.locator("#start").click()
        page.locator("#start-error", has_text="consent").wait_for()
        page.locator("#consent").check()
        page.locator("#start").click()
        typed = {}
        for n in (1, 2):
            task = wait_for_trial(page, n)
            shown = time.monotonic()
            before = saved(folder)
            box = page.locator("#answer")
            if task == "captioning":
                page.locator("#stimulus img").evaluate("i => i.decode()")
                shot(page, f"respond-picture-{width}")
                box.fill("A photo of grass")  # at once: too fast, too short, names the medium
                page.locator("#submit").click()
                page.locator("#violations").wait_for()
                messages = page.locator("#violations-list li").all_inner_texts()
                assert any("at least 6 words" in m for m in messages), messages
                assert any("more than 4 s" in m for m in messages), messages
                assert any("not the photo" in m for m in messages), messages
                shot(page, f"respond-refused-{width}")
                assert saved(folder) == before, "a refused caption was stored"
                assert box.input_value() == "A photo of grass"  # kept for editing
                time.sleep(max(0.0, 4.3 - (time.monotonic() - shown)))
                text = CAPTION
            else:
                assert page.locator(".cue").inner_text() == "ocean"
                shot(page, f"respond-word-{width}")
                text = "Waves"
            box.fill(text)
            box.press("Enter")
            typed[task] = text
            scroll = page.evaluate("document.documentElement.scrollWidth")
            assert scroll <= width, f"page scrolls sideways: {scroll}px"
        page.locator("#v-done").wait_for()
        page.wait_for_function(  # the bar fills (after its short transition)
            "() => document.querySelector('#progress-fill').getBoundingClientRect().width"
            " === document.querySelector('.bar').getBoundingClientRect().width"
        )
        shot(page, f"respond-done-{width}")
        assert errors == []
        assert all(u.startswith(base) for u in requests), requests
        browser.close()

    rows = {r.task: r for r in load_dataset(folder / HUMAN_RESPONSES)}
    assert {t: r.model_extra["raw"] for t, r in rows.items()} == typed  # type: ignore[index]
    assert rows["captioning"].text == CAPTION and rows["word-association"].text == "wave"
    assert sorted(a["typed"] for a in saved(folder)) == sorted(typed.values())


@pytest.mark.parametrize("size", [DESKTOP, PHONE], ids=["1280", "390"])
def test_participant_picks_a_colour_and_names_three_objects(
    tmp_path: Path, size: dict[str, int]
) -> None:
    """The paper's two image tasks people answer too: the dominant colour from its list of 11,
    and three things seen, one word each (refused until they are three distinct words)."""
    sync_api = pytest.importorskip("playwright.sync_api")
    from test_itt_vision import vision_stimuli

    width = size["width"]
    answers = {}
    for task in ("color-estimation", "object-detection"):
        folder = tmp_path / task
        store = CollectStore.open(vision_stimuli(folder, task), seed=1, batch_size=1)
        with running_arena(collecting=store) as (base, _), sync_api.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            page = browser.new_page(viewport=size)
            errors: list[str] = []
            page.on("pageerror", lambda e, seen=errors: seen.append(str(e)))
            page.goto(base + "/respond")
            page.locator("#consent").check()
            page.locator("#start").click()
            wait_for_trial(page, 1)
            page.locator("#stimulus img").evaluate("i => i.decode()")
            if task == "color-estimation":
                assert page.locator("#answer").is_hidden()
                options = page.locator("#choice option").all_inner_texts()
                assert len(options) == 12 and "gray" in options  # a prompt, then the 11
                page.locator("#choice").select_option("blue")
                shot(page, f"respond-colour-{width}")
            else:
                assert page.locator("#choice").is_hidden()
                page.locator("#answer").fill("dog, dog")
                page.locator("#submit").click()
                page.locator("#violations").wait_for()
                assert saved(folder) == []
                page.locator("#answer").fill("Dog, frisbee, grass")
                shot(page, f"respond-objects-{width}")
            page.locator("#submit").click()
            page.locator("#v-done").wait_for()
            assert errors == []
            browser.close()
        (row,) = load_dataset(folder / HUMAN_RESPONSES)
        answers[task] = row.text
    assert answers == {"color-estimation": "blue", "object-detection": "dog, frisbee, grass"}
