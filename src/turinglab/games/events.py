"""What a game emits while it is played: frozen events, reported by the table to its observer.

A game never talks to a transport. It reports events to the table (`Table.show`,
`Table.announce`; every appended message becomes a `MessageSaid`), addressed to seats; the table
hands each to its observer (`GameObserver`), which decides what the people at those seats see.
The arena renders them into its browser frames (arena/core/live.py and the mode modules); tests keep
them in an `EventLog`. Batch games have no observer: nobody is watching.

Events are addressed to seats, not to people: an observer ignores the seats no person sits in.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, TypeVar

from turinglab.games.discarded_reply import ReplyDiscarded

if TYPE_CHECKING:
    from turinglab.games.transcript import TranscriptMessage


@dataclass(frozen=True, slots=True)
class MessageSaid:
    """A message was appended to the table; sent to the seats that may see it."""

    message: TranscriptMessage


@dataclass(frozen=True, slots=True)
class GameStarted:
    time_limit_s: float


@dataclass(frozen=True, slots=True)
class Typing:
    """Someone is typing on `channel` (an AI's typing shown on a person's timeline)."""

    channel: str


@dataclass(frozen=True, slots=True)
class InputRefused:
    """What a person did was not allowed by the game's rules; `reason` in the game's words."""

    reason: str
    channel: str | None = None


@dataclass(frozen=True, slots=True)
class TalkEnded:
    """The conversation is over (time, the interrogator, a message limit); a verdict may follow."""

    reason: str


@dataclass(frozen=True, slots=True)
class VerdictAsked:
    sides: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class PreferenceAsked:
    """The Strong TT investigator is asked to prefer one of `replies` replies, or a tie."""

    turn: int
    replies: int


@dataclass(frozen=True, slots=True)
class RepliesGiven:
    """A turn's replies, by seat, in the order they are shown (for a transport to lay out;
    never relayed as is: it names seats)."""

    turn: int
    order: tuple[str, ...]
    replies: Mapping[str, str]


@dataclass(frozen=True, slots=True)
class ReplyChosen:
    turn: int
    label: str  # "1", "2", … or "tie"
    seat: str | None  # None: a tie


@dataclass(frozen=True, slots=True)
class GameFlagged:
    """The game was stopped (an AI seat missed its deadline or failed); `reason` says why."""

    reason: str


@dataclass(frozen=True, slots=True)
class SideRevealed:
    seat: str
    kind: str  # the seat's kind: "agent", "human", "stand-in"
    label: str = ""
    human: bool | None = None  # whether the side counts as the human one (interrogations)


@dataclass(frozen=True, slots=True)
class Revealed:
    """After the game: which seat was which."""

    sides: tuple[SideRevealed, ...] = field(default_factory=tuple)

    def side(self, seat: str) -> SideRevealed:
        return next(s for s in self.sides if s.seat == seat)


GameEvent = (
    MessageSaid
    | GameStarted
    | Typing
    | InputRefused
    | TalkEnded
    | VerdictAsked
    | PreferenceAsked
    | RepliesGiven
    | ReplyChosen
    | GameFlagged
    | Revealed
    | ReplyDiscarded
)


class GameObserver(Protocol):
    """Told every event a table reports, with the seats it is for, in the order it happens."""

    def observe(self, event: GameEvent, to: tuple[str, ...]) -> None: ...


E = TypeVar("E", bound=GameEvent)


class EventLog:
    """An observer that keeps every event (tests, and transcripts of what each seat saw)."""

    def __init__(self) -> None:
        self.entries: list[tuple[GameEvent, tuple[str, ...]]] = []

    def observe(self, event: GameEvent, to: tuple[str, ...]) -> None:
        self.entries.append((event, to))

    def seen_by(self, seat: str, kind: type[E]) -> list[E]:
        """The events of one kind that were for `seat`, in order."""
        return [e for e, to in self.entries if seat in to and isinstance(e, kind)]

    def messages_to(self, seat: str) -> list[TranscriptMessage]:
        return [e.message for e in self.seen_by(seat, MessageSaid)]
