"""The Strong Turing Test in two real browsers (Debian's chromium through Playwright): a person
investigates with an image attached, a person answers, the AI system is an OpenAI-compatible
agent on the fake server (which says what image it received). A tie, then a preference; the
stored judgements must equal the clicks, and nothing names a side before the end.

Screenshots (1280 and 390 px) go to $TURINGLAB_SCREENSHOTS when set, e.g. docs/screenshots.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from arena_fixtures import running_arena
from test_arena_strong import SECRETS, SYSTEM_AGENT, strong_setup
from turinglab.agents.openai_compat import OpenAIChatAgent
from turinglab.arena.uploads import reencoded
from turinglab.testing.fake_openai import start_fake_server_process

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]
DESKTOP = {"width": 1280, "height": 860}
PHONE = {"width": 390, "height": 844}
XSS = "<img src=x onerror=window.__pwned=1> sunny"

pytestmark = [
    pytest.mark.browser,
    pytest.mark.server,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="Debian chromium is not installed"),
]


def _shoot(page: Any, name: str, prefix: str = "strong") -> None:
    where = os.environ.get("TURINGLAB_SCREENSHOTS")
    if not where:
        return
    Path(where).mkdir(parents=True, exist_ok=True)
    for label, size in (("1280", DESKTOP), ("390", PHONE)):
        page.set_viewport_size(size)
        page.wait_for_timeout(150)
        page.screenshot(path=str(Path(where) / f"{prefix}-{name}-{label}.png"), full_page=True)
    page.set_viewport_size(DESKTOP)


def _enter(page: Any, base: str, errors: list[str]) -> None:
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(base + "/")
    page.locator("#consent").check()
    page.get_by_role("button", name="Strong Turing Test").first.click()


def _write(page: Any, text: str) -> None:
    page.locator("#s-compose").wait_for(state="visible")
    page.locator("#s-text").fill(text)
    page.locator("#s-text").press("Enter")


def test_stt_session_in_two_browsers(tmp_path: Path) -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    picture = tmp_path / "red-square.png"
    Image.new("RGB", (120, 80), (210, 30, 30)).save(picture, format="PNG")
    size = len(reencoded(picture.read_bytes()).data)  # what the arena keeps and sends on
    fetched: list[str] = []
    frames: list[tuple[str, dict[str, Any]]] = []

    with start_fake_server_process() as fake:
        system = OpenAIChatAgent(name=SYSTEM_AGENT, base_url=fake.base_url, model="fake-vision")
        setup = strong_setup(system)
        with (
            running_arena(setup, frame_log=lambda who, f: frames.append((who, f))) as (base, app),
            sync_api.sync_playwright() as p,
        ):
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            errors: list[str] = []
            one = browser.new_context(viewport=DESKTOP).new_page()
            two = browser.new_context(viewport=DESKTOP).new_page()
            for page in (one, two):
                page.on("request", lambda r: fetched.append(r.url) if "/media/" in r.url else None)
            _enter(one, base, errors)
            _enter(two, base, errors)
            for page in (one, two):
                page.locator("#v-strong").wait_for(state="visible")
            inv, resp = (
                (one, two) if one.locator("#s-role").inner_text() == "Investigator" else (two, one)
            )
            assert resp.locator("#s-role").inner_text() == "Respondent"
            for page in (inv, resp):  # a study session is a round (8 by default)
                assert page.locator("#s-round").inner_text() == "Round 1 of 8"
            assert resp.locator("#s-attach").is_hidden()

            # Turn 1: text and an image; the respondent sees the image inline; a tie.
            inv.locator("#s-image").set_input_files(str(picture))
            inv.locator("#s-preview img").wait_for()
            _write(inv, "What is in this picture?")
            shown = resp.locator('[data-turn="1"] img.s-image')
            shown.wait_for()
            assert shown.get_attribute("src").startswith("/arena/media/")
            assert shown.evaluate("img => img.decode().then(() => img.naturalWidth)") == 120
            _write(resp, XSS)
            inv.locator('[data-turn="1"] .s-reply').nth(1).wait_for()
            texts = inv.locator('[data-turn="1"] .s-reply .s-text').all_inner_texts()
            assert sorted(texts) == sorted([XSS, f"I see an image/png image of {size} bytes."])
            assert inv.locator(".s-author").count() == 0
            _shoot(inv, "choosing")
            inv.get_by_role("button", name="It's a tie").click()
            resp.locator('[data-turn="1"] .s-outcome', has_text="tie").wait_for()
            assert resp.locator('[data-turn="1"] .s-reply').count() == 2
            _shoot(resp, "respondent")

            # Turn 2: the investigator prefers the person's reply, then ends the session.
            _write(inv, "Tell me about your morning.")
            resp.locator('[data-turn="2"]').wait_for()
            _write(resp, "overslept, then coffee")
            person = inv.locator('[data-turn="2"] .s-reply', has_text="overslept, then coffee")
            person.wait_for()
            label = int(person.get_attribute("data-label"))
            person.get_by_role("button").click()
            inv.locator("#s-end").wait_for(state="visible")
            inv.locator("#s-end").click()
            inv.locator("#s-end").click()
            inv.locator("#s-end-card").wait_for(state="visible")
            resp.locator("#s-end-card").wait_for(state="visible")
            assert "Zorblax (scripted)" in inv.locator("#s-scores").inner_text()
            assert "win rate 75%" in resp.locator("#s-scores").inner_text()
            _shoot(inv, "end")
            assert inv.evaluate("window.__pwned") is None
            assert resp.evaluate("window.__pwned") is None
            assert errors == []
            browser.close()
        # Each browser fetched the image once, however many state frames named it.
        assert len(fetched) == 2 and len(set(fetched)) == 1, fetched
        assert not any("base64" in json.dumps(f) for _, f in frames)

        (record,) = app.state.arena.finished
        prefs = [j for j in record["judgements"] if j["kind"] == "preference"]
        assert [(j["turn"], j["tie"], j["choice"]) for j in prefs] == [
            (1, True, None),
            (2, False, "human_1"),
        ]
        assert prefs[1]["details"]["label"] == str(label)
        # The leak check over every frame either browser received before the end.
        for who in {w for w, _ in frames}:
            mine = [f for w, f in frames if w == who]
            cut = next(i for i, f in enumerate(mine) if f.get("phase") == "ended")
            early = json.dumps(mine[:cut])
            for secret in (*SECRETS, "fake-vision"):
                assert secret not in early, secret
