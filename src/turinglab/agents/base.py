"""The one interface every agent speaks: given what this role can see, say the next message.

Agents are stateless between calls: the game hands over the participant's whole view of the
conversation each time, so a "fresh instance" is simply a fresh history. This is what lets a
hosted LLM, a local GGUF model, ELIZA, a replayed transcript and a person share the game code.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

ChatRole = Literal["system", "user", "assistant"]
ImageType = Literal["image/png", "image/jpeg"]
MAX_IMAGE_BYTES = 2 * 1024 * 1024
IMAGE_MARKER = "[image]"  # what agents that cannot see images get in an image's place
_MAGIC: tuple[tuple[bytes, ImageType], ...] = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
)


class BadImage(ValueError):
    """Bytes that are not a PNG or JPEG image, or too large; the message says which."""


@dataclass(frozen=True, slots=True)
class ImagePart:
    """An image attached to a message. The media type is read from the bytes (magic numbers),
    never from a file name or a client's claim, so a mislabelled upload cannot pass."""

    media_type: ImageType
    data: bytes = field(repr=False)

    @classmethod
    def from_bytes(cls, data: bytes, max_bytes: int = MAX_IMAGE_BYTES) -> ImagePart:
        if not data:
            raise BadImage("image: empty")
        if len(data) > max_bytes:
            raise BadImage(f"image: {len(data)} bytes, more than the {max_bytes} allowed")
        for magic, media_type in _MAGIC:
            if data.startswith(magic):
                return cls(media_type, bytes(data))
        raise BadImage("image: not a PNG or JPEG file")

    @classmethod
    def from_data_url(cls, url: str, max_bytes: int = MAX_IMAGE_BYTES) -> ImagePart:
        head, sep, payload = url.partition(",")
        if not sep or not head.startswith("data:") or not head.endswith(";base64"):
            raise BadImage("image: not a base64 data URL")
        try:
            data = base64.b64decode(payload, validate=True)
        except ValueError:
            raise BadImage("image: the data URL is not valid base64") from None
        return cls.from_bytes(data, max_bytes)

    @property
    def data_url(self) -> str:
        return f"data:{self.media_type};base64,{base64.b64encode(self.data).decode()}"


@dataclass(frozen=True, slots=True)
class ChatMessage:
    """One message of a participant's own view: 'user' = received, 'assistant' = said by it.
    `images` are only ever set for agents that declare `sees_images = True` (Table.view);
    every other agent gets an IMAGE_MARKER in the text instead."""

    role: ChatRole
    content: str
    images: tuple[ImagePart, ...] = ()


def with_image_markers(text: str, count: int) -> str:
    """The text as an agent that cannot see images gets it: one marker per image."""
    if count == 0:
        return text
    markers = " ".join([IMAGE_MARKER] * count)
    return f"{text}\n{markers}" if text else markers


def without_image_markers(text: str) -> str:
    """A model's reply as a person sees it: the "[image]" markers it was given (and may echo,
    a text-only model in the STT) are scaffolding, not something a witness types."""
    if IMAGE_MARKER not in text:
        return text
    lines = [" ".join(line.replace(IMAGE_MARKER, " ").split()) for line in text.split("\n")]
    return "\n".join(line for line in lines if line).strip()


@dataclass(frozen=True, slots=True)
class Route:
    """Where a reply came from, as recorded with the trial (GTT appendix B.1)."""

    backend: str  # "openai", "local", "eliza", "scripted", "human"
    model: str  # model id or file name
    base_url: str | None = None
    provider: str | None = None  # the provider the response names (OpenRouter's "provider")
    display_name: str | None = None


@dataclass(frozen=True, slots=True)
class AgentReply:
    text: str
    route: Route
    tokens_in: int | None = None
    tokens_out: int | None = None
    latency_s: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class CallContext:
    """Per-call facts an agent may use: a seed derived from the trial seed, never the global RNG."""

    seed: int
    participant: str = ""
    stop: tuple[str, ...] = ()
    # When set, the game needs exactly one of these strings (a forced choice). Agents that can
    # constrain decoding (local GGUF models) do; the others may ignore it, and the game parses.
    choices: tuple[str, ...] = ()


@runtime_checkable
class Agent(Protocol):
    """Anything that can answer. `endpoint` names the rate-limit pool its calls share
    (base_url + key for hosted models, the model file for local ones, None for free agents)."""

    name: str

    @property
    def endpoint(self) -> str | None: ...

    async def reply(self, history: list[ChatMessage], ctx: CallContext) -> AgentReply: ...

    async def aclose(self) -> None: ...
