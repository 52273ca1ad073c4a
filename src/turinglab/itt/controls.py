"""Task controls as pure checks, shared by the dataset importer and the browser pages: an
answer is either accepted or refused with every rule it breaks, each with a clear message.

Captioning (Zhang et al., Methods): at least 6 words; no special characters; written in more
than 4 s; no word more than 4 times; no "image"/"photo"; not a repeat of the previous answer.
Word-association post-processing lives in word_rules.py.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

MIN_CAPTION_WORDS = 6
MIN_RESPONSE_SECONDS = 4.0
MAX_IDENTICAL_WORDS = 4
BANNED_CAPTION_WORDS = frozenset({"image", "images", "photo", "photos"})
_SPECIAL = re.compile(r"[^A-Za-z0-9\s.,;:!?'\"()\-]")
_WORD = re.compile(r"[A-Za-z0-9']+")


@dataclass(frozen=True)
class Violation:
    rule: str  # a stable code the page can key on
    message: str  # what the person reads


def check_caption(
    text: str, seconds: float | None = None, previous: str | None = None
) -> list[Violation]:
    """Every captioning rule `text` breaks (empty list: accepted)."""
    words = [w.lower() for w in _WORD.findall(text)]
    out: list[Violation] = []
    if len(words) < MIN_CAPTION_WORDS:
        out.append(
            Violation("min-words", f"write at least {MIN_CAPTION_WORDS} words ({len(words)} now)")
        )
    bad = sorted(set(_SPECIAL.findall(text)))
    if bad:
        out.append(Violation("special-characters", f"remove special characters: {' '.join(bad)}"))
    if seconds is not None and seconds <= MIN_RESPONSE_SECONDS:
        out.append(
            Violation("too-fast", f"take more than {MIN_RESPONSE_SECONDS:g} s to describe it")
        )
    repeated = [w for w, n in Counter(words).items() if n > MAX_IDENTICAL_WORDS]
    if repeated:
        out.append(
            Violation(
                "identical-words",
                f"use no word more than {MAX_IDENTICAL_WORDS} times ({', '.join(repeated)})",
            )
        )
    banned = sorted(BANNED_CAPTION_WORDS.intersection(words))
    if banned:
        out.append(Violation("mentions-medium", f"describe the scene, not the {banned[0]}"))
    if previous is not None and _normal(previous) == _normal(text):
        out.append(Violation("repeat", "this repeats your previous answer"))
    return out


def _normal(text: str) -> str:
    return " ".join(_WORD.findall(text.lower()))
