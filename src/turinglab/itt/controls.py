"""Task controls as pure checks, shared by the dataset importer and the browser pages: an
answer is either accepted or refused with every rule it breaks, each with a clear message.

Captioning (Zhang et al., Methods): at least 6 words; no special characters; written in more
than 4 s; no word more than 4 times; no "image"/"photo"; not a repeat of the previous answer.
Word association post-processing: singular nouns, present-tense verbs, letters only, no stop
words, no words under 3 letters, and no association overlapping the cue by more than 60%.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from difflib import SequenceMatcher
from functools import cache

from turinglab.extras import require

MIN_CAPTION_WORDS = 6
MIN_RESPONSE_SECONDS = 4.0
MAX_IDENTICAL_WORDS = 4
BANNED_CAPTION_WORDS = frozenset({"image", "images", "photo", "photos"})
MIN_ASSOCIATION_LETTERS = 3
MAX_CUE_OVERLAP = 0.6
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


@cache
def _stop_words() -> frozenset[str]:
    require("itt", "sklearn", "word-association checks")
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return frozenset(ENGLISH_STOP_WORDS)


def base_form(word: str) -> str:
    """Singular for a plural noun, present tense for an inflected verb (lemminflect's
    dictionary, no context needed for one word)."""
    require("itt", "lemminflect", "word-association checks")
    from lemminflect import getLemma

    noun = getLemma(word, upos="NOUN")
    if noun and noun[0] != word:
        return str(noun[0])
    verb = getLemma(word, upos="VERB")
    return str(verb[0]) if verb else word


def cue_overlap(a: str, b: str) -> float:
    """Share of the shorter word covered by the longest substring both words share
    ("grand" in "grandiose" → 1.0)."""
    if not a or not b:
        return 0.0
    m = SequenceMatcher(None, a, b).find_longest_match(0, len(a), 0, len(b))
    return m.size / min(len(a), len(b))


@dataclass(frozen=True)
class Association:
    cue: str
    raw: str
    word: str | None  # the post-processed association; None when dropped
    dropped: str | None = None  # why it was dropped


def postprocess_association(cue: str, raw: str) -> Association:
    letters = re.sub(r"[^a-z]", "", raw.lower())
    if len(letters) < MIN_ASSOCIATION_LETTERS:
        return Association(cue, raw, None, f"fewer than {MIN_ASSOCIATION_LETTERS} letters")
    word = base_form(letters)
    if word in _stop_words() or letters in _stop_words():
        return Association(cue, raw, None, "stop word")
    if len(word) < MIN_ASSOCIATION_LETTERS:
        return Association(cue, raw, None, f"fewer than {MIN_ASSOCIATION_LETTERS} letters")
    cue_word = base_form(re.sub(r"[^a-z]", "", cue.lower()))
    if cue_overlap(word, cue_word) > MAX_CUE_OVERLAP:
        return Association(cue, raw, None, "overlaps the cue by more than 60%")
    return Association(cue, raw, word)
