"""What a participant may send outside a game's own rules, checked against where they are.

The page sends the exit survey once, after consent, with the questions of the study's form
(study_config.py); anything else (a script's survey before consent, a second one, made-up keys
that would reach the export, an answer of the wrong type) is refused with one error frame.
In-game frames are checked by `LiveGame.handle` (a verdict only once the talk is over, and so
on).
"""

from __future__ import annotations

from turinglab.arena.core import frames as F
from turinglab.arena.core.participants import Participant
from turinglab.arena.core.person_view import InputRejected
from turinglab.arena.core.study_config import Question, StudyConfig, SurveyProblem, check_answers

# The built-in exit survey's questions (study_config.DEFAULT_SURVEY) in the interrogation games:
# the `name`s of the form the page renders when a study brings no survey of its own (a test keeps
# the two in step; survey_wording.py rewords them for the other games).
SURVEY_KEYS = StudyConfig().survey_keys


def check_survey(
    participant: Participant,
    frame: F.Survey,
    in_game: bool,
    study: StudyConfig | None = None,
    asked: list[Question] | None = None,
) -> dict[str, str | int | None]:
    """The answers to keep, or InputRejected saying what is wrong."""
    if not participant.consented:
        raise InputRejected("consent", "The survey comes after the consent form.")
    if participant.survey is not None:
        raise InputRejected("survey-done", "Your survey answers are already saved.")
    if in_game:
        raise InputRejected("in-game", "Finish the game first.")
    try:  # the study's own questions, each answer checked against its type
        return check_answers(study or StudyConfig(), dict(frame.answers), asked)
    except SurveyProblem as err:
        raise InputRejected("bad-survey", str(err)) from None
