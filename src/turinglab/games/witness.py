"""The AI witness's instructions (Jones & Bergen): persona part + study part + helpful
information, with per-game values sampled from the trial seed.

Per game: a first name from a list of common US names; a city drawn with weights (site traffic
× how likely people there are awake at the game's local start time); the languages spoken
there (English, the city's most common other language, and each further one with probability
equal to its share of speakers); and three times in the city's time zone (game start, now,
time remaining), rendered afresh before every message.

The prompt reaches the agent as the opening of its first user message (merged with the
interrogator's first message), not as a system message: the local GGUF agent's completion mode
drops system messages, and GTT's role instructions travel the same way.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from importlib import resources
from typing import Any, Literal
from zoneinfo import ZoneInfo

from turinglab.agents.base import ChatMessage
from turinglab.prompts import builtin_prompt, render

Persona = Literal["persona", "no-persona", "none"]  # "none": no prompt at all (ELIZA)
PERSONA_PROMPTS = {"persona": "witness_persona", "no-persona": "witness_no_persona"}
PROMPT_NAMES = (
    "witness_persona",
    "witness_no_persona",
    "witness_study",
    "witness_helpful",
    "witness_human",
)


@dataclass(frozen=True)
class City:
    city: str
    country: str
    tz: str
    weight: float
    languages: dict[str, float]  # other languages -> share of speakers


@dataclass(frozen=True)
class WitnessFacts:
    """The sampled per-game values; recorded in the trial's params."""

    name: str
    city: str
    country: str
    tz: str
    languages: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "city": self.city,
            "country": self.country,
            "tz": self.tz,
            "languages": list(self.languages),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> WitnessFacts:
        return cls(
            name=str(data["name"]),
            city=str(data["city"]),
            country=str(data["country"]),
            tz=str(data["tz"]),
            languages=tuple(data["languages"]),
        )


def _data(name: str) -> str:
    return (resources.files("turinglab.games") / "data" / name).read_text(encoding="utf-8")


@cache
def names() -> tuple[str, ...]:
    return tuple(line.strip() for line in _data("names.txt").splitlines() if line.strip())


@cache
def cities() -> tuple[City, ...]:
    return tuple(City(**row) for row in json.loads(_data("cities.json")))


def availability(local_hour: int) -> float:
    """How likely someone is free to play at a local hour (the paper's shape: busy days,
    empty small hours)."""
    if 8 <= local_hour < 17:
        return 0.7
    if 2 <= local_hour < 5:
        return 0.1
    return 0.4


def sample_facts(seed: int, start_time: float) -> WitnessFacts:
    rng = random.Random(seed)
    name = rng.choice(names())
    options = cities()
    weights = [
        c.weight * availability(datetime.fromtimestamp(start_time, ZoneInfo(c.tz)).hour)
        for c in options
    ]
    city = rng.choices(options, weights=weights)[0]
    ranked = sorted(city.languages.items(), key=lambda kv: -kv[1])
    spoken = ["English"]
    for i, (language, share) in enumerate(ranked):
        if i == 0 or rng.random() < share:
            spoken.append(language)
    return WitnessFacts(name, city.city, city.country, city.tz, tuple(spoken))


def _local(moment: float, tz: str) -> str:
    return datetime.fromtimestamp(moment, ZoneInfo(tz)).strftime("%Y-%m-%d %H:%M:%S %Z")


def _remaining(seconds: float) -> str:
    seconds = max(0, int(seconds))
    return f"{seconds // 60}:{seconds % 60:02d}"


@dataclass(frozen=True)
class WitnessPrompt:
    """Builds an AI witness's instructions for one game."""

    persona: Persona
    facts: WitnessFacts
    time_limit_s: float
    max_chars: int
    three_party: bool = True
    stand_in: bool = False  # a model told to play the human witness

    def text(self, start: float, now: float) -> str:
        values = {
            **self.facts.to_json(),
            "languages": ", ".join(self.facts.languages),
            "start_time": _local(start, self.facts.tz),
            "current_time": _local(now, self.facts.tz),
            "remaining": _remaining(self.time_limit_s - (now - start)),
            "minutes": f"{self.time_limit_s / 60:g}",
            "max_chars": self.max_chars,
            "setup": (
                "The Interrogator chats with two Witnesses at once: one is a person, one is an AI."
                if self.three_party
                else "The Interrogator chats with one Witness, who is either a person or an AI."
            ),
        }
        if self.stand_in:
            return render(builtin_prompt("witness_human"), **values)
        if self.persona == "none":
            return ""
        parts = [
            builtin_prompt(PERSONA_PROMPTS[self.persona]),
            builtin_prompt("witness_study"),
            builtin_prompt("witness_helpful"),
        ]
        return render("\n\n".join(p.strip() for p in parts), **values)

    def history(self, view: list[ChatMessage], start: float, now: float) -> list[ChatMessage]:
        """The witness's view with its instructions opening the first user message."""
        text = self.text(start, now)
        if not text:
            return view
        if view and view[0].role == "user":
            return [ChatMessage("user", f"{text}\n\n{view[0].content}"), *view[1:]]
        return [ChatMessage("user", text), *view]


def identity() -> dict[str, str]:
    """Prompt texts and data files that determine witness behaviour (part of a run's id)."""
    out = {name: builtin_prompt(name) for name in PROMPT_NAMES}
    out["names"] = _data("names.txt")
    out["cities"] = _data("cities.json")
    return out
