"""A labelled offline baseline for the image tasks of the integrative Turing test, usable with
no endpoint and no model: it looks at pixel statistics only, and says so in every reply's route.

- Colour estimation: the named colour nearest the image's mean pixel (named_colours.py, the
  same rule as the fake vision model of the test server).
- Object detection: a fixed list of three words when the config gives one (e.g. the three most
  frequent object words of the lab's human answers, `objects`), else three words read from
  image statistics: its dominant colour, "dark" or "light", and "wide", "tall" or "square".
  These are not objects: the baseline is a floor, not an imitator.
- Anything else (captioning): a sentence of those statistics.

It answers the last image it was shown; with no image it says so rather than inventing one."""

from __future__ import annotations

import time

from turinglab.agents.base import AgentReply, CallContext, ChatMessage, Route
from turinglab.named_colours import dominant_colour, image_size, mean_rgb

BACKEND = "vision-baseline"
MODEL = "baseline: image statistics (mean-pixel colour), not a vision model"


def _statistics_words(image: bytes) -> list[str]:
    colour = dominant_colour(image)
    r, g, b = mean_rgb(image)
    light = "light" if 0.299 * r + 0.587 * g + 0.114 * b >= 128 else "dark"
    width, height = image_size(image)
    shape = "wide" if width > 1.2 * height else "tall" if height > 1.2 * width else "square"
    return [colour, light, shape]


class VisionBaselineAgent:
    sees_images = True

    def __init__(self, name: str, objects: tuple[str, ...] | None = None) -> None:
        self.name = name
        self.objects = objects

    @property
    def endpoint(self) -> str | None:
        return None

    def answer(self, history: list[ChatMessage]) -> str:
        shown = [img for m in history if m.role == "user" for img in m.images]
        asked = next((m.content for m in reversed(history) if m.role == "user"), "").lower()
        if not shown:
            return "I was shown no image."
        image = shown[-1].data
        if "dominant color" in asked:
            return dominant_colour(image)
        if "what do you see" in asked:
            return ", ".join(self.objects or _statistics_words(image))
        colour, light, shape = _statistics_words(image)
        return f"A {light} {shape} picture, mostly {colour}."

    async def reply(self, history: list[ChatMessage], ctx: CallContext) -> AgentReply:
        start = time.perf_counter()
        text = self.answer(history)
        return AgentReply(
            text=text,
            route=Route(backend=BACKEND, model=MODEL, display_name="vision baseline"),
            latency_s=time.perf_counter() - start,
        )

    async def aclose(self) -> None:
        return None
