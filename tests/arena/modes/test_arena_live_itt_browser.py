"""The live integrative test in two real browsers (Debian's chromium through Playwright), set
up from a config as `turinglab serve` does: a judge and a human agent, each in their own
browser context, and a scripted AI that answers at once. Five exchanges, then the verdict
(choice, confidence, reason) and the reveal; the stored session must hold exactly what was
typed, and the human agent's page never shows an answer of the AI.

Screenshots (1280 and 390 px) go to $TURINGLAB_SCREENSHOTS when set, e.g. docs/screenshots.
"""

from __future__ import annotations

import os
from typing import Any

import pytest

from arena_fixtures import running_arena
from test_arena_strong_browser import ARGS, CHROMIUM, DESKTOP, XSS, _shoot, _write
from turinglab.arena.modes.setups import setup_from_config
from turinglab.config import parse_config

pytestmark = [
    pytest.mark.browser,
    pytest.mark.server,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="Debian chromium is not installed"),
]

AI = "murrow"
AI_ANSWERS = ["oh just pasta tonight", "rainy and grey here", "a bit tired honestly",
              "no pets, sadly", "the beach, probably"]  # fmt: skip
QUESTIONS = [
    "What did you have for dinner?",
    "How is the weather where you are?",
    "How are you feeling today?",
    "Do you have any pets?",
    "Mountains or the sea?",
]
ANSWERS = ["toast, I was lazy", XSS, "fine but sleepy", "a cat called Otto", "mountains!!"]
REASON = "B made a typo and used two exclamation marks"


def config_setup(condition: str) -> Any:
    return setup_from_config(
        parse_config(
            {
                "name": "live-browser",
                "agents": {AI: {"kind": "scripted", "replies": AI_ANSWERS, "cycle": True}},
                "experiment": {
                    "game": "live-itt",
                    "ai_agents": [AI],
                    "conditions": [condition],
                    "exchange_limits": [5],
                },
            }
        )
    )


def _enter(page: Any, base: str, errors: list[str]) -> None:
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(base + "/")
    page.locator("#consent").check()
    page.get_by_role("button", name="Live integrative test").click()


def test_live_itt_in_two_browsers() -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    with (
        running_arena(config_setup("deceitful-ai")) as (base, app),
        sync_api.sync_playwright() as p,
    ):
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        errors: list[str] = []
        pages = [browser.new_context(viewport=DESKTOP).new_page() for _ in range(2)]
        pages[0].goto(base + "/")
        # The lobby explains this game once the server's first status frame has arrived.
        pages[0].locator("#how-live-itt").wait_for(state="visible")
        assert pages[0].locator("#how-chat").is_hidden()
        _shoot(pages[0], "itt-lobby")
        for page in pages:
            _enter(page, base, errors)
        for page in pages:
            page.locator("#v-strong").wait_for(state="visible")
        judge, agent = pages if pages[0].locator("#s-role").inner_text() == "Judge" else pages[::-1]
        assert agent.locator("#s-role").inner_text() == "Human agent"
        assert "convince the judge that you are the human" in agent.locator(".s-brief").inner_text()
        assert "Turn 1 of 5" in judge.locator("#s-turn").inner_text()
        for page in pages:  # a study session is a round, shown as the chat games show it
            assert page.locator("#s-round").inner_text() == "Round 1 of 8"
        assert judge.locator(".s-brief").count() == 0
        assert judge.locator("#s-attach").is_hidden()  # text only
        _shoot(judge, "itt-judge-start")

        for n, (question, answer) in enumerate(zip(QUESTIONS, ANSWERS, strict=True), 1):
            _write(judge, question)
            turn = agent.locator(f'[data-turn="{n}"]')
            turn.wait_for()
            assert question in turn.inner_text() and "The judge asked" in turn.inner_text()
            if n == 2:
                _shoot(agent, "itt-agent-answering")
            _write(agent, answer)
            judge.locator(f'[data-turn="{n}"] .s-reply', has_text=answer).wait_for()
            if n == 1:
                assert "Turn 2 of 5" in judge.locator("#s-turn").inner_text()
                _shoot(judge, "itt-judge-turn")
        heads = judge.locator('[data-turn="5"] .s-reply header strong').all_inner_texts()
        assert heads == ["Agent A", "Agent B"]
        judge.locator(".s-verdict").wait_for()
        assert "Which of A and B is the human?" in judge.locator("#s-hint").inner_text()
        assert judge.locator(".s-author").count() == 0  # no names before the verdict
        assert agent.locator(".s-verdict").count() == 0
        mine = judge.locator('[data-turn="5"] .s-reply', has_text=ANSWERS[-1])
        human = "A" if mine.get_attribute("data-label") == "1" else "B"
        judge.locator("#s-confidence").fill("80")
        judge.locator("#s-reason").fill(REASON)
        _shoot(judge, "itt-verdict")
        judge.get_by_role("button", name=f"{human} is the human").click()

        judge.locator("#s-end-card").wait_for(state="visible")
        agent.locator("#s-end-card").wait_for(state="visible")
        outcome = judge.locator("#s-outcome-line").inner_text()
        assert outcome.startswith(f"The judge was right: {human} was the person")
        assert outcome.endswith(f"the AI ({AI}).")
        more = judge.locator("#s-outcome-more").inner_text()
        assert more.startswith("The AI was playing a person from an invented life story")
        assert agent.locator("#s-outcome-line").inner_text() == outcome
        assert agent.locator("#s-outcome-more").inner_text() == more
        assert judge.locator("#s-end-title").inner_text() == "Who was who"
        authors = judge.locator('[data-turn="5"] .s-author').all_inner_texts()
        assert sorted(authors) == sorted(["A person", f"An AI: {AI}"])
        _shoot(judge, "itt-end")
        _shoot(agent, "itt-agent-end")
        agent_text = agent.locator("body").inner_text()
        assert not any(a in agent_text for a in AI_ANSWERS)
        assert all(a in agent_text for a in ANSWERS)
        for page in pages:
            assert page.evaluate("window.__pwned") is None
        assert errors == []
        browser.close()

    (record,) = app.state.arena.finished
    params = record["trial"]["params"]
    said = {
        seat: [m["text"] for m in record["messages"] if m["sender"] == seat]
        for seat in ("judge", params["human_seat"], params["ai_seat"])
    }
    assert said == {
        "judge": QUESTIONS,
        params["human_seat"]: [a.strip() for a in ANSWERS],
        params["ai_seat"]: AI_ANSWERS,
    }
    (verdict,) = record["judgements"]
    assert verdict["verdict"] == params["human_seat"] and record["correct"] is True
    assert (verdict["confidence"], verdict["reason"]) == (80, REASON)
    assert verdict["details"] == {"condition": "deceitful-ai", "exchanges": 5}
