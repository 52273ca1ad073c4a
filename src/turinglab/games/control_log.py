"""A live game's control events: what it decides besides its messages, typed and stored in order.

A live game's state must be a fold over what the store holds, so that any process can rebuild it
after its owner died (arena/core/takeover.py). Messages are stored (the `messages` table); the rest
of what shapes a game is not a message: a person's preference or choice, a verdict asked for,
a phase change, the game's end with its reason, a pause of its clock, an input id already
applied, a random draw. Those are the control events here: a closed union of frozen dataclasses,
each with its `kind` tag, stored one row each in `control_events` (store/schema.py) through the
same fenced, group-committed writer as messages (store/control_events.py).

Invariants (docs in the helper's notes):
- `idx` numbers a game's control events from 0 with no hole; a row is written only by the
  process that holds the game's epoch, and only if it continues the stored ones.
- `after_seq` is the number of messages the game had said when the event happened: a rebuilt
  game interleaves messages and control events in the order they happened (`interleave`).
- An event is shown (its effect on people's pages) only once committed, as a message is.
- Random draws are reproducible from the trial's seed and the draw's number (`Draws`): a
  resumed game sets the counter from its last stored `Draw` and goes on with the same stream.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from typing import Any, ClassVar, TypeVar

from turinglab.games.discarded_reply import ReplyDiscarded
from turinglab.games.held_message import MessageHeld
from turinglab.games.table import TranscriptMessage


@dataclass(frozen=True)
class Choice:
    """A person's preference or choice (STT: reply label or tie; GTT/ITT: an answer)."""

    seat: str
    turn: int
    label: str
    kind: ClassVar[str] = "choice"


@dataclass(frozen=True)
class VerdictAsked:
    """A seat was asked for its verdict (the talk is over for it)."""

    seat: str
    reason: str = ""
    kind: ClassVar[str] = "verdict-asked"


@dataclass(frozen=True)
class VerdictGiven:
    """A person's verdict with what their messages do not say (GTT: the form's confidence and
    reason; the choice becomes an answer message, which may land after this, or not at all)."""

    seat: str
    choice: str
    confidence: float
    reason: str = ""
    at: float = 0.0  # on the game's clock, as the judgement's created_at
    kind: ClassVar[str] = "verdict"


@dataclass(frozen=True)
class PhaseChanged:
    """The game moved to another phase (round, turn, part)."""

    phase: str
    kind: ClassVar[str] = "phase"


@dataclass(frozen=True)
class Ended:
    """The game is over for a reason decided live (a person ended it, a timeout)."""

    reason: str
    by: str = ""
    kind: ClassVar[str] = "ended"


@dataclass(frozen=True)
class Paused:
    """The game's clock stood still `seconds` in all so far (PausableClock)."""

    seconds: float
    kind: ClassVar[str] = "paused"


@dataclass(frozen=True)
class InputAccepted:
    """A client input id already applied: a resend of it after a takeover is not applied twice."""

    seat: str
    input_id: str
    kind: ClassVar[str] = "input"


@dataclass(frozen=True)
class Away:
    """A seat was first counted gone (none of its person's connections open): its `created_at`
    is when, so a process taking the game over counts the abandon grace from then, even when
    Redis, which notes it too, has lost the note (arena/core/abandon.py)."""

    seat: str
    kind: ClassVar[str] = "away"


@dataclass(frozen=True)
class Back:
    """A seat counted gone is connected again."""

    seat: str
    kind: ClassVar[str] = "back"


@dataclass(frozen=True)
class Draw:
    """`count` random draws have been made from the game's stream (`Draws`) so far."""

    stream: str
    count: int
    kind: ClassVar[str] = "draw"


ControlEvent = (
    Choice
    | VerdictAsked
    | VerdictGiven
    | PhaseChanged
    | Ended
    | Paused
    | InputAccepted
    | Draw
    | Away
    | Back
    | MessageHeld
    | ReplyDiscarded
)
_KINDS: dict[str, type[ControlEvent]] = {
    c.kind: c
    for c in (
        Choice,
        VerdictAsked,
        VerdictGiven,
        PhaseChanged,
        Ended,
        Paused,
        InputAccepted,
        Draw,
        Away,
        Back,
        MessageHeld,
        ReplyDiscarded,
    )
}
E = TypeVar("E", bound=ControlEvent)


def event_json(event: ControlEvent) -> dict[str, Any]:
    return asdict(event)


def event_from(kind: str, data: Mapping[str, Any]) -> ControlEvent:
    """The event a stored row holds; an unknown kind is an error (the union is closed)."""
    cls = _KINDS.get(kind)
    if cls is None:
        raise ValueError(f"unknown control event kind {kind!r}")
    names = {f.name for f in fields(cls)}
    return cls(**{k: v for k, v in data.items() if k in names})


@dataclass(frozen=True)
class Logged:
    """A control event as stored: its number in the game, and the messages said before it."""

    idx: int
    after_seq: int
    event: ControlEvent
    created_at: float = 0.0


@dataclass
class ControlLog:
    """A game's control events so far, as a rebuilt game reads them back and a live one adds."""

    entries: list[Logged] = field(default_factory=list)

    @property
    def next_idx(self) -> int:
        return len(self.entries)

    def add(self, event: ControlEvent, after_seq: int, at: float = 0.0) -> Logged:
        logged = Logged(self.next_idx, after_seq, event, at)
        self.entries.append(logged)
        return logged

    def events(self) -> list[ControlEvent]:
        return [e.event for e in self.entries]

    def of(self, cls: type[E]) -> list[E]:
        return [e.event for e in self.entries if isinstance(e.event, cls)]

    def last_draws(self, stream: str) -> int:
        """How many draws the stream `stream` had made (0 when none was logged)."""
        counts = [d.count for d in self.of(Draw) if d.stream == stream]
        return counts[-1] if counts else 0

    def away_since(self) -> dict[str, float]:
        """Seats whose last presence event says gone: seat -> when (epoch s) first counted so."""
        away: dict[str, float] = {}
        for e in self.entries:
            if isinstance(e.event, Away):
                away[e.event.seat] = e.created_at
            elif isinstance(e.event, Back):
                away.pop(e.event.seat, None)
        return away


def interleave(
    messages: Sequence[TranscriptMessage], log: Sequence[Logged]
) -> Iterator[TranscriptMessage | Logged]:
    """Messages and control events in the order they happened: an event after the `after_seq`
    messages said before it."""
    pending = sorted(log, key=lambda e: e.idx)
    i = 0
    for m in messages:
        while i < len(pending) and pending[i].after_seq <= m.seq:
            yield pending[i]
            i += 1
        yield m
    yield from pending[i:]


class Draws:
    """A game's seeded random stream whose position is a number: draw `n` is a fresh
    `random.Random` seeded by (seed, stream, n), so a resumed game that knows `n` (its last
    stored `Draw`, or a count its stored messages fix: typing_delay.reply_draw) continues the
    same stream instead of restarting it at draw 0."""

    def __init__(self, seed: int, stream: str = "main", count: int = 0) -> None:
        self.seed = seed
        self.stream = stream
        self.count = count

    def next(self) -> random.Random:
        rng = random.Random(f"{self.seed}:{self.stream}:{self.count}")
        self.count += 1
        return rng

    def marker(self) -> Draw:
        """The control event that records where the stream is now."""
        return Draw(self.stream, self.count)
