"""A study config's `arena:` section: validated with errors that name the field, applied to the
arena's settings, rendered into the page safely (Markdown with raw HTML escaped), and its
survey's types and age bounds enforced by the server."""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from arena_fixtures import make_setup
from turinglab.arena.core.study_config import (
    StudyConfig,
    SurveyProblem,
    check_answers,
    recruitment_ids,
)
from turinglab.arena.modes.setups import setup_from_config
from turinglab.arena.web.page_routes import STATIC
from turinglab.arena.web.study_page import render_page
from turinglab.config import load_config, parse_config

CONFIG = Path(__file__).parents[3] / "configs" / "arena_study.yaml"
TEMPLATE = (STATIC / "index.html").read_text()


def _config(arena: dict[str, Any]) -> Any:
    return parse_config(
        {
            "name": "s",
            "experiment": {
                "game": "two-party",
                "interrogators": ["eliza"],
                "ai_witnesses": [{"agent": "eliza", "persona": "none"}],
            },
            "arena": arena,
        }
    )


def test_the_example_study_sets_rounds_design_limits_and_pages() -> None:
    setup = setup_from_config(load_config(CONFIG))
    s = setup.settings
    assert (s.rounds, s.takeover_after_s, s.frames_per_s, s.frame_burst) == (4, 10, 4, 12)
    assert s.design is not None and s.design.wait_max_s == 45
    assert s.study.min_age == 18 and "birth_year" in s.study.survey_keys
    assert s.study.recruitment.completion.code == "C1A2B3C4"


def test_errors_name_the_field() -> None:
    bad = {"study": {"survey": [{"key": "q", "kind": "slider", "label": "?"}]}}
    with pytest.raises(ValueError, match=r"arena\.study\.survey\.0"):
        setup_from_config(_config(bad))
    with pytest.raises(ValueError, match=r"arena\.rounds"):
        setup_from_config(_config({"rounds": 0}))
    twice = [{"key": "a", "kind": "text", "label": "A"}, {"key": "a", "kind": "text", "label": "B"}]
    with pytest.raises(ValueError, match="used twice"):
        setup_from_config(_config({"study": {"survey": twice}}))
    url = {"recruitment": {"completion": {"url": "javascript:alert(1)"}}}
    with pytest.raises(ValueError, match="http"):
        setup_from_config(_config({"study": url}))


def test_without_an_arena_section_the_built_in_texts_stay() -> None:
    page = render_page(TEMPLATE, make_setup(), False).decode()
    assert "Can you tell a person from a machine?" in page
    assert "never your name or address" in page and "I am 18 or older" in page
    for marker in ("<!--study:", "<!--consent:", "<!--survey:"):
        assert marker not in page  # every placeholder filled


def test_consent_markdown_is_rendered_with_raw_html_escaped() -> None:
    evil = "**Hello** <script>alert(1)</script> [x](javascript:alert(1)) </script><b>"
    setup = make_setup(study={"consent": evil, "title": "<i>t</i>", "pay": "£1 <img src=x>"})
    page = render_page(TEMPLATE, setup, False).decode()
    body = page.split("<body>", 1)[1]
    assert "<strong>Hello</strong>" in body
    assert "<script>alert(1)" not in body and "&lt;script&gt;" in body
    assert 'href="javascript' not in body and "<img src=x>" not in body
    assert "&lt;i&gt;t&lt;/i&gt;" in body
    data = page.split('id="study-data">', 1)[1].split("</script>", 1)[0]
    assert "<" not in data  # nothing in the data block can close it


def test_survey_answers_are_checked_by_type_and_age() -> None:
    study = StudyConfig.model_validate(
        {
            "min_age": 21,
            "survey": [
                {"key": "birth_year", "kind": "birth-year", "label": "Born", "required": True},
                {"key": "use", "kind": "choice", "label": "Use", "options": ["Never", "Daily"]},
                {"key": "score", "kind": "scale", "label": "Score", "min": 1, "max": 7},
                {"key": "why", "kind": "text", "label": "Why", "max_chars": 10},
            ],
        }
    )
    latest = datetime.date.today().year - 21
    kept = check_answers(study, {"birth_year": str(latest), "use": "Daily", "score": "7"})
    assert kept == {"birth_year": latest, "use": "Daily", "score": 7}
    for answers, problem in [
        ({"birth_year": str(latest + 1)}, "between"),  # younger than the consent allows
        ({"birth_year": "1990", "use": "Hourly"}, "not one of"),
        ({"birth_year": "1990", "score": "8"}, "between"),
        ({"birth_year": "1990", "why": "x" * 11}, "over 10"),
        ({"birth_year": "1990", "admin": "yes"}, "Unknown"),
        ({"use": "Daily"}, "Please answer"),
    ]:
        with pytest.raises(SurveyProblem, match=problem):
            check_answers(study, answers)
    page = render_page(TEMPLATE, make_setup(study=study.model_dump()), False).decode()
    assert f'name="birth_year" type="number" min="1900" max="{latest}" required' in page
    assert "I am 21 or older" in page


def test_recruitment_ids_keep_known_parameters_with_plain_values() -> None:
    given = {"PROLIFIC_PID": "5f8e1c", "STUDY_ID": "a b", "pid": "x" * 65, "other": "1"}
    assert recruitment_ids(given) == {"PROLIFIC_PID": "5f8e1c"}
    assert recruitment_ids("nope") == {}


def test_the_example_file_is_valid_yaml_with_an_arena_section() -> None:
    assert "study" in yaml.safe_load(CONFIG.read_text())["arena"]
