"""What one person at a live game has been shown, and the checks of their inputs that need
only that: whether an input was applied already, which channel an alias names, whether they
are the one who decides. The game (live.py) owns the views; the people see only aliases.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from turinglab.agents.human import HumanAgent
from turinglab.arena.core import frames as F
from turinglab.arena.core.chat_text import clean, utf16_length
from turinglab.arena.core.participants import Participant
from turinglab.arena.core.resume import Outbox
from turinglab.games.events import (
    GameEvent,
    InputRefused,
    MessageSaid,
    TalkEnded,
    Typing,
    VerdictAsked,
)
from turinglab.games.table import GAME

Outlet = Callable[[F.ServerFrame], None]
# Given to a socket's outlet: close that socket ("service restart", 1012) so its page
# reconnects, through the balancer, to another process (one cut off from Redis hangs up).
HANG_UP = F.Error(code="hang-up", message="This server lost the arena; reconnecting.")
# What a person whose game cannot be reached for now is told (`relay-delayed`), and after.
RELAY_DELAYED = "The connection to your game is delayed. Please wait: nothing you typed is lost."
RELAY_RESUMED = "Connected to your game again."
ALIASES = "ABCDEFGH"  # the names a person's conversations have on their page
APPLIED_KEPT = 256  # input ids remembered per view (a client re-sends only its latest few)
# A message a person sent that the game had not said yet when the talk ended: it never will.
TOO_LATE = "Time ran out before your last message went through, so it was not sent."


class InputRejected(ValueError):
    """A person tried something the game's rules do not allow now; shown to them as is."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def message_text(frame: F.SendMessage, max_chars: int) -> str:
    """The message as it will be said: without control or bidi-control characters (for
    every mode: they all come here), not empty, within the mode's length limit as the
    page counts it (chat_text.py)."""
    text = clean(frame.text).strip()
    if not text:
        raise InputRejected("empty", "Type a message first.")
    if utf16_length(text) > max_chars:
        raise InputRejected("too-long", f"Messages are limited to {max_chars} characters.")
    return text


@dataclass
class PersonView:
    """What one person at the table has been shown, and how their names map to the game's."""

    seat: str
    participant: Participant
    agent: HumanAgent
    role: Literal["interrogator", "witness"]
    alias_to_channel: dict[str, str]
    partner: dict[str, str]  # channel -> the seat at its other end
    messages: list[F.Message] = field(default_factory=list)
    last_sender: dict[str, str] = field(default_factory=dict)  # channel -> "you"/"them"
    phase: Literal["playing", "verdict", "ended"] = "playing"
    asked_end: bool = False  # the interrogator has ended the talk (a verdict may follow)
    reveal: F.Reveal | None = None
    outlets: set[Outlet] = field(default_factory=set)
    outbox: Outbox = field(default_factory=Outbox)  # this view's numbered frames (resume.py)
    pending: dict[str, str] = field(default_factory=dict)  # channel -> id of the message sent
    applied: dict[str, None] = field(default_factory=dict)  # input ids applied, oldest first
    acking: set[str] = field(default_factory=set)  # applied, acknowledged once committed
    # Their study rounds, this game counted (hub.open): whole-state frames carry it each time.
    rounds: F.Rounds | None = None

    @property
    def channel_to_alias(self) -> dict[str, str]:
        return {c: a for a, c in self.alias_to_channel.items()}

    def send(self, frame: F.ServerFrame) -> None:
        if isinstance(frame, F.WholeState) and F.carries_rounds(frame) and self.rounds is not None:
            frame = frame.model_copy(update={"rounds": self.rounds})
        if isinstance(frame, F._Sequenced) and not F.is_snapshot(frame):
            frame = self.outbox.stamp(frame)
        for outlet in list(self.outlets):
            outlet(frame)

    def remember(self, key: str | None) -> None:
        if key is None:
            return
        self.applied[key] = None
        if len(self.applied) > APPLIED_KEPT:
            del self.applied[next(iter(self.applied))]

    def already_applied(self, frame: F.ClientFrame) -> bool:
        """Whether `frame` is an input re-sent after it was applied (or while it is being
        applied): then it is not applied again, and its sender is told so (`ack`)."""
        key = getattr(frame, "id", None)
        if key is None:
            return False
        if key in self.applied:
            if key not in self.acking:  # else its ack goes once it is committed (state_game.py)
                self.send(F.Ack(ref=key))
            return True
        if not isinstance(frame, F.SendMessage):
            return False
        channel = self.alias_to_channel.get(frame.channel)
        if channel is not None and self.pending.get(channel) == key:
            return True  # on its way: the message frame that shows it is the answer
        text = clean(frame.text).strip()
        if frame.after is not None and any(
            m.n >= frame.after and m.sender == "you" and m.channel == frame.channel
            and m.text == text
            for m in self.messages
        ):  # fmt: skip
            # Said since the client last saw its chat: the send it repeats was applied (before
            # a takeover, so not remembered here). A client sends one message at a time per
            # chat, so its own message after `after` with this text is this one.
            self.remember(key)
            self.send(F.Ack(ref=key))
            return True
        return False

    def channel_of(self, alias: str) -> str:
        """The game's channel this person calls `alias`; refused if they have none so named."""
        try:
            return self.alias_to_channel[alias]
        except KeyError:
            raise InputRejected("bad-channel", f"There is no conversation {alias!r}.") from None

    def judge_only(self) -> None:
        if self.role != "interrogator":
            raise InputRejected("not-judge", "Only the interrogator decides.")

    def verdict_data(self, frame: F.Verdict, verdict: str) -> dict[str, Any]:
        """The interrogator's verdict as the game takes it (`verdict`: the mode's kind)."""
        data: dict[str, Any] = {"confidence": frame.confidence, "reason": clean(frame.reason)}
        if verdict == "which":
            seat = self.partner[self.channel_of(frame.choice)]  # the witness judged human
            data.update(human=seat, verdict=seat)
        elif frame.choice in ("human", "ai"):
            data.update(verdict=frame.choice)
        else:
            raise InputRejected("bad-verdict", "Choose 'human' or 'ai'.")
        return data

    def recount(self, channel: str) -> None:
        """Who spoke last on `channel`, from what was shown (a refused send did not count)."""
        alias = self.channel_to_alias.get(channel)
        said = [m.sender for m in self.messages if m.channel == alias and m.sender != "game"]
        if said:
            self.last_sender[channel] = said[-1]
        else:
            self.last_sender.pop(channel, None)

    def render(self, event: GameEvent, scrub: Callable[[str], str]) -> None:
        """Show what the table reported, in this person's names (`scrub`: a game's own words
        with seats and channels renamed)."""
        aliases = self.channel_to_alias
        if isinstance(event, MessageSaid):
            msg = event.message
            alias = aliases.get(msg.channel)
            if alias is None:  # an instruction on a channel this person has no window for
                if msg.sender != GAME:
                    return
                alias = next(iter(self.alias_to_channel))
            who: F.Sender = (
                "you" if msg.sender == self.seat else "game" if msg.sender == GAME else "them"
            )
            channel = self.alias_to_channel[alias]
            if who != "game":
                self.last_sender[channel] = who
            ref = self.pending.pop(channel, None) if who == "you" else None
            self.remember(ref)  # shown means committed: applied for good
            frame = F.Message(
                n=len(self.messages), channel=alias, sender=who, text=msg.text,
                at=msg.created_at, ref=ref,
            )  # fmt: skip
            self.messages.append(frame)
            self.send(frame)
        elif isinstance(event, Typing) and event.channel in aliases:
            # One frame per event: an AI's typing comes on a person's timeline from the game
            # (games/typing_timeline.py), a person's as their browser sends it.
            self.send(F.TypingShown(channel=aliases[event.channel]))
        elif isinstance(event, TalkEnded | VerdictAsked) and self.phase == "playing":
            self.phase = "verdict"  # the talk is over; the verdict (or waiting for it) follows
            self.send(F.Phase(phase="verdict"))
            self.drop_unsent()
        elif isinstance(event, InputRefused):  # the rules said no: tell the person, in our names
            self.recount(str(event.channel))  # their send did not count
            ref = self.pending.pop(str(event.channel), None)
            self.send(F.Error(code="refused", message=scrub(event.reason), ref=ref))
        # Anything else a game reports (its reveal: the arena makes its own from the result) is
        # not part of the protocol and is not forwarded.

    def drop_unsent(self) -> None:
        """Messages the person sent that the game will not say now the talk is over (it ended
        between their send and the game taking it): each is answered, or the page would show
        it "sending" and send it again until the person's next game."""
        for ref in self.pending.values():
            self.send(F.Error(code="too-late", message=TOO_LATE, ref=ref))
        self.pending.clear()
