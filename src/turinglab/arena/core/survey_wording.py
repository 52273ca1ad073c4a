"""The built-in exit survey in the words of the study's game: its roles and what they decide.

The default questions (study_config.DEFAULT_SURVEY) were written for the interrogation games
(three- and two-party). After a Strong Turing Test, a live ITT or an ITT conversation, asking
about one's "strategy as interrogator" or "interrogations got right" names a role the person
never had, so the questions that speak of a role are reworded here for each game; the others
(demographics, AI attitudes) stay as they are. Each kind's kit brings its rewording
(`ModeKit.survey_rewording`, modes/survey_rewording.py); none is named here. A study that brings
its own `survey` gets exactly its own questions.
"""

from __future__ import annotations

from typing import Any

from turinglab.arena.core.mode_kits import kit_named
from turinglab.arena.core.modes import ArenaSetup
from turinglab.arena.core.study_config import DEFAULT_SURVEY, Question, StudyConfig


def study_game(setup: ArenaSetup) -> str:
    """The game the study is about: its first study (non-practice) mode's, else its first."""
    modes = [m for m in setup.modes if not m.solo] or setup.modes
    return modes[0].game.name if modes else "three-party"


def default_survey(game: str) -> list[dict[str, Any]]:
    """The built-in questions, worded for `game`."""
    kit = kit_named(game)
    changes = {} if kit is None else kit.survey_rewording
    return [{**q, **changes.get(q["key"], {})} for q in DEFAULT_SURVEY]


def survey_questions(setup: ArenaSetup) -> list[Question]:
    """The questions the exit survey asks in this setup's study."""
    study = setup.settings.study
    if "survey" in study.model_fields_set:  # the study's own questions, untouched
        return study.survey
    return StudyConfig.model_validate({"survey": default_survey(study_game(setup))}).survey
