"""Task controls as pure checks, shared by the dataset importer and the browser pages: an
answer is either accepted or refused with every rule it breaks, each with a clear message.

Captioning (Zhang et al., Methods): at least 6 words; no special characters; written in more
than 4 s; no word more than 4 times; no "image"/"photo"; not a repeat of the previous answer.
Word association post-processing (Methods): singular nouns, present-tense verbs, letters only,
no stop words "according to Python nltk" (NLTK's 179-word English list, shipped here as
data/nltk_english_stopwords.txt so no corpus download is needed), no words under 3 letters, and
no association where one word of the pair contains the other ("grand" / "grandiose").
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from functools import cache
from importlib import resources

from turinglab.extras import require

MIN_CAPTION_WORDS = 6
MIN_RESPONSE_SECONDS = 4.0
MAX_IDENTICAL_WORDS = 4
BANNED_CAPTION_WORDS = frozenset({"image", "images", "photo", "photos"})
MIN_ASSOCIATION_LETTERS = 3
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
def stop_words() -> frozenset[str]:
    """NLTK's English stop words (nltk.corpus.stopwords.words("english"), 179 words)."""
    text = resources.files("turinglab.itt").joinpath("data/nltk_english_stopwords.txt")
    return frozenset(text.read_text(encoding="utf-8").split())


def _real_word(word: str) -> bool:
    from wordfreq import zipf_frequency

    return zipf_frequency(word, "en") > 0


def base_form(word: str) -> str:
    """Singular for a plural noun, present tense for an inflected verb — without turning real
    words into other words. A word lemminflect knows as a noun in its own right stays itself
    (morning, ceiling, pudding, news, species, series, evening, thing); otherwise its noun
    lemma, then its verb lemma; a word outside the dictionary gets lemminflect's rules only
    when they give a real word."""
    require("itt", "lemminflect", "word-association checks")
    from lemminflect import getAllLemmas, getLemma

    known = getAllLemmas(word)
    for upos in ("NOUN", "VERB"):
        lemmas = known.get(upos, ())
        if word in lemmas:
            return word
        if lemmas:
            return str(lemmas[0])
    for upos in ("NOUN", "VERB"):
        guess = getLemma(word, upos=upos, lemmatize_oov=True)
        if guess and guess[0] != word and _real_word(str(guess[0])):
            return str(guess[0])
    return word


def contains_cue(word: str, cue: str) -> bool:
    """One word of the pair contains the other (cat → hat and night → light are kept)."""
    return bool(word) and bool(cue) and (word in cue or cue in word)


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
    if letters in stop_words() or raw.strip().lower() in stop_words():
        return Association(cue, raw, None, "stop word")
    word = base_form(letters)
    if word in stop_words():
        return Association(cue, raw, None, "stop word")
    if len(word) < MIN_ASSOCIATION_LETTERS:
        return Association(cue, raw, None, f"fewer than {MIN_ASSOCIATION_LETTERS} letters")
    cue_letters = re.sub(r"[^a-z]", "", cue.lower())
    if contains_cue(word, base_form(cue_letters)) or contains_cue(letters, cue_letters):
        return Association(cue, raw, None, "one word contains the other")
    return Association(cue, raw, word)
