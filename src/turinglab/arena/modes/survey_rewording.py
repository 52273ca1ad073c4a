"""Each kind's rewording of the built-in exit survey (core/survey_wording.py), registered with
its kit (`ModeKit.survey_rewording`): the default questions speak of interrogators, so the
ones that name a role are reworded for the roles a person had in that kind of study. A question
whose answer means something else gets its own key, so one column never mixes two questions."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

Rewording = Mapping[str, Mapping[str, Any]]

_STRATEGY_AS = "What was your strategy as {}?"

STRONG: Rewording = {
    "strategy": {"label": _STRATEGY_AS.format("investigator, or as respondent")},
    "estimated_correct": {
        "label": "In how many of your sessions as investigator do you think you preferred "
        "the person's reply?"
    },
}

LIVE_ITT: Rewording = {
    "strategy": {"label": _STRATEGY_AS.format("judge, or as answerer")},
    "estimated_correct": {"label": "How many of your verdicts as judge do you think were right?"},
}

ITT_CONVERSATION: Rewording = {  # nobody judges during an ITT conversation: the partner is
    "strategy": {"label": "How did you go about your conversations?"},
    "strategy_change": {"label": "Did your approach change? How?"},
    "estimated_correct": {
        "key": "estimated_people",  # not a count of right answers: its own column
        "label": "How many of your conversation partners do you think were people?",
    },
}

GTT: Rewording = {
    "strategy": {"label": "What was your strategy?"},
    "estimated_correct": {"label": "How many of your verdicts do you think were right?"},
}
