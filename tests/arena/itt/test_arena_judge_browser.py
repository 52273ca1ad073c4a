"""ITT judging in a real browser (Debian's chromium through Playwright) against a real server.

At desktop width a judge consents, fills the form and labels a whole conversation batch —
half with the mouse, half with the keyboard — answering every control question; what the
server logged must be exactly what was clicked, and a `<script>` message is shown as text and
never run. At phone width a judge labels an image batch with captions and an animated scanpath;
the page must not scroll sideways. No request may leave the server.

Set TURINGLAB_SCREENSHOTS=<dir> (e.g. docs/screenshots) to save screenshots at both widths.
"""

from __future__ import annotations

import contextlib
import csv
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arena_fixtures import serving_in_thread
from judge_fixtures import ADMIN_PASSWORD, XSS, conversation_study, image_study
from turinglab.arena.itt.judging import create_judging_app
from turinglab.arena.itt.judging_store import LOG

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]
DESKTOP = {"width": 1280, "height": 860}
PHONE = {"width": 390, "height": 844}

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="Debian chromium is not installed"),
]


@contextlib.contextmanager
def serving(folder: Path, batch_size: int) -> Iterator[str]:
    app = create_judging_app(folder, admin_password=ADMIN_PASSWORD, batch_size=batch_size, seed=7)
    with serving_in_thread(app) as base:
        yield base


def shot(page: Any, name: str) -> None:
    where = os.environ.get("TURINGLAB_SCREENSHOTS")
    if where:
        Path(where).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(where) / f"{name}.png"), full_page=True)


def open_page(browser: Any, base: str, size: dict[str, int]) -> tuple[Any, list[str], list[str]]:
    page = browser.new_page(viewport=size)
    requests: list[str] = []
    errors: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(base + "/judge")
    page.locator("#v-start").wait_for()
    return page, requests, errors


def register(page: Any) -> None:
    page.locator("#start").click()
    page.locator("#start-error", has_text="consent").wait_for()  # refused without consent
    page.locator("#consent").check()
    page.locator("#age").fill("41")
    page.locator("#gender").select_option("male")
    page.locator("#education").select_option("bachelor")
    page.locator("#english").select_option("native")
    page.locator("#start").click()
    page.locator("#v-trial").wait_for()


def wait_for_trial(page: Any, number: int) -> None:
    page.wait_for_function(
        "n => document.querySelector('#progress-text').textContent.startsWith(n + ' of')",
        arg=number,
    )


def test_judge_labels_a_conversation_batch(tmp_path: Path) -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    folder = conversation_study(tmp_path / "study")
    with serving(folder, 8) as base, sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page, requests, errors = open_page(browser, base, DESKTOP)
        shot(page, "judge-start-1280")
        register(page)
        clicked = []
        saw_script_text = False
        for n in range(8):
            wait_for_trial(page, n + 1)
            bubbles = page.locator(".msg .text").all_inner_texts()
            saw_script_text |= XSS in bubbles
            topic = next(w for w in ("music", "sports", "books", "science") if any(
                w in b for b in bubbles))  # fmt: skip
            label = "M" if n % 3 == 0 else "H"
            if n == 0:
                shot(page, "judge-conversation-1280")
                said = page.get_by_role("list", name="Conversation").get_by_role("listitem")
                spoken = said.all_text_contents()  # what a screen reader reads of each
                assert spoken and all(re.match(r"Speaker [A-Z]( \(judged\))?: ", t) for t in spoken)
                judged = {t.split(" ")[1] for t in spoken if "(judged)" in t}
                assert len(judged) == 1 and f"speaker {judged.pop()} " in page.inner_text(
                    "#question"
                )
            if n % 2:  # keyboard: H/M, then the option's number
                page.keyboard.press(label.lower())
                page.locator("#control").wait_for()
                options = page.locator("#control-options button").all_inner_texts()
                number = next(i for i, o in enumerate(options, 1) if o.endswith(" " + topic))
                page.keyboard.press(str(number))
            else:
                page.locator(f'.choice[data-label="{label}"]').click()
                if n == 0:
                    shot(page, "judge-control-1280")
                page.locator("#control-options button", has_text=topic).click()
            clicked.append((n, label, topic))
        page.locator("#v-done").wait_for()
        shot(page, "judge-done-1280")
        assert saw_script_text, "the <script> message was not shown as text"
        assert page.evaluate("window.__pwned") is None
        assert errors == []
        assert all(u.startswith(base) for u in requests), requests
        browser.close()

    events = [json.loads(line) for line in (folder / LOG).read_text().splitlines()]
    assert events[0]["demographics"] == {
        "age": 41, "gender": "male", "education": "bachelor", "english": "native",
    }  # fmt: skip
    assert [(e["position"], e["label"], e["control"]) for e in events[1:]] == clicked
    rows = (folder / "judgements-human.csv").read_text().splitlines()
    assert len(rows) == 9  # header + 8: every control answered right, nobody excluded
    # the page measured each answer's time; the file carries it as rt (seconds)
    with (folder / "judgements-human.csv").open() as fh:
        times = [float(r["rt"]) for r in csv.DictReader(fh)]
    assert all(t > 0 for t in times)
    assert [round(e["ms"] / 1000, 3) for e in events[1:]] == times


def test_phone_width_image_batch_with_scanpath(tmp_path: Path) -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    folder = image_study(tmp_path / "study")
    with serving(folder, 4) as base, sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page, requests, errors = open_page(browser, base, PHONE)
        shot(page, "judge-start-390")
        register(page)
        kinds = []
        for n in range(4):
            wait_for_trial(page, n + 1)
            page.locator("#stimulus img").evaluate("i => i.decode()")
            if page.locator(".scanpath").count():
                kinds.append("scanpath")
                page.wait_for_function(
                    "() => document.querySelectorAll('.fixations circle').length == 3"
                )
                if "scanpath" not in kinds[:-1]:
                    shot(page, "judge-scanpath-390")
            else:
                kinds.append("text")
                if "text" not in kinds[:-1]:
                    shot(page, "judge-caption-390")
            width = page.evaluate("document.documentElement.scrollWidth")
            assert width <= PHONE["width"], f"page scrolls sideways at trial {n}: {width}px"
            page.locator('.choice[data-label="H"]').click()
            page.locator("#control-options button", has_text="true").click()
        page.locator("#v-done").wait_for()
        assert "scanpath" in kinds and errors == []
        assert all(u.startswith(base) for u in requests), requests
        browser.close()
