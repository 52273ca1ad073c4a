"""Two people hold an ITT topic conversation in two real browsers (Debian's chromium through
Playwright), set up from a conversation config as `turinglab serve` does (open matching here,
so the two are paired at once). Four messages, A first; the page shows the topic, refuses a
message out of turn, shows the partner typing, and tells both who the partner was at the end;
the stored conversation holds exactly what was typed. The study has two rounds: after the
first the end card offers the next round and the exit survey; A's second is with a third
person (people who have met are not paired again), and after it only the survey is offered,
also after a reload.

Screenshots (1280 and 390 px) go to $TURINGLAB_SCREENSHOTS when set, e.g. docs/screenshots.
"""

from __future__ import annotations

import os
from typing import Any

import pytest

from arena_fixtures import running_arena
from test_arena_strong_browser import ARGS, CHROMIUM, DESKTOP, END_CARD_SIZES, XSS, _shoot
from turinglab.arena import ArenaSettings
from turinglab.arena.modes.itt_chat_mode import itt_chat_setup_for
from turinglab.config import parse_config

pytestmark = [
    pytest.mark.browser,
    pytest.mark.server,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="Debian chromium is not installed"),
]

LINES = [
    "hi! so, books — read anything good lately?",
    "just finished a mystery novel, could not put it down",
    XSS,
    "ha, sunny days are for reading outside anyway",
]


MORE = ["hello again, books it is", "a cookbook counts, right?", "of course it does", "bye!"]


def chat_setup() -> Any:
    config = parse_config(
        {
            "name": "people-talk",
            "agents": {"pat": {"kind": "scripted", "replies": ["hello"]}},
            "experiment": {
                "game": "conversation",
                "pairs": [["pat", "pat"]],
                "exchanges": len(LINES),
                "topics": ["books"],
            },
        }
    )
    # Open matching (two people, at once), never an AI partner; two rounds each, so that the
    # end card's last round comes after one that is not.
    settings = ArenaSettings(seed=2, ai_after_s=600, rounds=2)
    return itt_chat_setup_for(config.experiment, config.all_agents(), settings)  # type: ignore[arg-type]


def _say(page: Any, text: str) -> None:
    box = page.locator("#c-text")
    page.wait_for_function("() => !document.getElementById('c-text').readOnly")
    box.fill(text)
    box.press("Enter")


def _join(page: Any) -> None:
    page.locator("#consent").check()
    page.get_by_role("button", name="Chat about a topic").click()


def _ways_on(page: Any, *, last: bool) -> None:
    """The end card offers the next round and the exit, or after the last round the exit only."""
    assert page.locator("#c-survey").is_visible()
    assert page.locator("#c-survey").inner_text() == "Finish & exit survey"
    assert page.locator("#c-again").is_visible() is not last
    expect = "That was your last round (2 of 2)." if last else "Round 1 of 2 done."
    assert page.locator("#c-next").inner_text().startswith(expect)


def test_two_people_chat_about_a_topic_in_two_browsers() -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    with running_arena(chat_setup()) as (base, app), sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        errors: list[str] = []
        pages = [browser.new_context(viewport=DESKTOP).new_page() for _ in range(2)]
        for page in pages:
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(base + "/")
        # The lobby explains this game once the server's first status frame has arrived.
        pages[0].locator("#how-itt-chat").wait_for(state="visible")
        assert pages[0].locator("#how-chat").is_hidden()
        _shoot(pages[0], "lobby", prefix="itt-chat")
        for page in pages:
            _join(page)
        for page in pages:
            page.locator("#v-itt-chat").wait_for(state="visible")
            page.wait_for_function("() => document.activeElement.id === 'c-text'")  # focus
        a, b = pages if pages[0].locator("#c-role").inner_text() == "You are A" else pages[::-1]
        assert b.locator("#c-role").inner_text() == "You are B"
        for page in (a, b):  # a study conversation is a round, shown as in the chat games
            assert page.locator("#c-round").inner_text() == "Round 1 of 2"
        for page in (a, b):
            assert page.locator("#c-topic").inner_text().lower() == "topic: books"
            page.locator(".msg.game", has_text="Chat with your partner about books").wait_for()
        assert "You write first" in a.locator("#c-hint").inner_text()
        assert b.locator("#c-text").get_attribute("readonly") is not None  # B waits for A
        _shoot(b, "waiting", prefix="itt-chat")

        for n, text in enumerate(LINES):
            writer, reader = (a, b) if n % 2 == 0 else (b, a)
            if n == 1:
                writer.locator("#c-text").press_sequentially("just")
                reader.locator("#c-typing", has_text="Your partner is typing").wait_for()
                writer.locator("#c-text").fill("")
            _say(writer, text)
            reader.locator(".msg.them", has_text=text.split(">")[-1].strip()).wait_for()
            if n == 1:
                assert "Message 3 of 4" in a.locator("#c-count").inner_text()
                _shoot(a, "talking", prefix="itt-chat")

        for page in (a, b):
            page.locator("#c-end").wait_for(state="visible")
            assert page.locator("#c-outcome").inner_text() == "Your partner was a person."
            # Focus on the end, and the end announced (aria-live), for screen readers.
            page.wait_for_function("() => document.activeElement.id === 'c-end-title'")
            page.wait_for_function(
                "() => document.getElementById('announcer').textContent"
                " === 'The conversation is over. Your partner was a person.'"
            )
            _ways_on(page, last=False)  # round 1 of 2: the next round, or the exit
        assert LINES[0] in a.locator(".msg.you").all_inner_texts()[0]
        _shoot(a, "end", prefix="itt-chat")
        _shoot(a, "itt-round1", prefix="endcard", sizes=END_CARD_SIZES, card="#c-end")

        # Round 2: A has met B, so a third person (new to both) is A's partner; B stays out.
        a.locator("#c-again").click()
        a.locator("#v-lobby").wait_for(state="visible")
        c = browser.new_context(viewport=DESKTOP).new_page()
        c.on("pageerror", lambda e: errors.append(str(e)))
        c.goto(base + "/")
        for page in (a, c):
            _join(page)
        for page in (a, c):
            page.locator("#c-round").wait_for(state="visible")
        assert a.locator("#c-round").inner_text() == "Round 2 of 2"
        assert c.locator("#c-round").inner_text() == "Round 1 of 2"
        first, second = (a, c) if a.locator("#c-role").inner_text() == "You are A" else (c, a)
        for n, text in enumerate(MORE):
            writer, reader = (first, second) if n % 2 == 0 else (second, first)
            _say(writer, text)
            reader.locator(".msg.them", has_text=text).wait_for()
        for page in (a, c):
            page.locator("#c-end").wait_for(state="visible")
        _ways_on(c, last=False)  # the third person's first round
        _ways_on(a, last=True)  # A's last: only the exit survey
        _shoot(a, "itt-last", prefix="endcard", sizes=END_CARD_SIZES, card="#c-end")
        a.reload()  # the end card (and what it offers) comes back from the server
        a.locator("#c-end").wait_for(state="visible")
        _ways_on(a, last=True)

        # The exit survey speaks of conversations, not of interrogators (survey_wording.py).
        a.locator("#c-survey").click()
        survey = a.locator("#v-survey")
        survey.wait_for(state="visible")
        assert "all 2 rounds" in a.locator("#alldone").inner_text()
        assert "How did you go about your conversations?" in survey.inner_text()
        assert "interrogat" not in survey.inner_text().lower()
        _shoot(a, "itt-chat", prefix="survey")
        a.locator('[name="estimated_people"]').fill("1")
        a.locator("#survey button[type=submit]").click()
        a.locator("#v-thanks").wait_for(state="visible")
        for page in (*pages, c):
            assert page.evaluate("window.__pwned") is None
        assert errors == []
        browser.close()

    records = app.state.arena.finished
    assert [r["status"] for r in records] == ["finished", "finished"]
    assert all(r["trial"]["params"]["topic"] == "books" for r in records)
    said = [[m["text"] for m in r["messages"] if m["sender"] in ("A", "B")] for r in records]
    assert said == [LINES, MORE]
    (answered,) = [x for x in app.state.arena.export()["participants"] if x["survey"]]
    assert answered["survey"]["estimated_people"] == 1
