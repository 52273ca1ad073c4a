"""One message of a game's transcript: who said it, who may see it, and how it was produced.

Its own module so that the table (which appends messages) and the events (which report them)
both import it without importing each other.
"""

from __future__ import annotations

from dataclasses import dataclass

from turinglab.agents.base import ImagePart, Route

GAME = "game"  # sender id of instructions the game itself gives
MAIN = "main"  # the channel of games that have only one


@dataclass(slots=True)
class TranscriptMessage:
    seq: int
    sender: str  # a seat id, or GAME
    text: str
    visible_to: tuple[str, ...]
    phase: str
    created_at: float
    route: Route | None = None
    latency_s: float | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    channel: str = MAIN
    images: tuple[ImagePart, ...] = ()
