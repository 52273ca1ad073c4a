"""Judging batches: half H / half M, models uniform, order shuffled, controls and exclusions."""

from __future__ import annotations

from collections import Counter

import pytest

from turinglab.itt.batches import Answer, Candidate, build_batch, screen


def candidates() -> list[Candidate]:
    humans = [
        Candidate(f"h{i}", "human", None, "conversation", "music", max_length=24)
        for i in range(100)
    ]
    # model "big" has 10× the responses of "small": the draw must still be ~uniform over models
    big = [
        Candidate(f"b{i}", "machine", "big", "conversation", "sports", max_length=24)
        for i in range(200)
    ]
    small = [
        Candidate(f"s{i}", "machine", "small", "conversation", "books", max_length=12)
        for i in range(20)
    ]
    return humans + big + small


def test_half_human_half_machine_and_models_uniform() -> None:
    models: Counter[str] = Counter()
    for seed in range(50):
        batch = build_batch(candidates(), 20, judge="j", seed=seed)
        sources = Counter(t.source for t in batch.trials)
        assert sources == {"human": 10, "machine": 10}
        assert len({t.item for t in batch.trials}) == 20
        models.update(t.model for t in batch.trials if t.model)
        assert all(
            t.length is not None and t.length <= (12 if t.model == "small" else 24)
            for t in batch.trials
        )
    share = models["small"] / (models["small"] + models["big"])
    assert 0.4 < share < 0.6


def test_order_is_shuffled_and_seeded() -> None:
    a = build_batch(candidates(), 20, judge="j", seed=1)
    b = build_batch(candidates(), 20, judge="j", seed=1)
    c = build_batch(candidates(), 20, judge="j", seed=2)
    assert a == b and a != c
    assert [t.source for t in a.trials] != ["human"] * 10 + ["machine"] * 10


def test_topic_control_question() -> None:
    batch = build_batch(candidates(), 10, judge="j", seed=3)
    for t in batch.trials:
        assert t.control is not None
        assert len(t.control.options) == 5 and t.control.answer in t.control.options


def test_batch_refuses_bad_sizes() -> None:
    with pytest.raises(ValueError, match="even number"):
        build_batch(candidates(), 7, judge="j", seed=0)
    with pytest.raises(ValueError, match="not enough"):
        build_batch(candidates()[:3], 10, judge="j", seed=0)


def test_screen_excludes_judges_and_drops_missed_controls() -> None:
    batch = build_batch(candidates(), 20, judge="good", seed=4)
    good = [
        Answer(t, "H", t.control.answer if i else "wrong")  # type: ignore[union-attr]
        for i, t in enumerate(batch.trials)
    ]
    bad = [
        Answer(t, "M", "wrong" if i < 10 else t.control.answer)  # type: ignore[union-attr]
        for i, t in enumerate(batch.trials)
    ]
    out = screen(
        {"good": good, "bad": bad}, min_control_accuracy=0.75, demographics={"good": {"age": "31"}}
    )
    assert out.excluded_judges == {"bad": 0.5}
    assert out.dropped_trials == 1
    assert len(out.judgements) == 19
    assert all(j.judge == "good" and j.demographics == {"age": "31"} for j in out.judgements)


def test_controls_on_every_trial_or_none() -> None:
    # imported human chats without a topic: a topic question only on machine trials would
    # give the source away, so the batch asks none
    cands = [Candidate(f"h{i}", "human", None, "conversation", None) for i in range(10)]
    cands += [Candidate(f"m{i}", "machine", "x", "conversation", "music") for i in range(10)]
    batch = build_batch(cands, 10, judge="j", seed=0)
    assert all(t.control is None for t in batch.trials)
