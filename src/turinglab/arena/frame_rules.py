"""What a participant may send outside a game's own rules, checked against where they are.

The page sends the exit survey once, after consent, with the questions of its form; anything
else (a script's survey before consent, a second one, made-up keys that would reach the
export) is refused with one error frame. In-game frames are checked by `LiveGame.handle`
(a verdict only once the talk is over, and so on).
"""

from __future__ import annotations

from turinglab.arena import frames as F
from turinglab.arena.live import InputRejected
from turinglab.arena.sessions import Participant

# The exit survey's questions: the `name`s of the survey form in static/index.html (a test
# keeps the two in step).
SURVEY_KEYS = frozenset(
    {
        "birth_year",
        "gender",
        "education",
        "chatbot_use",
        "llm_knowledge",
        "prior_awareness",
        "strategy",
        "strategy_change",
        "ai_intelligence",
        "ai_feelings",
        "estimated_correct",
        "comments",
    }
)
MAX_ANSWER_CHARS = 1000  # the form's textareas' maxlength


def check_survey(
    participant: Participant, frame: F.Survey, in_game: bool
) -> dict[str, str | int | None]:
    """The answers to keep, or InputRejected saying what is wrong."""
    if not participant.consented:
        raise InputRejected("consent", "The survey comes after the consent form.")
    if participant.survey is not None:
        raise InputRejected("survey-done", "Your survey answers are already saved.")
    if in_game:
        raise InputRejected("in-game", "Finish the game first.")
    unknown = sorted(set(frame.answers) - SURVEY_KEYS)
    if unknown:
        raise InputRejected("bad-survey", f"Unknown survey question: {unknown[0][:40]!r}.")
    for key, value in frame.answers.items():
        if isinstance(value, str) and len(value) > MAX_ANSWER_CHARS:
            raise InputRejected(
                "bad-survey", f"The answer to {key!r} is over {MAX_ANSWER_CHARS} characters."
            )
    return dict(frame.answers)
