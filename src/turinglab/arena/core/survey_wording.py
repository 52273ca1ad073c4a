"""The built-in exit survey in the words of the study's game: its roles and what they decide.

The default questions (study_config.DEFAULT_SURVEY) were written for the interrogation games
(three- and two-party). After a Strong Turing Test, a live ITT or an ITT conversation, asking
about one's "strategy as interrogator" or "interrogations got right" names a role the person
never had, so the questions that speak of a role are reworded here for each game; the others
(demographics, AI attitudes) stay as they are. A question whose answer means something else in
another game gets its own key, so one column never mixes two questions. A study that brings
its own `survey` gets exactly its own questions.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from turinglab.arena.core.modes import ArenaSetup
from turinglab.arena.core.study_config import DEFAULT_SURVEY, Question, StudyConfig

# Per game (its `experiment.game` name): key -> the fields that replace the default's.
_STRATEGY_AS = "What was your strategy as {}?"
REWORDED: Mapping[str, Mapping[str, Mapping[str, Any]]] = {
    "strong": {
        "strategy": {"label": _STRATEGY_AS.format("investigator, or as respondent")},
        "estimated_correct": {
            "label": "In how many of your sessions as investigator do you think you preferred "
            "the person's reply?"
        },
    },
    "live-itt": {
        "strategy": {"label": _STRATEGY_AS.format("judge, or as answerer")},
        "estimated_correct": {
            "label": "How many of your verdicts as judge do you think were right?"
        },
    },
    "conversation": {  # nobody judges during an ITT conversation: the partner is the role
        "strategy": {"label": "How did you go about your conversations?"},
        "strategy_change": {"label": "Did your approach change? How?"},
        "estimated_correct": {
            "key": "estimated_people",  # not a count of right answers: its own column
            "label": "How many of your conversation partners do you think were people?",
        },
    },
    "gtt": {
        "strategy": {"label": "What was your strategy?"},
        "estimated_correct": {"label": "How many of your verdicts do you think were right?"},
    },
}


def study_game(setup: ArenaSetup) -> str:
    """The game the study is about: its first study (non-practice) mode's, else its first."""
    modes = [m for m in setup.modes if not m.solo] or setup.modes
    return modes[0].game.name if modes else "three-party"


def default_survey(game: str) -> list[dict[str, Any]]:
    """The built-in questions, worded for `game`."""
    changes = REWORDED.get(game, {})
    return [{**q, **changes.get(q["key"], {})} for q in DEFAULT_SURVEY]


def survey_questions(setup: ArenaSetup) -> list[Question]:
    """The questions the exit survey asks in this setup's study."""
    study = setup.settings.study
    if "survey" in study.model_fields_set:  # the study's own questions, untouched
        return study.survey
    return StudyConfig.model_validate({"survey": default_survey(study_game(setup))}).survey
