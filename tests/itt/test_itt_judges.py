"""AI judges: grouped CV must not leak conversations; extrapolation; scanpaths; real MiniLM."""

from __future__ import annotations

import numpy as np
import pytest

from turinglab.itt.ai_judges import Sample, cross_validate, extrapolate
from turinglab.itt.metrics import confusion
from turinglab.itt.scanpath import scanpath_features


def leaky_dataset(n_conv: int = 60, per_conv: int = 8, dim: int = 64, seed: int = 0):
    """Sentences that carry only a per-conversation marker (a random direction) and noise; the
    source is drawn per conversation and is otherwise invisible. A judge that sees other
    sentences of the same conversation in training can read the source off the marker; one
    that does not can only guess."""
    rng = np.random.default_rng(seed)
    feats, samples = [], []
    for c in range(n_conv):
        marker = rng.normal(size=dim) * 5
        source = "human" if c % 2 == 0 else "machine"
        for s in range(per_conv):
            feats.append(marker + rng.normal(size=dim))
            samples.append(Sample(f"c{c}-{s}", f"c{c}", source, None if source == "human" else "m"))
    return np.array(feats), samples


def test_grouped_cv_scores_chance_where_ungrouped_cv_leaks() -> None:
    # 60 conversations are 60 independent points: one dataset's estimate spreads by ±0.1,
    # so chance is checked on the mean of several
    d_grouped = []
    for seed in range(6):
        feats, samples = leaky_dataset(seed=seed)
        grouped = cross_validate(feats, samples, judge="g", folds=10, seeds=(0, 1, 2))
        ungrouped = cross_validate(
            feats, samples, judge="u", folds=10, seeds=(0, 1, 2), grouped=False
        )
        d_grouped.append(confusion(grouped.judgements).detectability)
        d_ungrouped = confusion(ungrouped.judgements).detectability
        assert len(grouped.judgements) == 3 * len(samples)  # each predicted once per seed
        assert d_ungrouped > 0.8, d_ungrouped
    assert abs(float(np.mean(d_grouped)) - 0.5) < 0.08, d_grouped


def test_grouped_folds_never_split_a_conversation() -> None:
    from turinglab.itt.ai_judges import fold_plan

    feats, samples = leaky_dataset(n_conv=30)
    groups = np.array([s.group for s in samples])
    plan = fold_plan(feats, list(groups), folds=10, seeds=(0, 1))
    for parts in plan.parts:
        assert sorted(np.concatenate([test for _, test, _ in parts])) == list(range(len(groups)))
        for train, test, _ in parts:
            assert not set(groups[train]) & set(groups[test])


def separable(models: tuple[str, ...] = ("a", "b", "c"), n: int = 40, seed: int = 1):
    """Humans around one point; every model shifted the same way, with its own offset."""
    rng = np.random.default_rng(seed)
    feats, samples = [], []
    shared = rng.normal(size=16)
    for i in range(n * 2):
        feats.append(rng.normal(size=16))
        samples.append(Sample(f"h{i}", f"gh{i}", "human", None))
    for m in models:
        own = rng.normal(size=16) * 0.3
        for i in range(n):
            feats.append(rng.normal(size=16) + shared + own)
            samples.append(Sample(f"{m}{i}", f"g{m}{i}", "machine", m))
    return np.array(feats), samples


def test_cv_detects_separable_sources() -> None:
    feats, samples = separable()
    res = cross_validate(feats, samples, judge="svm", folds=10, seeds=(0,))
    assert confusion(res.judgements).detectability > 0.85


def test_extrapolation_modes_hold_out_the_right_agents() -> None:
    feats, samples = separable()
    train_one = extrapolate(feats, samples, judge="svm", mode="train-one")
    assert set(train_one) == {"a", "b", "c"}
    for model, rows in train_one.items():
        assert model not in {r.model for r in rows}  # tested on the *other* models
        assert {r.source for r in rows} == {"human", "machine"}
        assert confusion(rows).detectability > 0.75
    loo = extrapolate(feats, samples, judge="svm", mode="leave-one-out")
    for model, rows in loo.items():
        assert {r.model for r in rows if r.model} == {model}
    with pytest.raises(ValueError, match="unknown extrapolation mode"):
        extrapolate(feats, samples, judge="svm", mode="sideways")


def test_scanpath_judge_tells_shifted_scanpaths_apart() -> None:
    rng = np.random.default_rng(2)
    paths, sizes, samples = [], [], []
    for i in range(60):
        human = i % 2 == 0
        # the "model" drifts to the upper left of the image; people look around the middle
        cx, cy = (450, 330) if human else (250, 180)
        n_fix = int(rng.integers(4, 12))
        path = [
            (
                float(np.clip(cx + rng.normal() * 120, 0, 800)),
                float(np.clip(cy + rng.normal() * 120, 0, 600)),
            )
            for _ in range(n_fix)
        ]
        paths.append(path)
        sizes.append((800.0, 600.0))
        samples.append(
            Sample(
                f"p{i}",
                f"img{i // 2}",
                "human" if human else "machine",
                None if human else "centre-model",
                task="attention",
            )
        )
    feats = scanpath_features(paths, sizes)
    assert feats.shape == (60, 20) and feats.min() >= -1 and feats.max() <= 1
    res = cross_validate(feats, samples, judge="svm-scanpath", folds=5, seeds=(0, 1))
    assert confusion(res.judgements).detectability > 0.8
    with pytest.raises(ValueError, match="no fixations"):
        scanpath_features([[]], [(10.0, 10.0)])


@pytest.mark.slow
def test_minilm_embeddings_are_real_and_separate_styles() -> None:
    from turinglab.itt.embeddings import embed

    human = [
        "lol yeah i was at work all day",
        "haha same, my boss is so annoying",
        "omg did u see the game last night",
        "nah i was sleeping tbh",
        "ugh mondays am i right",
        "brb gotta feed the dog",
    ] * 3
    machine = [
        "As an AI language model, I find that question fascinating.",
        "Certainly! Here are three key points to consider.",
        "I'm so glad you asked! Let me explain in detail.",
        "That's a wonderful question about technology and society.",
        "In conclusion, there are many perspectives on this topic.",
        "I appreciate your curiosity about this subject.",
    ] * 3
    run = embed(human + machine)
    assert run.vectors.shape == (36, 384)
    assert np.allclose(np.linalg.norm(run.vectors, axis=1), 1.0, atol=1e-4)
    samples = [Sample(f"h{i}", f"h{i % 6}", "human", None) for i in range(18)]
    samples += [Sample(f"m{i}", f"m{i % 6}", "machine", "x") for i in range(18)]
    res = cross_validate(run.vectors, samples, judge="svm-minilm", folds=3, seeds=(0,))
    assert confusion(res.judgements).detectability > 0.9


@pytest.mark.slow
def test_grouped_cv_does_not_leak_with_real_text_embeddings() -> None:
    """The same check on text: every sentence of a conversation carries that conversation's
    made-up marker word; sentences come from one pool for both sources. Only the marker tells
    the source, and only to a judge that trained on the same conversation."""
    import random

    from turinglab.itt.embeddings import embed

    rng = random.Random(0)
    pool = [
        "I went to the store today.",
        "The weather was nice this morning.",
        "Have you seen that new film?",
        "My sister just got a dog.",
        "I think pizza is the best food.",
        "Work was busy this week.",
        "We should go hiking sometime.",
        "That song is stuck in my head.",
    ]
    texts, samples = [], []
    for c in range(40):
        marker = "".join(rng.choice("bcdfghjklmnpqrstvwxz") for _ in range(3)).capitalize()
        marker += rng.choice(["ax", "on", "ix", "ur"])
        source = "human" if c % 2 == 0 else "machine"
        for s in range(6):
            texts.append(f"{marker}: {rng.choice(pool)}")
            samples.append(Sample(f"c{c}-{s}", f"c{c}", source, None if source == "human" else "m"))
    feats = embed(texts).vectors
    grouped = cross_validate(feats, samples, judge="g", folds=10, seeds=(0, 1))
    ungrouped = cross_validate(feats, samples, judge="u", folds=10, seeds=(0, 1), grouped=False)
    d_grouped = confusion(grouped.judgements).detectability
    d_ungrouped = confusion(ungrouped.judgements).detectability
    assert abs(d_grouped - 0.5) < 0.15, d_grouped
    assert d_ungrouped > d_grouped + 0.2, (d_ungrouped, d_grouped)
