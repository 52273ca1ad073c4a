"""The rows of the human-study file that `turinglab report STUDY.csv` reads
(turinglab.human.schema): one per (game, witness) of a finished chat game, whoever played it.

Batch runs and arena studies give the same file from the same builder, `study_rows`: each
source only describes its games as `StudyGame`s (a batch trial through its game kind's
STUDY_ROWS capability, games/interrogation_setup.py; an arena game from its record,
study_export.py). So both have the same columns, the same exclusions, the same transcript and
the same clock.

A game with no usable verdict (abandoned, flagged, no verdict in time) gives one row with an
`excluded_reason` and nothing else to analyse; the report lists it among its exclusions
(human/exclusions.py: not_finished). Practice games give none: they are never study data.

Exclusions (SPEC §2) are flagged, not applied: `exclude_prior_participation` (the interrogator
said in the exit survey they took part before; empty when they have not answered, as in every
batch run) and `exclude_few_messages` (the interrogator sent fewer than 2 messages to a witness
of the game). The report applies the same rules itself from `prior_participation` and
`interrogator_messages`, so the file needs no hand editing.

A stand-in (an agent playing the human side in a batch run) is a "human" witness in the
analysis and is marked `witness_kind = "stand-in"`, so a simulated study is never mistaken for
a real one; a person is `human`, an AI `agent`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from turinglab.games.spec import FINISHED, Judgement

PRIOR = "Took part before"  # the survey's answer that marks prior participation
SURVEY_PRIOR = "prior_awareness"  # the exit-survey question that asks
MIN_MESSAGES = 2  # the report's few_messages rule (human/exclusions.py)
ABANDONED = "abandoned"  # an arena game a person left (arena/core/abandon.py)
Survey = Mapping[str, Any] | None


@dataclass(frozen=True)
class Said:
    """One message of a conversation between the interrogator and a witness."""

    by_interrogator: bool
    text: str
    seconds_in: float  # on the game's own clock, from its start

    def to_json(self) -> dict[str, Any]:
        """As the study file's `transcript` column holds it."""
        return {
            "sender": "interrogator" if self.by_interrogator else "witness",
            "text": self.text,
            "t": round(self.seconds_in, 3),
        }


class Spoken(Protocol):
    """A message as a game's table holds it or the store gives it back."""

    @property
    def sender(self) -> str: ...
    @property
    def text(self) -> str: ...
    @property
    def visible_to(self) -> tuple[str, ...]: ...
    @property
    def created_at(self) -> float: ...


def between(sender: str, visible_to: Sequence[str], judge: str, seat: str) -> bool:
    """Whether a message belongs to the conversation of `judge` and the witness `seat`: one
    of them said it and both saw it. The game's own lines, the verdict exchange and an AI's
    refused attempts are seen by one side only, so they are not part of it."""
    return sender in (judge, seat) and judge in visible_to and seat in visible_to


@dataclass(frozen=True)
class StudyWitness:
    seat: str
    human: bool  # the design's human side (a stand-in plays one): `witness_type`
    label: str  # the study's name of an AI witness ("SMOLLM2-PERSONA"); "human" for people
    model: str  # the AI witness's agent; "" for the human side
    persona: str  # the AI witness's prompt condition; "" when none is recorded
    kind: str  # who sat: human (a person) | stand-in | agent
    said: tuple[Said, ...]  # its conversation with the interrogator, in order


@dataclass(frozen=True)
class StudyGame:
    """A game as the study file sees it, whichever source it comes from."""

    game: str  # the study's id of it (a trial's key, an arena game's id)
    interrogator: str  # an agent's name, or a person's anonymous id
    interrogator_kind: str  # human | stand-in | agent
    witnesses: tuple[StudyWitness, ...]
    status: str | None  # None: still playing
    flags: tuple[str, ...] = ()
    judgements: tuple[Judgement, ...] = ()
    started_at: float = 0.0  # on the game's own clock
    duration_s: float | None = None  # on the game's own clock (simulated in batch runs)
    solo: bool = False  # a practice game: never study data
    chat: bool = True  # False: a kind with an export file of its own (STT, GTT, live ITT)
    survey: Survey = None  # the interrogator's exit survey
    recruited: Mapping[str, str] = field(default_factory=dict)  # ids their link carried

    @property
    def verdict(self) -> Judgement | None:
        return next((j for j in self.judgements if j.kind == "verdict"), None)


def prior_participation(survey: Survey) -> bool | None:
    """From the exit survey; None (unknown: the report never excludes on it) if unanswered."""
    answer = (survey or {}).get(SURVEY_PRIOR)
    return None if not answer else answer == PRIOR


def exclusion_flags(game: StudyGame) -> dict[str, Any]:
    """The game's exclusion flags (a game is excluded whole); {} for games without a verdict
    of an interrogator (the Strong Turing Test, unfinished games)."""
    if game.verdict is None:
        return {}
    sent = [sum(s.by_interrogator for s in w.said) for w in game.witnesses]
    return {
        "exclude_prior_participation": prior_participation(game.survey),
        "exclude_few_messages": any(n < MIN_MESSAGES for n in sent),
    }


def exclusion_reason(game: StudyGame) -> str | None:
    """Why a chat game gives no usable verdict, in plain words; None if it does (or it is not
    a chat game, or still playing)."""
    if game.status is None or not game.chat:
        return None
    flags = [f.removeprefix("arena: ") for f in game.flags]
    if game.status == ABANDONED:
        return "; ".join(flags) or ABANDONED
    if flags:
        return "flagged: " + "; ".join(flags)
    if game.verdict is not None:
        return None
    return "no verdict" if game.status == FINISHED else f"no verdict ({game.status})"


def study_rows(games: Iterable[StudyGame], study: str | None = None) -> list[dict[str, Any]]:
    """The study file's rows of `games` (see the module docstring), in the order the games
    started; `round` counts each interrogator's games with a usable verdict. With `study`, each
    row names it (the report is titled after it)."""
    rows: list[dict[str, Any]] = []
    rounds: dict[str, int] = {}
    for game in sorted(games, key=lambda g: g.started_at):
        if game.solo:
            continue
        reason = exclusion_reason(game)
        verdict = game.verdict
        if reason is not None:
            rows.append({"game": game.game, "excluded_reason": reason})
            continue
        if verdict is None:
            continue
        rounds[game.interrogator] = rounds.get(game.interrogator, 0) + 1
        flags = exclusion_flags(game)
        two_party = len(game.witnesses) == 1
        for w in game.witnesses:
            row: dict[str, Any] = {
                "game": game.game,
                "interrogator": game.interrogator,
                "witness": "human" if w.human else w.label,
                "witness_type": "human" if w.human else "ai",
                "judged_human": verdict.verdict == ("human" if two_party else w.seat),
                "format": "two-party" if two_party else "three-party",
                "confidence": verdict.confidence,
                "reason": verdict.reason or "",
                "round": rounds[game.interrogator],
                "interrogator_messages": sum(s.by_interrogator for s in w.said),
                "witness_messages": sum(not s.by_interrogator for s in w.said),
                "duration_s": None if game.duration_s is None else round(game.duration_s, 3),
                "persona": w.persona,
                "model": w.model,
                "witness_kind": w.kind,
                "interrogator_kind": game.interrogator_kind,
                "prior_participation": flags["exclude_prior_participation"],
                **flags,
                "transcript": json.dumps([s.to_json() for s in w.said], ensure_ascii=False),
            }
            for key, value in (game.survey or {}).items():
                row[f"survey_{key}"] = value
            row.update({f"interrogator_{k.lower()}": v for k, v in game.recruited.items()})
            rows.append(row)
    if study is not None:
        for row in rows:
            row["study"] = study
    return rows
