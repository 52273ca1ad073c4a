"""Codebooks: the shipped ones hold exactly the SPEC codes; user files are validated."""

from __future__ import annotations

from pathlib import Path

import pytest

from turinglab.tagging.codebooks import CodebookError, load_codebook

# SPEC §2 "Strategies and reasons" and §1 "Transcript diagnostics", category → code labels.
SPEC_STRATEGIES = {
    "Small talk": ["Daily activities", "Personal details"],
    "Situational awareness": ["Weather", "Time", "Surroundings", "Game-aware"],
    "Direct": ["Are you a bot/human?", "Accusation"],
    "Knowledge & reasoning": [
        "Current events",
        "String manipulation",
        "Logic & maths",
        "Scenario or game",
        "General knowledge",
        "Specialised knowledge",
        "Non-English",
    ],
    "Social & emotional": ["Emotion", "Human experience", "Humour", "Opinions", "Taboo", "Rude"],
    "Other": ["Strange", "No messages"],
}
SPEC_REASONS = {
    "Linguistic style": ["Formality", "Spelling & grammar", "Brevity vs verbosity", "Formatting"],
    "Interaction dynamics": [
        "Response timing",
        "Question handling",
        "Conversational flow",
        "Topic initiative",
    ],
    "Content & knowledge": ["Specific knowledge", "Personal details", "Lack of knowledge"],
    "Situational awareness": [
        "Game understanding",
        "Recent events",
        "Time & location",
        "Common ground",
    ],
    "Personality & emotions": ["Emotional expression", "Humour & wit", "Personality traits"],
    "Other": ["AI comparison", "Admits AI identity", "Uncertainty", "Gut feeling", "Unclear"],
}
SPEC_PROBES = {
    "Capability": ["Maths", "Science", "Coding", "Reasoning"],
    "Signature": [
        "Model identity",
        "Style",
        "Formatting",
        "Policy behaviour",
        "Exact compliance",
        "Self-reference",
    ],
    "Other": ["Other"],
}


@pytest.mark.parametrize(
    ("name", "spec"),
    [("strategies", SPEC_STRATEGIES), ("reasons", SPEC_REASONS), ("gtt_probes", SPEC_PROBES)],
)
def test_builtin_codebooks_hold_exactly_the_spec_codes(name: str, spec: dict) -> None:
    book = load_codebook(name)
    assert book.name == name
    assert list(book.categories) == list(spec)
    for category, labels in spec.items():
        assert [c.label for c in book.in_category(category)] == labels
    assert all(c.description for c in book.codes)
    assert len(set(book.ids)) == len(book.codes)


def test_code_lookup() -> None:
    book = load_codebook("strategies")
    assert book.category_of("are-you-a-bot") == "Direct"
    with pytest.raises(KeyError, match="nope"):
        book.code("nope")


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "book.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_user_codebook_loads(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "name: mine\ncategories:\n  - name: A\n    codes:\n"
        "      - {id: a-one, label: One, description: the first}\n",
    )
    book = load_codebook(path)
    assert book.ids == ("a-one",) and book.categories == ("A",)
    assert "decide" in book.task  # the default task sentence


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("name: x\n", "missing field\\(s\\) \\['categories'\\]"),
        ("name: x\ncategories: []\n", "non-empty list"),
        ("name: x\nsize: 3\ncategories: [{name: A, codes: []}]\n", "unknown field.*size"),
        (
            "name: x\ncategories: [{name: A, codes: [{id: Bad Id, label: L, description: d}]}]\n",
            "categories\\[0\\].codes\\[0\\].id: 'Bad Id' is not a slug",
        ),
        (
            "name: x\ncategories: [{name: A, codes: [{id: a, label: L, description: d},"
            " {id: a, label: M, description: e}]}]\n",
            "code 'a' appears twice",
        ),
        (
            "name: x\ncategories: [{name: A, codes: [{id: a, label: '', description: d}]}]\n",
            "label: expected a non-empty string",
        ),
        ("name: [unclosed\n", "not valid YAML"),
        ("- just\n- a list\n", "expected a mapping"),
    ],
)
def test_bad_codebooks_are_named(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(CodebookError, match=message):
        load_codebook(write(tmp_path, text))


def test_unknown_codebook_name() -> None:
    with pytest.raises(CodebookError, match="neither a built-in codebook"):
        load_codebook("no-such-book")
