"""The built-in exit survey speaks of the roles of the study's game (survey_wording.py): the
page each shipped config serves asks about interrogators only in the interrogation games, the
hub accepts the answers to the questions that page asked (and no others), and a study's own
questions are shown exactly as configured."""

from __future__ import annotations

import re
from pathlib import Path

import aiohttp
import pytest

from arena_fixtures import Person, running_arena
from turinglab.arena.modes.setups import setup_from_config
from turinglab.config import load_config, parse_config

pytestmark = pytest.mark.server

CONFIGS = Path(__file__).resolve().parents[3] / "configs"
# config -> a phrase its survey must show; only the interrogation games speak of interrogators
WORDING = {
    "three-party-offline": "strategy as interrogator",
    "two-party-offline": "strategy as interrogator",
    "strong-offline": "strategy as investigator, or as respondent",
    "live-itt": "strategy as judge, or as answerer",
    "itt-conversations": "How did you go about your conversations?",
    "gtt-offline": "What was your strategy?",
}


def _survey_form(page: str) -> str:
    form = page[page.index('<form id="survey"') :]
    return form[: form.index("</form>")]


@pytest.mark.parametrize("name", sorted(WORDING))
async def test_the_served_survey_speaks_of_the_games_roles(name: str) -> None:
    setup = setup_from_config(load_config(CONFIGS / f"{name}.yaml"))
    with running_arena(setup) as (base, _app):
        async with aiohttp.ClientSession() as s, s.get(base + "/") as r:
            form = _survey_form(await r.text())
    assert WORDING[name] in form
    interrogation = name.startswith(("three-party", "two-party"))
    assert ("interrogat" in form.lower()) is interrogation
    keys = set(re.findall(r'name="([a-z_]+)"', form))
    # A count that means something else after a conversation gets its own column.
    assert ("estimated_people" in keys) is (name == "itt-conversations")
    assert ("estimated_correct" in keys) is (name != "itt-conversations")


async def test_the_hub_checks_answers_against_the_questions_the_page_asked() -> None:
    setup = setup_from_config(load_config(CONFIGS / "itt-conversations.yaml"))
    with running_arena(setup) as (base, app):
        p = Person(base)
        await p.connect()
        await p.send(type="survey", answers={"estimated_correct": "3"})  # not asked here
        err = await p.until("error")
        assert err["code"] == "bad-survey" and "estimated_correct" in err["message"]
        await p.send(type="survey", answers={"estimated_people": "3", "strategy": "chatty"})
        assert (await p.until("status"))["state"] == "survey-saved"
        (mine,) = [x for x in app.state.arena.export()["participants"] if x["survey"]]
        assert mine["survey"] == {"estimated_people": 3, "strategy": "chatty"}
        await p.close()


async def test_a_studys_own_questions_are_untouched_in_any_game() -> None:
    raw = load_config(CONFIGS / "strong-offline.yaml").model_dump(mode="json", exclude_unset=True)
    own = [{"kind": "text", "key": "strategy", "label": "What was your strategy as interrogator?"}]
    raw["arena"] = {**(raw.get("arena") or {}), "study": {"survey": own}}
    setup = setup_from_config(parse_config(raw))
    with running_arena(setup) as (base, _app):
        async with aiohttp.ClientSession() as s, s.get(base + "/") as r:
            form = _survey_form(await r.text())
    assert re.findall(r'name="([a-z_]+)"', form) == ["strategy"]
    assert "What was your strategy as interrogator?" in form
