"""What the processes of a cluster send each other over Redis pub/sub: a closed union of typed
messages, told apart by their `type`, parsed once on receipt (`parse_message`).

On a person's channel `to:<id>`, the process playing their game publishes each of their frames
(`Relayed`). On a process's channel `proc:<process>`, the others send it what concerns the games
it plays: an input of a person whose socket is theirs (`Input`), a socket's hello asking for the
frames it missed (`Hello`), that they hold a socket of someone (`Here`) or no longer (`Gone`),
whether they still do (`AskHolding`, from an owner whose listener was away), and an admin's end
of a game (`AdminEnd`).

Every process of a cluster runs the same code: a message this one does not know (a newer or older
process, a stray publish) is logged, once per kind, and dropped; it never stops the listener.
"""

from __future__ import annotations

import json
import logging
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from turinglab.arena.core.resume import ResumePoint

log = logging.getLogger(__name__)


class _Message(BaseModel):
    model_config = ConfigDict(frozen=True, populate_by_name=True)


class Relayed(_Message):
    """A frame for a person, from the process playing their game (on `to:<id>`). Short keys,
    `o` first: the relay is the hot path, its JSON spliced by `relayed_payload`, and a process
    knows its own publishes by how they begin."""

    origin: str = Field(validation_alias="o")  # the process that sent it
    type: Literal["frame"] = "frame"
    pid: str = Field(validation_alias="p")
    sent_at: float = Field(validation_alias="t")  # wall time, for the relay latency (metrics.py)
    # Kept as read: sockets take frames already dumped (app.py).
    frame: dict[str, Any] = Field(validation_alias="f")


class Hello(_Message):
    """`sender` holds a socket of `pid`, just connected or back after Redis was away: send the
    frames after `resume` (or a fresh state)."""

    type: Literal["hello"] = "hello"
    pid: str
    sender: str
    resume: ResumePoint | None = None


class Here(_Message):
    """`sender` holds a socket of `pid`: count them present through it (presence.py)."""

    type: Literal["here"] = "here"
    pid: str
    sender: str


class Gone(_Message):
    """`sender` no longer holds a socket of `pid`."""

    type: Literal["gone"] = "gone"
    pid: str
    sender: str


class AskHolding(_Message):
    """`sender`, back on Redis after its listener was away, asks whether this process still
    holds a socket of each of `pids` (each answered `Here` or `Gone`): a `Gone` published while
    it was not subscribed is lost, and it would count the person present for good."""

    type: Literal["ask-holding"] = "ask-holding"
    pids: list[str]
    sender: str


class Input(_Message):
    """A client frame of `pid`'s, as its page sent it, to play where their game is. `sender`: the
    process holding their socket, counting them present; None for a Leave passed on to the
    process where they wait blind."""

    type: Literal["input"] = "input"
    pid: str
    raw: str
    sender: str | None = None


class AdminEnd(_Message):
    """The admin, on another process, ends `game`, played on this one (admin_end.py)."""

    type: Literal["admin-end"] = "admin-end"
    game: str
    reason: str = ""


ToProcess = Hello | Here | Gone | AskHolding | Input | AdminEnd
Message = Annotated[Relayed | ToProcess, Field(discriminator="type")]
_MESSAGE: TypeAdapter[Relayed | ToProcess] = TypeAdapter(Message)
_unknown_logged: set[str] = set()


def parse_message(raw: str) -> Relayed | ToProcess | None:
    """The message `raw` holds; None for one this process does not know (logged once per kind)."""
    try:
        return _MESSAGE.validate_json(raw)
    except ValidationError as err:
        try:
            kind = str(json.loads(raw).get("type"))
        except (ValueError, AttributeError):
            kind = "not a JSON object"
        if kind not in _unknown_logged:
            _unknown_logged.add(kind)
            log.warning("redis: dropped a message this process does not know (%s): %s", kind, err)
        return None


def encode(message: ToProcess) -> str:
    return message.model_dump_json()


def relayed_payload(origin_prefix: str, pid: str, sent_at: float, frame_json: str) -> str:
    """A `Relayed` message's JSON, spliced rather than encoded again (pydantic wrote the frame's
    JSON itself). `origin_prefix` is `own_prefix(process)`."""
    return (
        f'{origin_prefix} "type": "frame", "p": {json.dumps(pid)}, "t": {sent_at:.6f}, '
        f'"f": {frame_json}}}'
    )


def own_prefix(process: str) -> str:
    """How every `Relayed` message `process` publishes begins."""
    return f'{{"o": {json.dumps(process)},'
