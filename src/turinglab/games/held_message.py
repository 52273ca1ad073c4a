"""A control event (games/control_log.py) of games that take a person's message before they
say it: the live ITT's human agent answers while the AI is still answering, and both answers
are said together (games/live_itt.py). The page was told the message was taken (its ack), so
a process that takes the game over must say it, not ask the person again: it is logged here,
with the phase it belongs to, and given back to the rebuilt game unless a stored message of
that seat in that phase says it already."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar


@dataclass(frozen=True)
class MessageHeld:
    """`seat`'s message `text`, taken for `phase` and not said yet."""

    seat: str
    text: str
    phase: str
    kind: ClassVar[str] = "held"
