"""The Strong Turing Test in two real browsers (Debian's chromium through Playwright): a person
investigates with an image attached, a person answers, the AI system is an OpenAI-compatible
agent on the fake server (which says what image it received). A tie, then a preference; the
stored judgements must equal the clicks, and nothing names a side before the end. Two rounds:
the end card after the first offers another game and the exit survey; the investigator's
second round (answering a third person) ends with the survey only, also after a reload.

Screenshots (1280 and 390 px) go to $TURINGLAB_SCREENSHOTS when set, e.g. docs/screenshots.
"""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from arena_fixtures import running_arena
from test_arena_strong import SECRETS, SYSTEM_AGENT, strong_setup
from turinglab.agents.openai_compat import OpenAIChatAgent
from turinglab.arena.web.uploads import reencoded
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


# End cards are shot as a person sees them when they appear (the viewport, the card scrolled
# into sight), at a laptop's and a phone's size.
END_CARD_SIZES = (("1280", {"width": 1280, "height": 800}), ("390", PHONE))


def _shoot(
    page: Any, name: str, prefix: str = "strong", sizes: Any = None, card: str | None = None
) -> None:
    """Full-page shots at 1280 and 390 px; with `card`, viewport shots with it in sight."""
    where = os.environ.get("TURINGLAB_SCREENSHOTS")
    if not where:
        return
    Path(where).mkdir(parents=True, exist_ok=True)
    for label, size in sizes or (("1280", DESKTOP), ("390", PHONE)):
        page.set_viewport_size(size)
        page.wait_for_timeout(150)
        if card is not None:
            page.locator(card).scroll_into_view_if_needed()
            page.wait_for_timeout(400)  # the page's own smooth scroll settles first
        shot = str(Path(where) / f"{prefix}-{name}-{label}.png")
        page.screenshot(path=shot, full_page=card is None)
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


def _ways_on(page: Any, *, last: bool) -> None:
    """The end card offers another game and the exit, or after the last round the exit only."""
    assert page.locator("#s-survey").is_visible()
    assert page.locator("#s-again").is_visible() is not last


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
        # Two rounds each, so that the end card's last round comes after one that is not;
        # never a stand-in for a person who waits (the third person joins second).
        more = {"rounds": 2, "ai_after_s": 600, "max_wait_s": 600}
        setup = replace(setup, settings=setup.settings.model_copy(update=more))
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
            for page in (inv, resp):  # a study session is a round
                assert page.locator("#s-round").inner_text() == "Round 1 of 2"
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
            for page in (inv, resp):
                _ways_on(page, last=False)  # round 1 of 2: another game, or the exit
            _shoot(inv, "stt-round1", prefix="endcard", sizes=END_CARD_SIZES, card="#s-end-card")

            # Round 2: the investigator has met the respondent, so a third person (new to
            # both) investigates them; the respondent of round 1 stays out.
            inv.locator("#s-again").click()
            inv.locator("#v-lobby").wait_for(state="visible")
            inv.get_by_role("button", name="Strong Turing Test").first.click()
            third = browser.new_context(viewport=DESKTOP).new_page()
            _enter(third, base, errors)
            for page in (inv, third):
                page.locator("#v-strong").wait_for(state="visible")
            assert third.locator("#s-role").inner_text() == "Investigator"
            assert inv.locator("#s-role").inner_text() == "Respondent"
            assert inv.locator("#s-round").inner_text() == "Round 2 of 2"
            assert third.locator("#s-round").inner_text() == "Round 1 of 2"
            _write(third, "What did you have for lunch?")
            _write(inv, "soup, it was cold out")
            third.locator('[data-turn="1"] .s-reply').nth(1).wait_for()
            third.get_by_role("button", name="It's a tie").click()
            third.locator("#s-end").wait_for(state="visible")
            third.locator("#s-end").click()
            third.locator("#s-end").click()
            for page in (inv, third):
                page.locator("#s-end-card").wait_for(state="visible")
            _ways_on(third, last=False)  # the third person's first round
            _ways_on(inv, last=True)  # the last: only the exit survey
            _shoot(inv, "stt-last", prefix="endcard", sizes=END_CARD_SIZES, card="#s-end-card")
            inv.reload()  # the end card (and what it offers) comes back from the server
            inv.locator("#s-end-card").wait_for(state="visible")
            _ways_on(inv, last=True)
            inv.locator("#s-survey").click()
            inv.locator("#v-survey").wait_for(state="visible")
            assert "all 2 rounds" in inv.locator("#alldone").inner_text()
            for page in (inv, resp, third):
                assert page.evaluate("window.__pwned") is None
            assert errors == []
            browser.close()
        # Each browser fetched the image once, however many state frames named it.
        assert len(fetched) == 2 and len(set(fetched)) == 1, fetched
        assert not any("base64" in json.dumps(f) for _, f in frames)

        record, again = app.state.arena.finished
        assert [j["tie"] for j in again["judgements"] if j["kind"] == "preference"] == [True]
        prefs = [j for j in record["judgements"] if j["kind"] == "preference"]
        assert [(j["turn"], j["tie"], j["choice"]) for j in prefs] == [
            (1, True, None),
            (2, False, "human_1"),
        ]
        assert prefs[1]["details"]["label"] == str(label)
        # The leak check over every frame each browser received in a game before its end.
        for who, game in {(w, f.get("game")) for w, f in frames}:
            mine = [f for w, f in frames if w == who and f.get("game") == game]
            cut = next((i for i, f in enumerate(mine) if f.get("phase") == "ended"), len(mine))
            early = json.dumps(mine[:cut])
            for secret in (*SECRETS, "fake-vision"):
                assert secret not in early, secret
