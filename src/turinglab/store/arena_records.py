"""The one shape of an arena game's record: what the admin export, the study file and the ITT
judgements read, whether the game is still in a process's memory (`LiveGame.record()`) or read
back from the store (store/arena_games.py).

People appear by anonymous participant id only. A record of a game still playing has status
None; `stored_status` (the game row's own status) is there only when read from the store.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from turinglab.agents.base import ImagePart
from turinglab.games.spec import GameResult, TrialSpec
from turinglab.games.table import TranscriptMessage

ARENA_GAME = "arena"  # runs.game of an arena study's run
SURVEY_GAME = "arena-survey"  # games.game of the row holding a never-seated person's survey
# The result's own status, kept in the outcome's details when its flags make the outcome
# "flagged" (an abandoned game): the study export names it as the reason.
RESULT_STATUS = "arena_status"

Record = dict[str, Any]


def seat_entry(agent: str, participant: str | None) -> dict[str, Any]:
    """A seat as the record names it: a person by id, an AI by its agent."""
    if participant is not None:
        return {"kind": "human", "participant": participant}
    return {"kind": "ai", "agent": agent}


def message_entry(
    *,
    seq: int,
    sender: str,
    channel: str,
    text: str,
    at: float,
    visible_to: Sequence[str],
    images: Sequence[str] = (),
) -> dict[str, Any]:
    """One message; `images` are references (the store's) or data URLs (a live game's)."""
    row: dict[str, Any] = {
        "seq": seq,
        "sender": sender,
        "channel": channel,
        "text": text,
        "at": at,
        "visible_to": list(visible_to),
    }
    if images:
        row["images"] = list(images)
    return row


def game_record(
    *,
    game: str,
    mode: str,
    solo: bool,
    spec: TrialSpec | Mapping[str, Any] | None,
    seats: Mapping[str, Mapping[str, Any]],
    started_at: float,
    ended_at: float | None,
    messages: Iterable[dict[str, Any]],
    result: GameResult | None,
) -> Record:
    """A game's record; `result` None while it is still playing."""
    return {
        "game": game,
        "mode": mode,
        "solo": solo,
        "trial": spec.to_json() if isinstance(spec, TrialSpec) else spec,
        "seats": {seat: dict(who) for seat, who in seats.items()},
        "started_at": started_at,
        "ended_at": ended_at,
        "messages": list(messages),
        "status": None if result is None else result.status,
        "correct": None if result is None else result.correct,
        "judgements": [] if result is None else [j.to_json() for j in result.judgements],
        "flags": [] if result is None else list(result.flags),
    }


def said_message(m: Any, images: Mapping[str, ImagePart]) -> TranscriptMessage:
    """A stored message row (and the images it names) as the table said it."""
    return TranscriptMessage(
        seq=m.seq,
        sender=m.sender,
        text=m.text,
        visible_to=tuple(m.visible_to.split(",")) if m.visible_to else (),
        phase=m.phase,
        created_at=m.created_at,
        latency_s=m.latency_s,
        tokens_in=m.tokens_in,
        tokens_out=m.tokens_out,
        channel=m.channel,
        images=tuple(images[ref] for ref in (m.images or ())),
    )
