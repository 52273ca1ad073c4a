"""BLEU-4 and CIDEr-D as the COCO caption evaluation computes them, with every human reference
of a stimulus, and detectability per model that never pools judge types or tasks."""

from __future__ import annotations

import pytest

from turinglab.itt.judgements import JudgementRow
from turinglab.itt.metrics import model_table
from turinglab.itt.quality import _approximate, bleu, cider, tokenize, tokenizer_name


def test_tokenizer_is_coco_s() -> None:
    got = tokenize({0: ["A dog, running on the GRASS!", "Don't stop."]})
    assert got == {0: ["a dog running on the grass", "do n't stop"]}
    # the fallback without java agrees on these
    assert [_approximate(t) for t in ("A dog, running on the GRASS!", "Don't stop.")] == got[0]
    assert tokenizer_name().startswith("Stanford")  # java is on this machine


def test_bleu4_uses_every_reference_and_is_case_and_punctuation_blind() -> None:
    refs = ["a man rides a horse on the beach", "a person riding a brown horse near the sea"]
    hyp = ["A person riding a brown horse near the sea."]
    assert bleu(hyp, [refs]) == pytest.approx(100.0)
    assert bleu(hyp, [refs[:1]]) < 20  # one reference, as before, misses the match
    # a 3-word answer has no 4-grams: COCO's BLEU-4 is then ~0, not sacrebleu's smoothed value
    assert bleu(["a brown horse"], [refs]) < 1.0


def test_cider_d_rewards_consensus_across_images() -> None:
    refs = [
        ["a man rides a horse on the beach", "a person riding a horse near the sea"],
        ["two dogs play in the snow", "dogs playing in snow"],
        ["a red bus on a city street", "a bus drives down the street"],
    ]
    good = ["a man rides a horse on the beach", "two dogs play in the snow", "a red bus"]
    bad = ["the cat sleeps", "a red car", "a kitchen"]
    assert cider(good, refs) > 1.0 > 0.1 > cider(bad, refs)
    with pytest.raises(ValueError, match="at least one reference"):
        bleu(["x"], [[]])


def judged(
    judge_type: str, task: str, source: str, label: str, model: str | None, n: int
) -> list[JudgementRow]:
    return [
        JudgementRow(
            judge=f"person-{task}-{k}" if judge_type == "human" else "svm",
            judge_type=judge_type,  # type: ignore[arg-type]
            item=f"{task}-{source}-{model}-{k}",
            source=source,  # type: ignore[arg-type]
            model=model,
            label=label,  # type: ignore[arg-type]
            task=task,
        )
        for k in range(n)
    ]


def test_a_model_is_scored_only_against_its_own_judges_and_task() -> None:
    # people judged captions (7 humans called H) and AI judges words (6 humans called H);
    # the old pooled table gave the captioning model hh = 13
    rows = judged("human", "captioning", "human", "H", None, 7)
    rows += judged("human", "captioning", "machine", "M", "blip", 5)
    rows += judged("ai", "word-association", "human", "H", None, 6)
    rows += judged("ai", "word-association", "machine", "H", "gpt", 4)
    table = model_table(rows, replicates=100)
    assert set(table) == {"blip", "gpt"}
    assert table["blip"]["human judges"]["captioning"]["counts"] == {
        "hh": 7,
        "hm": 0,
        "mh": 0,
        "mm": 5,
    }
    assert set(table["blip"]) == {"human judges"} and set(table["gpt"]) == {"svm"}
    assert table["gpt"]["svm"]["word-association"]["detectability"] == 0.5
