"""The participant page (static/index.html) filled in with the open study's texts.

Markdown goes through markdown-it with raw HTML off: a `<script>` in a consent text is shown
as text, and links with script schemes are dropped — the strict CSP would refuse them anyway.
What the page script needs (the modes before a session exists, the per-role instructions, the
recruitment hand-off) travels in a JSON data block, which CSP does not treat as a script.
"""

from __future__ import annotations

import json
import re
from html import escape

from markdown_it import MarkdownIt

from turinglab.arena.core.modes import ArenaSetup
from turinglab.arena.core.study_config import (
    BirthYearQuestion,
    ChoiceQuestion,
    NumberQuestion,
    Question,
    ScaleQuestion,
    StudyConfig,
    TextQuestion,
)
from turinglab.arena.core.survey_wording import survey_questions

_MD = MarkdownIt("commonmark", {"html": False, "linkify": False})


def markdown(text: str) -> str:
    """Safe HTML for a study's Markdown text (raw HTML escaped, unsafe links dropped)."""
    return _MD.render(text)


def _region(page: str, name: str, html: str) -> str:
    """Replace what lies between <!--name:start--> and <!--name:end--> in the template."""
    pattern = re.compile(rf"<!--{name}:start-->.*?<!--{name}:end-->", re.S)
    if not pattern.search(page):
        raise ValueError(f"the page template has no {name} region")
    return pattern.sub(lambda _: html, page, count=1)


def _select(label: str, key: str, need: str, options: str) -> str:
    return f'<label>{label} <select name="{key}"{need}><option></option>{options}</select></label>'


# Shown beside a required question's label; screen readers hear "required" from the field's
# own `required`, so the visible word is hidden from them (said once, not twice).
REQUIRED_MARK = ' <span class="req" aria-hidden="true">required</span>'


def _question(study: StudyConfig, q: object) -> str:
    assert hasattr(q, "key") and hasattr(q, "label")
    key, label = escape(q.key), escape(q.label)
    need = " required" if getattr(q, "required", False) else ""
    if need:
        label += REQUIRED_MARK
    if isinstance(q, ChoiceQuestion):
        options = "".join(f"<option>{escape(o)}</option>" for o in q.options)
        return _select(label, key, need, options)
    if isinstance(q, ScaleQuestion):
        points = []
        for n in range(q.min, q.max + 1):
            tag = q.low_label if n == q.min else q.high_label if n == q.max else ""
            text = f"{n} · {tag}" if tag else str(n)
            points.append(f'<option value="{n}">{escape(text)}</option>')
        return _select(label, key, need, "".join(points))
    if isinstance(q, TextQuestion):
        return (
            f'<label>{label} <textarea name="{key}" rows="2" '
            f'maxlength="{q.max_chars}"{need}></textarea></label>'
        )
    if isinstance(q, NumberQuestion | BirthYearQuestion):
        low, high = (q.min, q.max) if isinstance(q, NumberQuestion) else study.birth_years()
        return (
            f'<label>{label} <input name="{key}" type="number" min="{low}" max="{high}"'
            f"{need}></label>"
        )
    raise TypeError(f"unknown question kind: {q!r}")


def survey_fields(study: StudyConfig, asked: list[Question] | None = None) -> str:
    """The form's fields: `asked` (survey_wording.py), or the study's own questions."""
    questions = study.survey if asked is None else asked
    fields = [_question(study, q) for q in questions]
    if any(getattr(q, "required", False) for q in questions):
        fields.insert(
            0,
            '<p class="muted">Questions marked <span class="req">required</span> '
            "need an answer; the others you may leave blank.</p>",
        )
    return "\n    ".join(fields)


def _facts(study: StudyConfig) -> str:
    parts = []
    if study.pay:
        parts.append(f'<div class="fact"><h3>Pay</h3>{markdown(study.pay)}</div>')
    if study.contact:
        parts.append(f'<div class="fact"><h3>Contact</h3>{markdown(study.contact)}</div>')
    return f'<div class="facts">{"".join(parts)}</div>' if parts else ""


def _data(setup: ArenaSetup, session: bool) -> str:
    study = setup.settings.study
    data = {
        "session": session,
        "modes": [
            {"name": m.name, "title": m.title, "practice": m.solo, "about": m.about}
            for m in setup.modes
        ],
        "instructions": {
            "interrogator": study.instructions.interrogator,
            "witness": study.instructions.witness,
        },
        # No codes: the server says which one a person has earned (handoff.py).
        "redirect_after_s": study.recruitment.redirect_after_s,
    }
    # "<" escaped: no "</script>" in a text can end the data block early.
    return json.dumps(data, ensure_ascii=False).replace("<", "\\u003c")


def wait_text(seconds: float) -> str:
    """The study's longest wait for a partner, in words ("5 minutes", "45 seconds")."""
    if seconds >= 120:
        return f"{round(seconds / 60)} minutes"
    whole = round(seconds)
    return f"{whole} second{'' if whole == 1 else 's'}"


def render_page(template: str, setup: ArenaSetup, session: bool) -> bytes:
    study = setup.settings.study
    page = template.replace("<!--study:title-->", escape(study.title))
    if study.instructions.lobby:
        page = _region(page, "how", markdown(study.instructions.lobby))
    page = _region(page, "consent", markdown(study.consent) + _facts(study))
    page = page.replace("<!--study:min-age-->", str(study.min_age))
    page = page.replace("<!--study:max-wait-->", wait_text(setup.settings.max_wait_s))
    page = _region(page, "survey", survey_fields(study, survey_questions(setup)))
    page = page.replace("<!--study:data-->", _data(setup, session))
    return page.encode()


class PageCache:
    """The rendered page per (open study, has a session): every person loads it."""

    def __init__(self, template: str) -> None:
        self.template = template
        self._pages: dict[bool, tuple[object, bytes]] = {}

    def page(self, setup: ArenaSetup, session: bool) -> bytes:
        kept = self._pages.get(session)
        if kept is None or kept[0] is not setup.settings:  # a new study was opened
            kept = (setup.settings, render_page(self.template, setup, session))
            self._pages[session] = kept
        return kept[1]
