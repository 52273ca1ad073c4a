"""Small things the participant page gets right (issue 31, access): a favicon (browsers asked
for /favicon.ico and got a 404 on every page), and required survey questions marked as such,
in words on screen and by `required` for screen readers (the mark itself hidden from them, so
a question's name is read once)."""

from __future__ import annotations

import re
from pathlib import Path

import aiohttp

from arena_fixtures import make_setup, running_arena
from turinglab.arena.web.study_page import render_page

TEMPLATE = (Path(__file__).parents[3] / "src/turinglab/arena/static/index.html").read_text()


async def test_the_favicon_is_served_where_browsers_look() -> None:
    with running_arena() as (base, _app):
        async with aiohttp.ClientSession() as s:
            async with s.get(base + "/") as r:
                page = await r.text()
            (icon,) = re.findall(r'<link rel="icon" href="([^"]+)"', page)
            async with s.get(base + icon) as r:
                assert r.status == 200 and r.content_type == "image/svg+xml"
                assert (await r.text()).startswith("<svg")
            async with s.get(base + "/favicon.ico") as r:
                assert r.status == 200 and r.url.path == icon  # followed to the same file


def test_required_survey_questions_are_marked_and_the_others_not() -> None:
    survey = [
        {"key": "birth_year", "kind": "birth-year", "label": "Year of birth", "required": True},
        {"key": "use", "kind": "choice", "label": "Chatbot use", "options": ["Never", "Daily"]},
    ]
    page = render_page(TEMPLATE, make_setup(study={"survey": survey}), False).decode()
    form = page[page.index('<form id="survey"') :]
    form = form[: form.index("</form>")]
    born = re.search(r"<label>Year of birth(.*?)</label>", form, re.S)
    use = re.search(r"<label>Chatbot use(.*?)</label>", form, re.S)
    assert born and use
    assert '<span class="req" aria-hidden="true">required</span>' in born.group(1)
    assert " required>" in born.group(1)
    assert "req" not in use.group(1) and "required" not in use.group(1)
    assert "Questions marked" in form  # the mark explained once, above the questions

    optional = [survey[1]]
    page = render_page(TEMPLATE, make_setup(study={"survey": optional}), False).decode()
    assert "Questions marked" not in page and 'class="req"' not in page
