"""The paper's word-association rules: NLTK's stop words, lemmas that keep real words, and the
containment rule for the cue; `itt clean-words` applies them to a lab's own file."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from typer.testing import CliRunner

from turinglab.cli import app
from turinglab.itt.controls import base_form, postprocess_association, stop_words

runner = CliRunner()


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
        ("cat", "hat"), ("night", "light"), ("sing", "ring"), ("bright", "light"),
        ("hot", "fire"), ("sad", "cry"), ("front", "back"), ("top", "bottom"),
        ("empty", "full"), ("thick", "thin"), ("movie", "show"),
        ("night", "morning"), ("room", "ceiling"), ("dessert", "pudding"), ("night", "evening"),
    ],
)  # fmt: skip
def test_common_human_answers_are_kept(cue: str, answer: str) -> None:
    got = postprocess_association(cue, answer)
    assert (got.word, got.dropped) == (answer, None)


@pytest.mark.parametrize(
    ("cue", "answer", "why"),
    [
        ("grand", "grandiose", "one word contains the other"),
        ("sun", "sunshine", "one word contains the other"),
        ("teacher", "teach", "one word contains the other"),
        ("dog", "dogs", "one word contains the other"),
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
    src.write_text("cue,answer\ncat,Hats!\nrun,the\nnight,morning\n", encoding="utf-8-sig")
    out = tmp_path / "clean.csv"
    done = runner.invoke(app, ["itt", "clean-words", str(src), "--out", str(out)])
    assert done.exit_code == 0, done.output
    with out.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert [(r["cue"], r["answer"], r["cleaned"], r["reason"]) for r in rows] == [
        ("cat", "Hats!", "hat", ""),
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
