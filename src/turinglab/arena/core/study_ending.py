"""Which end of the study a participant has reached (the rules are in handoff.py's docstring).

Decided by the hub as a survey is saved; apart from the hand-off routes (handoff.py), which
read it back, so that the hub needs no web routes to decide it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from turinglab.arena.core.participants import Participant
    from turinglab.arena.core.rounds import RoundBook

End = Literal["completion", "early_exit", "timed_out", "screened_out"]

SHORT_REASON = (
    "witness rounds excused: the matching design sent no interrogator to a person in time"
)


def study_end(played: int, total: int, timed_out: bool) -> End:
    """The end a participant who has answered the survey has reached (`played`: their
    rounds played and excused)."""
    if played >= total:
        return "completion"
    return "timed_out" if timed_out else "early_exit"


def ending(participant: Participant, book: RoundBook) -> dict[str, str | int]:
    """What is kept with the survey: the end reached and the rounds done then."""
    progress = book.progress(participant.id)
    end = study_end(progress.owed, book.rounds, participant.timed_out)
    kept: dict[str, str | int] = {
        "end": end,
        "rounds_done": progress.played,
        "rounds_total": book.rounds,
    }
    if progress.excused:
        kept["rounds_excused"] = progress.excused
        kept["reason"] = SHORT_REASON
    return kept
