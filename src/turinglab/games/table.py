"""The table a game is played at: seats, the shared transcript, and who may see each message.

Every message records who may see it (TextArena's observation routing) and the channel it
belongs to (three-party games keep one channel per witness). A participant's own view — what
its agent is given — is derived from the transcript: messages it sent become 'assistant' turns,
messages it could see become 'user' turns. The game never calls an agent directly: it asks the
table, which goes through the runner's retrying caller.

Messages can also be *pushed* (`post`): a person writes when they want, not only when the game
asks. Every appended message goes to `sink` at once, which is how the runner makes a message
durable the moment it is said. What people may see is reported to `observer` as events
(games/events.py): each message as `MessageSaid` to the seats that may see it, and whatever
else the game `show`s or `announce`s. The table knows no transport: the arena's observer
renders the events for browsers, after the store has committed the message they follow.

A message may carry images (PNG/JPEG, checked by their bytes). An agent sees them only if it
says it can (`sees_images = True`, e.g. the OpenAI-compatible agent); every other agent (local
GGUF models, ELIZA, scripted replies) gets the text with an "[image]" marker per image, so its
view stays plain text. People's transports get the images with the message.

A game can be played again over a history already at the table (`catch_up`: a live game
resumed in another process from its stored messages): until it has re-said them all, each
message it says or is told is the stored one at its place, checked to be the same, and no
agent is asked. A game whose moves follow from its messages alone (GTT) so resumes by
running its own code, with no second copy of its turn rules.
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from turinglab.agents.base import (
    Agent,
    AgentReply,
    CallContext,
    ChatMessage,
    ImagePart,
    Route,
    with_image_markers,
)
from turinglab.games.clock import REAL_CLOCK, Clock
from turinglab.games.events import GameEvent, GameObserver, MessageSaid
from turinglab.games.transcript import GAME, MAIN, TranscriptMessage


class Diverged(Exception):
    """A game played again over its stored messages says something else than they do."""


Caller = Callable[[Agent, list[ChatMessage], CallContext], Awaitable[AgentReply]]


MessageSink = Callable[[TranscriptMessage], None]


@dataclass(slots=True)
class Seat:
    """One participant of one trial: a role played by a fresh instance of an agent."""

    id: str  # e.g. "distinguisher", "unknown", "specimen", "interrogator", "witness_a"
    agent_name: str
    agent: Agent
    # "agent" (a model or program), "human" (a person), or "stand-in" (an agent playing a
    # person in a simulated study, marked as such in the data).
    kind: str = "agent"


@dataclass
class Table:
    seats: dict[str, Seat]
    caller: Caller
    seed: int
    messages: list[TranscriptMessage] = field(default_factory=list)
    calls: int = 0
    clock: Clock = REAL_CLOCK
    sink: MessageSink | None = None  # called with every message the moment it is appended
    observer: GameObserver | None = None  # told what people may see (None: nobody watches)
    # Merge consecutive same-role turns of a view into one (a game's note after a reply joins
    # that reply), as chat templates that demand user/assistant alternation need. Opt-in.
    alternate_roles: bool = False
    # While catching up (`catch_up`): how many stored messages the game has said again.
    _resaid: int | None = field(default=None, init=False, repr=False)

    def show(self, event: GameEvent, *seats: str) -> None:
        """Report an event for the given seats (a refusal, a request, typing shown)."""
        if self.observer is not None:
            self.observer.observe(event, seats)

    def announce(self, event: GameEvent) -> None:
        """Report an event for every seat at the table."""
        self.show(event, *self.seats)

    def tell(
        self, seat_id: str, text: str, *, phase: str = "main", channel: str = MAIN
    ) -> TranscriptMessage:
        """An instruction from the game, sent as an ordinary user message to one seat."""
        return self._append(GAME, text, (seat_id,), phase, channel=channel)

    def post(
        self,
        sender: str,
        text: str,
        *,
        visible_to: tuple[str, ...],
        channel: str = MAIN,
        phase: str = "main",
        reply: AgentReply | None = None,
        images: tuple[ImagePart, ...] = (),
    ) -> TranscriptMessage:
        """A message that arrived from outside the turn order (a person typed it), or one the
        game obtained itself and now delivers."""
        return self._append(
            sender, text, visible_to, phase, channel=channel, reply=reply, images=images
        )

    async def ask(
        self,
        seat_id: str,
        history: list[ChatMessage],
        *,
        stop: tuple[str, ...] = (),
        choices: tuple[str, ...] = (),
    ) -> AgentReply:
        """Call a seat's agent on a given history without appending anything (the game decides
        where the reply goes, e.g. which channel an AI interrogator addressed)."""
        if self.catching_up:  # the reply is the stored one: the call is counted, not made
            self.calls += 1
            return self._stored_reply(seat_id)
        seat = self.seats[seat_id]
        ctx = CallContext(seed=self._call_seed(), participant=seat_id, stop=stop, choices=choices)
        self.calls += 1
        return await self.caller(seat.agent, history, ctx)

    async def speak(
        self,
        seat_id: str,
        *,
        visible_to: tuple[str, ...] | None = None,
        phase: str = "main",
        stop: tuple[str, ...] = (),
        choices: tuple[str, ...] = (),
        channel: str = MAIN,
    ) -> TranscriptMessage:
        """Ask a seat for its next message; by default everyone at the table sees it."""
        reply = await self.ask(seat_id, self.view(seat_id), stop=stop, choices=choices)
        seen_by = visible_to or tuple(self.seats)
        return self._append(seat_id, reply.text, seen_by, phase, channel=channel, reply=reply)

    def view(self, seat_id: str, channel: str | None = None) -> list[ChatMessage]:
        """What a seat has seen, as its agent is given it; one channel's part when named."""
        seat = self.seats.get(seat_id)
        sees = seat is not None and bool(getattr(seat.agent, "sees_images", False))
        view = [
            ChatMessage(
                "assistant" if m.sender == seat_id else "user",
                m.text if sees else with_image_markers(m.text, len(m.images)),
                m.images if sees else (),
            )
            for m in self.messages
            if seat_id in m.visible_to and (channel is None or m.channel == channel)
        ]
        return alternating(view) if self.alternate_roles else view

    def history(self, seat_id: str) -> list[dict[str, str]]:
        """A participant's full history as stored and exported."""
        return [{"role": m.role, "content": m.content} for m in self.view(seat_id)]

    def routes(self) -> dict[str, dict[str, Any]]:
        """Route metadata per seat: agent name plus the route of its last reply."""
        out: dict[str, dict[str, Any]] = {
            sid: {"agent": seat.agent_name} for sid, seat in self.seats.items()
        }
        for m in self.messages:
            if m.route is not None and m.sender in out:
                out[m.sender].update(
                    backend=m.route.backend,
                    model=m.route.model,
                    base_url=m.route.base_url,
                    provider=m.route.provider,
                    display_name=m.route.display_name,
                )
        return out

    def _call_seed(self) -> int:
        # A distinct, reproducible seed per call: sha of (trial seed, call number).
        digest = hashlib.sha256(f"{self.seed}:{self.calls}".encode()).digest()
        return int.from_bytes(digest[:4], "big")

    def replay(self, said: list[TranscriptMessage]) -> None:
        """Messages said before, in another process that died (a game taken over from the
        store): appended with their own seq and time, passed to the sink, shown to people
        as when they were first said. Agents see them in their next view."""
        for msg in said:
            if msg.seq != len(self.messages):
                raise ValueError(f"replay: message {msg.seq} after {len(self.messages)} messages")
            self.messages.append(msg)
            if self.sink is not None:
                self.sink(msg)
            self._deliver(msg)

    def catch_up(self) -> None:
        """From now, the game is played again from its start over the messages already here
        (`replay`ed): see the module docstring. Calls are counted as when first made, so every
        call after the catch-up gets the seed it would have had (`_call_seed`)."""
        self._resaid = 0 if self.messages else None

    @property
    def catching_up(self) -> bool:
        """Whether the game has stored messages left to say again (then it plays on)."""
        return self._resaid is not None

    def _stored_reply(self, seat_id: str) -> AgentReply:
        assert self._resaid is not None
        msg = self.messages[self._resaid]
        if msg.sender != seat_id:
            raise Diverged(f"message {msg.seq}: asked {seat_id}, but {msg.sender} said it")
        return AgentReply(msg.text, msg.route or Route("stored", ""))

    def _resay(
        self, sender: str, text: str, visible_to: tuple[str, ...], phase: str, channel: str
    ) -> TranscriptMessage:
        """The stored message the game says again, if it is the same (else it played another
        game: its rules, prompts or config changed, or the history is not its own)."""
        assert self._resaid is not None
        msg = self.messages[self._resaid]
        said = (sender, text, tuple(visible_to), phase, channel)
        if (msg.sender, msg.text, msg.visible_to, msg.phase, msg.channel) != said:
            raise Diverged(f"message {msg.seq} was not what the game says there now")
        self._resaid += 1
        if self._resaid == len(self.messages):
            self._resaid = None  # caught up: what it says from now on is new
        return msg

    def _append(
        self,
        sender: str,
        text: str,
        visible_to: tuple[str, ...],
        phase: str,
        *,
        channel: str = MAIN,
        reply: AgentReply | None = None,
        images: tuple[ImagePart, ...] = (),
    ) -> TranscriptMessage:
        if self.catching_up:  # already stored, delivered and shown when it was replayed
            return self._resay(sender, text, visible_to, phase, channel)
        msg = TranscriptMessage(
            seq=len(self.messages),
            sender=sender,
            text=text,
            visible_to=visible_to,
            phase=phase,
            created_at=self.clock.now(),
            channel=channel,
            images=images,
        )
        if reply is not None:
            msg.route = reply.route
            msg.latency_s = reply.latency_s
            msg.tokens_in = reply.tokens_in
            msg.tokens_out = reply.tokens_out
        self.messages.append(msg)
        if self.sink is not None:
            self.sink(msg)
        self._deliver(msg)
        return msg

    def _deliver(self, msg: TranscriptMessage) -> None:
        """Those who may see a message are told the moment it exists (agents see it in their
        next view)."""
        self.show(MessageSaid(msg), *msg.visible_to)


def alternating(view: list[ChatMessage]) -> list[ChatMessage]:
    """Consecutive messages of one role joined into one (blank line between, images kept)."""
    out: list[ChatMessage] = []
    for m in view:
        if out and out[-1].role == m.role:
            last = out[-1]
            text = "\n\n".join(t for t in (last.content, m.content) if t)
            out[-1] = ChatMessage(m.role, text, last.images + m.images)
        else:
            out.append(m)
    return out
