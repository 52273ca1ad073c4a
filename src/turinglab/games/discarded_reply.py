"""A model's reply that a game drew and did not say: the conversation game samples a
degenerate reply again (games/conversation.py `degenerate`). Only the reply it kept becomes a
message, so this one is a game event the table reports (`Table.discard`) and a control event
the live game logs (games/control_log.py). A game resumed after a takeover is given it again
for its call (`Table.unsaid`): it rejects it again, counts the call, and its later calls get
the seeds they would have had."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar


@dataclass(frozen=True, slots=True)
class ReplyDiscarded:
    """Call number `call` (the table's count) of `seat` answered `text`, not said."""

    call: int
    seat: str
    text: str
    kind: ClassVar[str] = "discarded"
