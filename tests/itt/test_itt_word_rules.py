"""The paper's word-association rules (itt/word_rules.py): NLTK's stop words, lemmas that keep
real words, the English word list, the 60% similarity rule and echoed instructions; `itt
clean-words` applies them to a lab's own file."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from typer.testing import CliRunner

from turinglab.cli import app
from turinglab.itt.tasks import WORD_PROMPT, check_agent
from turinglab.itt.word_rules import base_form, postprocess_association, stop_words

runner = CliRunner()
SIMILAR = "too similar to the cue (over 60% shared)"
TYPO = "not an English word (typo or other language)"
STOP = "stop word"
SHORT = "fewer than 3 letters"

# cue, answer, the word kept or the reason it is refused — one row per clause of the paper's
# rule (Methods, word association), in its order.
TABLE = [
    # nouns to the singular
    ("pet", "Cats", "cat"), ("school", "children", "child"), ("cheese", "mice", "mouse"),
    ("forest", "wolves", "wolf"), ("dentist", "teeth", "tooth"), ("kitchen", "knives", "knife"),
    ("farm", "geese", "goose"), ("garden", "flowers", "flower"), ("city", "buses", "bus"),
    ("desert", "cacti", "cactus"),
    # ... except plurale tantum and nouns that are words of their own
    ("leg", "pants", "pants"), ("summer", "shorts", "shorts"), ("paper", "scissors", "scissors"),
    ("eye", "glasses", "glasses"), ("denim", "jeans", "jeans"), ("wardrobe", "clothes", "clothes"),
    ("music", "headphones", "headphones"), ("tool", "pliers", "pliers"),
    ("television", "news", "news"), ("animal", "species", "species"),
    ("sunrise", "morning", "morning"), ("room", "ceiling", "ceiling"),
    ("dessert", "pudding", "pudding"), ("dusk", "evening", "evening"),
    ("office", "meeting", "meeting"), ("bride", "wedding", "wedding"), ("flower", "rose", "rose"),
    ("brain", "thought", "thought"), ("wheel", "spoke", "spoke"),
    # verbs to the base (present-tense) form
    ("food", "ate", "eat"), ("jog", "running", "run"), ("pool", "swimming", "swim"),
    ("bird", "flew", "fly"), ("choir", "sang", "sing"), ("shirt", "wore", "wear"),
    ("war", "fought", "fight"), ("bed", "slept", "sleep"), ("sprint", "ran", "run"),
    ("house", "building", "build"),
    # typos and non-English words refused
    ("animal", "elefant", TYPO), ("rain", "umbrela", TYPO), ("dog", "perro", TYPO),
    ("cat", "gato", TYPO), ("sun", "sonne", TYPO), ("hello", "bonjour", TYPO),
    ("keyboard", "qwertyy", TYPO),
    # non-alphabetical characters and spaces removed (a glued non-word is then a typo)
    ("sky", " blue. ", "blue"), ("fruit", "Apple!!", "apple"), ("night", "star-s", "star"),
    ("pet", "the cat", TYPO), ("summer", "ice cream", TYPO), ("sky", "123", SHORT),
    # stop words and words under 3 letters dropped
    ("run", "the", STOP), ("run", "Couldn't", STOP), ("me", "myself", STOP),
    ("happy", "ok", SHORT), ("water", "H2O", SHORT),
    # the 60% rule: more than 60% of one word, contiguous, inside the other
    ("grand", "grandiose", SIMILAR), ("cat", "hat", SIMILAR), ("night", "light", SIMILAR),
    ("sing", "ring", SIMILAR), ("happy", "happiness", SIMILAR), ("beauty", "beautiful", SIMILAR),
    ("decide", "decision", SIMILAR), ("bright", "light", SIMILAR), ("sun", "sunshine", SIMILAR),
    ("speak", "spoke", SIMILAR), ("leaf", "leaves", SIMILAR), ("friend", "friendship", SIMILAR),
    ("table", "cable", SIMILAR), ("rain", "Rains", SIMILAR),
    # ... and pairs that share 60% or less are kept
    ("sharp", "shade", "shade"), ("cat", "dog", "dog"), ("night", "moon", "moon"),
    ("hot", "cold", "cold"), ("teacher", "school", "school"), ("bread", "butter", "butter"),
    ("king", "queen", "queen"), ("winter", "snow", "snow"),
]  # fmt: skip


@pytest.mark.parametrize(("cue", "answer", "expected"), TABLE)
def test_the_papers_rules_table(cue: str, answer: str, expected: str) -> None:
    got = postprocess_association(cue, answer)
    refusals = {SIMILAR, TYPO, STOP, SHORT}
    if expected in refusals:
        assert (got.word, got.dropped) == (None, expected)
    else:
        assert (got.word, got.dropped) == (expected, None)


def test_the_table_is_large() -> None:
    assert len(TABLE) >= 60


@pytest.mark.parametrize(
    "reply",
    ["Name one word that you associate with the word 'dog'.", "name one word that you associate"],
)
def test_a_models_echoed_instruction_is_refused(reply: str) -> None:
    checked = check_agent("word-association", "dog", reply)
    assert checked.text is None
    assert "echoed the instruction" in checked.violations[0].message


def test_a_bare_answer_is_not_an_echo() -> None:
    assert check_agent("word-association", "dog", "Bone").text == "bone"
    assert check_agent("word-association", "dog", "The word is cat").text is None  # stop word
    assert WORD_PROMPT.startswith("Name one word")


def test_the_stop_list_is_nltks_179_words() -> None:
    words = stop_words()
    assert len(words) == 179
    assert {"the", "and", "couldn't", "ourselves", "y"} <= words
    # scikit-learn's list refused these common answers; NLTK's does not hold them
    assert not {"fire", "cry", "back", "bottom", "full", "thin", "show"} & words


@pytest.mark.parametrize(
    "word", ["morning", "ceiling", "pudding", "news", "species", "series", "evening", "thing"]
)
def test_real_words_stay_themselves(word: str) -> None:
    assert base_form(word) == word


@pytest.mark.parametrize(
    ("word", "lemma"), [("cats", "cat"), ("ate", "eat"), ("children", "child"), ("ran", "run")]
)
def test_plural_nouns_and_inflected_verbs_are_reduced(word: str, lemma: str) -> None:
    assert base_form(word) == lemma


@pytest.mark.parametrize(
    ("cue", "answer"),
    [
        ("hot", "fire"), ("sad", "cry"), ("front", "back"), ("top", "floor"),
        ("empty", "full"), ("thick", "wall"), ("movie", "show"),
        ("night", "morning"), ("room", "ceiling"), ("dessert", "pudding"), ("night", "evening"),
    ],
)  # fmt: skip
def test_common_human_answers_are_kept(cue: str, answer: str) -> None:
    got = postprocess_association(cue, answer)
    assert (got.word, got.dropped) == (answer, None)


@pytest.mark.parametrize(
    ("cue", "answer", "why"),
    [
        ("grand", "grandiose", SIMILAR),
        ("sun", "sunshine", SIMILAR),
        ("teacher", "teach", SIMILAR),
        ("dog", "dogs", SIMILAR),
        ("run", "the", "stop word"),
        ("run", "Couldn't", "stop word"),
        ("happy", "ok", "fewer than 3 letters"),
    ],
)
def test_refusals_say_why(cue: str, answer: str, why: str) -> None:
    got = postprocess_association(cue, answer)
    assert (got.word, got.dropped) == (None, why)


def test_clean_words_command(tmp_path: Path) -> None:
    src = tmp_path / "mine.csv"
    src.write_text("cue,answer\ncat,Mice!\nrun,the\nnight,morning\n", encoding="utf-8-sig")
    out = tmp_path / "clean.csv"
    done = runner.invoke(app, ["itt", "clean-words", str(src), "--out", str(out)])
    assert done.exit_code == 0, done.output
    with out.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert [(r["cue"], r["answer"], r["cleaned"], r["reason"]) for r in rows] == [
        ("cat", "Mice!", "mouse", ""),
        ("run", "the", "", "stop word"),
        ("night", "morning", "morning", ""),
    ]
    assert "3 answers: 2 kept, 1 refused" in done.output


def test_clean_words_refuses_a_file_without_the_columns(tmp_path: Path) -> None:
    src = tmp_path / "bad.csv"
    src.write_text("word,response\ncat,hat\n")
    done = runner.invoke(app, ["itt", "clean-words", str(src), "--out", str(tmp_path / "o.csv")])
    assert done.exit_code == 2
    assert done.output.strip() == f"error: {src}: needs columns cue and answer (has word, response)"
