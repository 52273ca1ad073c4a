"""Access in Chromium (issue 31, item 7), phase by phase through the shipped three-party study:
at each new phase focus moves to the new content (not to <body>), screen readers are told
(aria-live), every message says who wrote it, the accessibility tree of each phase (Playwright's
aria snapshot) holds what a screen reader needs; no request of the page fails (the favicon
was a 404); the practice button is named once; the hand-off note counts down; required survey
questions are marked. Then the Strong Turing Test (focus after a send) and the GTT (speakers).

With $TURINGLAB_SCREENSHOTS set, each phase is saved at 1280 and 390 px (docs/screenshots).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest

from arena_fixtures import running_arena
from study_browser import (
    ARGS,
    CHROMIUM,
    DESKTOP,
    PHONE,
    Visitor,
    arrive,
    fast_study,
    handed_off,
    join,
    next_stage,
    setup_of,
    together,
)

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="Debian chromium is not installed"),
]

# Where focus is, in words a test can compare: an element's id, a chat box's alias, or the
# tag name (BODY when focus was dropped).
FOCUS = """() => {
  const a = document.activeElement;
  if (!a || a === document.body) return "BODY";
  return a.id || (a.dataset.input ? "input:" + a.dataset.input : a.tagName);
}"""


async def _focus_on(page: Any, expected: str) -> None:
    """Focus comes to `expected` (FOCUS's words), soon; it never stays on <body>."""
    try:
        await page.wait_for_function(f"() => ({FOCUS})() === {expected!r}", timeout=30_000)
    except Exception:
        raise AssertionError(f"focus is on {await page.evaluate(FOCUS)}, not {expected}") from None


async def _announced(page: Any, words: str) -> str:
    await page.wait_for_function(
        "w => document.getElementById('announcer').textContent.includes(w)", arg=words,
        timeout=30_000,
    )  # fmt: skip
    return str(await page.locator("#announcer").text_content())


async def _tree(page: Any, view: str) -> str:
    """The accessibility tree of what is on screen (the visible view), as YAML text."""
    return str(await page.locator(f"#{view}").aria_snapshot())


async def _shot(page: Any, name: str) -> None:
    where = os.environ.get("TURINGLAB_SCREENSHOTS")
    if not where:
        return
    Path(where).mkdir(parents=True, exist_ok=True)
    for label, size in (("1280", DESKTOP), ("390", PHONE)):
        await page.set_viewport_size(size)
        await page.wait_for_timeout(400)  # layout and smooth scrolls settle (a picture only)
        # From the top: a full-page picture of a scrolled page draws the sticky game bar
        # over the chats, where it never is on screen.
        await page.evaluate("window.scrollTo({ top: 0, behavior: 'instant' })")
        await page.screenshot(path=str(Path(where) / f"access-{name}-{label}.png"), full_page=True)
    await page.set_viewport_size(DESKTOP)


async def test_each_phase_of_a_study_takes_focus_and_is_announced(tmp_path: Path) -> None:
    from playwright.async_api import async_playwright

    data = fast_study("arena_three_party_study.yaml", rounds=2, max_wait_s=120, witness_wait_s=60)
    setup = setup_of(data, tmp_path)
    mode = "Three-party Turing test"
    with running_arena(setup) as (base, _app):
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            judge, witness = await together(arrive(browser, base, "j"), arrive(browser, base, "w"))
            page = judge.page

            # The lobby: the practice button is named once ("Practice"), its note describes it.
            assert await page.get_by_role("button", name="Practice", exact=True).count() == 1
            tree = await _tree(page, "v-lobby")
            assert 'button "Practice"' in tree and "PRACTICE" not in tree
            assert 'checkbox "I am 18 or older and agree to take part."' in tree
            await _shot(page, "lobby")

            # Waiting: the judge comes first; focus moves to the wait's heading.
            await join(judge, mode)
            await page.locator("#v-waiting").wait_for(state="visible")
            await _focus_on(page, "waiting-title")
            assert 'heading "Finding a partner…" [level=1]' in await _tree(page, "v-waiting")
            await _shot(page, "waiting")

            # The game starts: each person's focus is in their (first) message box.
            await join(witness, mode)
            await together(next_stage(judge), next_stage(witness))
            role = await page.locator("#role").inner_text()
            if "witness" in role:  # the one due first interrogates: usually the first to come
                judge, witness = witness, judge
                page = judge.page
            await _focus_on(page, "input:A")
            await _focus_on(witness.page, f"input:{await _alias(witness)}")
            tree = await _tree(page, "v-game")
            assert 'textbox "Message to Witness A"' in tree
            assert 'textbox "Message to Witness B"' in tree
            await _shot(page, "game-start")

            # Messages: the judge writes to both; the person answering is seen typing (a live
            # status), and every message in the log says who wrote it.
            for alias in ("A", "B"):
                await page.keyboard.type(f"hello {alias}, where are you from?", delay=2)
                await page.keyboard.press("Enter")
                await _focus_on(page, f"input:{alias}")  # still in the box after sending
                if alias == "A":
                    await page.locator('[data-input="B"]').focus()
            mine = await _alias(witness)  # their own chat (not the judge's letter for them)
            await witness.page.locator(f'[data-log="{mine}"] .msg.them').wait_for()
            await witness.page.keyboard.type("I'm from Leeds, you", delay=60)
            for typing in await page.locator("[data-typing]").all():
                assert await typing.get_attribute("role") == "status"
            await page.wait_for_function(
                "() => [...document.querySelectorAll('[data-typing]')].some("
                "t => /^Witness [AB] is typing…$/.test(t.textContent))", timeout=30_000,
            )  # fmt: skip
            await witness.page.keyboard.press("Enter")
            for alias in ("A", "B"):
                await page.locator(f'[data-log="{alias}"] .msg.them').wait_for()
            said = await page.locator(".log .msg").evaluate_all(
                "els => els.map(e => e.querySelector('.sr-only').textContent)"
            )
            assert sorted(said) == ["Witness A: ", "Witness B: ", "You: ", "You: "]
            person = page.locator(".log", has_text="I'm from Leeds, you")
            theirs = await person.get_attribute("data-log")
            tree = await _tree(page, "v-game")
            assert f'text: "Witness {theirs}: I\'m from Leeds, you"' in tree
            assert 'text: "You: hello A, where are you from?"' in tree
            wtree = await _tree(witness.page, "v-game")
            assert 'text: "Interrogator: hello' in wtree
            await _shot(page, "game-talk")
            await _shot(witness.page, "game-witness")

            # The verdict: the judge's focus on the form's heading, the form announced; the
            # witness told the talk is over.
            await page.locator("#end").click()
            await page.locator("#end").click()
            await _focus_on(page, "verdict-title")
            said = await _announced(page, "The conversation is over. Your verdict:")
            assert "Which witness is the human?" in said
            tree = await _tree(page, "v-game")
            assert 'form "Your verdict"' in tree and 'radio "Witness A is human"' in tree
            assert 'slider "How sure are you?' in tree
            await _focus_on(witness.page, "await-text")
            await _announced(witness.page, "Waiting for the interrogator's verdict")
            await _shot(page, "verdict")

            # The reveal: focus on it, and its content said.
            await page.locator('#choices input[value="A"]').check()
            await page.locator("#reason").fill("A answered like a person")
            await page.keyboard.press("Tab")  # keyboard only, from the reason to the button
            await page.keyboard.press("Enter")
            for v in (judge, witness):
                await _focus_on(v.page, "reveal-title")
                said = await _announced(v.page, "Who was who.")
                assert "A person." in said and "An AI: ELIZA." in said
            assert 'region "Who was who"' in await _tree(page, "v-game")
            await _shot(page, "reveal")

            # The survey: focus on its heading; the required question is marked so.
            await page.locator("#to-survey").click()
            await _focus_on(page, "survey-title")
            label = page.locator("label", has=page.locator('[name="birth_year"]'))
            assert "required" in (await label.locator(".req").inner_text()).lower()
            assert await label.locator(".req").get_attribute("aria-hidden") == "true"
            assert await page.locator('[name="birth_year"]').get_attribute("required") == ""
            tree = await _tree(page, "v-survey")
            assert 'spinbutton "Year of birth"' in tree  # named once: the mark is not read
            assert "Questions marked" in tree
            await _shot(page, "survey")

            # Thanks: focus on its heading; the code is a live status; the note counts down.
            await page.locator('[name="birth_year"]').fill("1990")
            await page.locator("#survey button[type=submit]").click()
            await _focus_on(page, "thanks-title")
            await page.locator("#handoff-code").wait_for(state="visible")
            assert await page.locator("#handoff-code").get_attribute("role") == "status"
            await _shot(page, "thanks")
            early_exit = data["arena"]["study"]["recruitment"]["early_exit"]["code"]
            assert await handed_off(judge) == early_exit  # one round of two played
            assert judge.notes[0] == "Taking you back in 3 seconds…" and len(judge.notes) >= 2
            for v in (judge, witness):
                assert v.errors == [] and v.failed == [], (v.errors, v.failed)  # no favicon 404
            await browser.close()


async def _alias(v: Visitor) -> str:
    return str(await v.page.locator("[data-input]").first.get_attribute("data-input"))


async def test_after_an_stt_send_focus_goes_to_the_turn_then_the_replies() -> None:
    from playwright.async_api import async_playwright

    from test_arena_strong import strong_setup

    with running_arena(strong_setup()) as (base, _app):
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            page = await (await browser.new_context(viewport=DESKTOP)).new_page()
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            await page.goto(base + "/")
            await page.locator("#consent").check()
            await page.get_by_role("button", name="STT practice: you investigate").click()
            await _focus_on(page, "s-text")  # the session starts with the judge's message
            await page.keyboard.type("What did you have for breakfast?", delay=2)
            await page.keyboard.press("Enter")
            # Sent: the form goes; focus goes to the turn, then to the replies once in.
            await page.locator(".s-replies").wait_for()
            await page.wait_for_function(
                "() => document.activeElement.classList.contains('s-replies')", timeout=30_000
            )
            tree = await _tree(page, "v-strong")
            assert 'group "Replies to turn 1"' in tree
            assert 'button "Prefer reply 1"' in tree
            await page.get_by_role("button", name="It's a tie").click()
            await _focus_on(page, "s-text")  # the next turn: back in the message box
            assert errors == []
            await browser.close()


async def test_every_gtt_message_says_who_wrote_it() -> None:
    from playwright.async_api import async_playwright

    from test_arena_gtt import gtt_setup

    with running_arena(gtt_setup()) as (base, _app):
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            page = await (await browser.new_context(viewport=DESKTOP)).new_page()
            await page.goto(base + "/")
            await page.locator("#consent").check()
            await page.get_by_role("button", name="GTT: you are the judge").click()
            for chat in ("study", "test"):
                box = page.locator(f'[data-gchat="{chat}"] textarea')
                await page.wait_for_function(
                    "c => document.querySelector(`[data-gchat=\"${c}\"] textarea`)?.disabled"
                    " === false", arg=chat, timeout=30_000,
                )  # fmt: skip
                await _focus_on(page, "TEXTAREA")  # in the message box of the chat now open
                await box.fill(f"Hello {chat}, what are you like?")
                await box.press("Enter")
                await page.locator(f'[data-gchat="{chat}"] .msg.them').first.wait_for()
                if chat == "study":
                    await page.get_by_role("button", name="Done studying").click()
            said = await page.locator(".g-chat .msg").evaluate_all(
                "els => els.map(e => e.querySelector('.sr-only')?.textContent)"
            )
            assert said[:2] == ["You: ", "Fresh copy: "] and said[-2:] == ["You: ", "X: "], said
            tree = await _tree(page, "v-gtt")
            assert 'text: "You: Hello test, what are you like?"' in tree
            assert 'text: "X:' in tree and 'text: "Fresh copy:' in tree

            watcher = await (await browser.new_context(viewport=DESKTOP)).new_page()
            await watcher.goto(base + "/")
            await watcher.locator("#consent").check()
            await watcher.get_by_role("button", name="GTT: watch two AIs").click()
            await watcher.locator("#g-end").wait_for(state="visible")
            await _focus_on(watcher, "g-end-title")
            tree = await _tree(watcher, "v-gtt")
            assert re.search(r'text: "Judge ?: \w', tree), tree  # "Judge: …", not "Judge…"
            await browser.close()
