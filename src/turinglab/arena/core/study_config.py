"""A lab's own study on the arena's pages: consent, contacts, pay, instructions, exit survey,
minimum age and the recruitment hand-off (completion, screened-out and timed-out codes).

It lives in a study config's `arena.study` section (see configs/arena_study.yaml). Every field
has a default that reproduces the arena's built-in texts, so a config without it reads as
before. Texts are Markdown (study_page.py renders them with raw HTML escaped); the exit survey
is a list of typed questions whose keys are the only answers the server accepts.
"""

from __future__ import annotations

import datetime
import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

DEFAULT_CONSENT = (
    "We keep what you type, when you type it, your verdicts and your survey answers under an "
    "anonymous id — never your name or address. Do not share personal information. You may "
    "stop at any time. Practice games are kept apart and never used as study data."
)
KEY = r"^[a-z][a-z0-9_]{0,39}$"
EARLIEST_BIRTH_YEAR = 1900
# URL parameters a recruitment platform passes: Prolific's three, and a generic one (MTurk,
# SONA and the like can be pointed at ?pid=).
RECRUITMENT_PARAMS = ("PROLIFIC_PID", "STUDY_ID", "SESSION_ID", "pid")
RECRUITMENT_VALUE = re.compile(r"^[A-Za-z0-9_.:-]{1,64}$")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class _Question(_Strict):
    key: str = Field(pattern=KEY)
    label: str = Field(min_length=1, max_length=500)
    required: bool = False


class ChoiceQuestion(_Question):
    kind: Literal["choice"]
    options: list[str] = Field(min_length=1)


class ScaleQuestion(_Question):
    kind: Literal["scale"]
    min: int = 1
    max: int = 5
    low_label: str = ""  # shown beside the lowest point
    high_label: str = ""

    @model_validator(mode="after")
    def _ordered(self) -> ScaleQuestion:
        if not self.min < self.max <= self.min + 100:
            raise ValueError(
                f"a scale runs from min to max (up to 100 steps): {self.min}..{self.max}"
            )
        return self


class TextQuestion(_Question):
    kind: Literal["text"]
    max_chars: int = Field(default=1000, ge=1, le=5000)


class NumberQuestion(_Question):
    kind: Literal["number"]
    min: int = 0
    max: int = 100


class BirthYearQuestion(_Question):
    """The year of birth, bounded by the study's minimum age (the consent says the same)."""

    kind: Literal["birth-year"]


Question = Annotated[
    ChoiceQuestion | ScaleQuestion | TextQuestion | NumberQuestion | BirthYearQuestion,
    Field(discriminator="kind"),
]


def _scale(key: str, label: str, low: str, high: str) -> dict[str, Any]:
    return {"kind": "scale", "key": key, "label": label, "low_label": low, "high_label": high}


def _choice(key: str, label: str, *options: str) -> dict[str, Any]:
    return {"kind": "choice", "key": key, "label": label, "options": list(options)}


# Today's exit survey (Jones & Bergen's questions), as typed questions.
DEFAULT_SURVEY: list[dict[str, Any]] = [
    {"kind": "birth-year", "key": "birth_year", "label": "Year of birth"},
    _choice("gender", "Gender", "Female", "Male", "Non-binary", "Prefer not to say"),
    _choice(
        "education",
        "Highest education",
        "No formal qualification",
        "High school",
        "Undergraduate degree",
        "Postgraduate degree",
        "Prefer not to say",
    ),
    _choice("chatbot_use", "How often do you use chatbots?", "Never", "Monthly", "Weekly", "Daily"),
    _choice(
        "llm_knowledge",
        "How much do you know about large language models?",
        "Nothing",
        "A little",
        "Some",
        "A lot",
        "I build them",
    ),
    _choice(
        "prior_awareness",
        "Had you heard of this experiment, or taken part in one like it?",
        "No",
        "Heard of it",
        "Took part before",
    ),
    {"kind": "text", "key": "strategy", "label": "What was your strategy as interrogator?"},
    {"kind": "text", "key": "strategy_change", "label": "Did your strategy change? How?"},
    _scale("ai_intelligence", "How intelligent do you think AI is?", "not at all", "very"),
    _scale("ai_feelings", "How do you feel about AI?", "very negative", "very positive"),
    {
        "kind": "number",
        "key": "estimated_correct",
        "min": 0,
        "max": 20,
        "label": "How many of your interrogations do you think you got right?",
    },
    {"kind": "text", "key": "comments", "label": "Anything else?"},
]


class HandOff(_Strict):
    """Where a participant goes at one of the study's ends: a code to show, a URL to open."""

    code: str = Field(default="", max_length=64)
    url: str = Field(default="", max_length=2000)

    @model_validator(mode="after")
    def _http(self) -> HandOff:
        if self.url and not self.url.startswith(("https://", "http://")):
            raise ValueError(f"url: an http(s) address, not {self.url[:40]!r}")
        return self


class Recruitment(_Strict):
    """The recruitment platform's hand-off (Prolific's completion codes and URLs)."""

    # Decided by the server (arena/web/handoff.py), never by the page: the completion code only for
    # every study round played and the survey answered.
    completion: HandOff = HandOff()
    early_exit: HandOff = HandOff()  # left for the survey before their rounds were played
    screened_out: HandOff = HandOff()  # declined the consent form (or withdrew later)
    timed_out: HandOff = HandOff()  # nobody to play with in time
    redirect_after_s: float = Field(default=5.0, ge=0, le=600)  # shown this long, then opened


class Instructions(_Strict):
    """Markdown shown in the lobby, and one line each role sees above its chat. Empty: the
    arena's built-in texts."""

    lobby: str = ""
    interrogator: str = ""
    witness: str = ""


class StudyConfig(_Strict):
    title: str = "Can you tell a person from a machine?"
    consent: str = DEFAULT_CONSENT  # Markdown
    contact: str = ""  # Markdown: the researcher and the ethics board, how to reach them
    pay: str = ""  # Markdown: what taking part pays
    min_age: int = Field(default=18, ge=0, le=120)
    instructions: Instructions = Instructions()
    survey: list[Question] = Field(
        default_factory=lambda: list(DEFAULT_SURVEY), validate_default=True
    )
    recruitment: Recruitment = Recruitment()

    @model_validator(mode="after")
    def _unique_keys(self) -> StudyConfig:
        keys = [q.key for q in self.survey]
        twice = sorted({k for k in keys if keys.count(k) > 1})
        if twice:
            raise ValueError(f"survey: question key {twice[0]!r} is used twice")
        return self

    @property
    def survey_keys(self) -> frozenset[str]:
        return frozenset(q.key for q in self.survey)

    def birth_years(self, today: datetime.date | None = None) -> tuple[int, int]:
        """The birth years the survey accepts: old enough for the consent form."""
        year = (today or datetime.date.today()).year
        return EARLIEST_BIRTH_YEAR, year - self.min_age


class SurveyProblem(ValueError):
    """An answer the study's survey does not allow; the message is shown to the person."""


def check_answers(
    study: StudyConfig,
    answers: dict[str, str | int | None],
    asked: list[Question] | None = None,
) -> dict[str, Any]:
    """The answers to keep, each checked against its question's type (SurveyProblem if not).
    `asked`: the questions the page showed (survey_wording.py), if not the study's own."""
    questions = {q.key: q for q in (study.survey if asked is None else asked)}
    unknown = sorted(set(answers) - set(questions))
    if unknown:
        raise SurveyProblem(f"Unknown survey question: {unknown[0][:40]!r}.")
    kept: dict[str, Any] = {}
    for key, question in questions.items():
        value = answers.get(key)
        if value is None or value == "":
            if question.required:
                raise SurveyProblem(f"Please answer {question.label!r}.")
            if key in answers:
                kept[key] = None
            continue
        kept[key] = _answer(study, question, value)
    return kept


def _answer(study: StudyConfig, q: Any, value: str | int) -> str | int:
    if isinstance(q, TextQuestion):
        text = str(value)
        if len(text) > q.max_chars:
            raise SurveyProblem(f"The answer to {q.key!r} is over {q.max_chars} characters.")
        return text
    if isinstance(q, ChoiceQuestion):
        if str(value) not in q.options:
            raise SurveyProblem(f"{str(value)[:40]!r} is not one of the answers to {q.key!r}.")
        return str(value)
    low, high = (q.min, q.max) if not isinstance(q, BirthYearQuestion) else study.birth_years()
    try:
        number = int(value)
    except ValueError:
        raise SurveyProblem(f"The answer to {q.key!r} is a whole number.") from None
    if not low <= number <= high:
        raise SurveyProblem(f"The answer to {q.key!r} is between {low} and {high}.")
    return number


def recruitment_ids(given: Any) -> dict[str, str]:
    """The platform's participant ids from the page's URL parameters; anything else (another
    parameter, an odd value) is dropped, not stored."""
    if not isinstance(given, dict):
        return {}
    return {
        k: v
        for k in RECRUITMENT_PARAMS
        if isinstance(v := given.get(k), str) and RECRUITMENT_VALUE.match(v)
    }
