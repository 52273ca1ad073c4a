"""AI-judge inference on real text: human chats from chitchat-dataset relabelled at random go
through the real pipeline (real MiniLM embeddings, real classifiers, grouped CV) — the fast
version of benchmarks/itt_calibration.py. The cluster bootstrap of fixed predictions that
`itt score` reported was narrower than the spread of the pipeline's own estimates under
relabelling, and an unbalanced design scored well below chance (0.39); both fail here."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest

from turinglab.itt.ai_inference import infer_cv, labellings, verdict
from turinglab.itt.dataset import Response
from turinglab.itt.human_sources import chitchat_conversations
from turinglab.itt.pipeline import run_judges

pytestmark = pytest.mark.slow

PHRASE = " Let me know if there is anything else I can help you with."
KNOWN: set[str] = set()  # texts whose embeddings are remembered


@cache
def chats() -> dict[str, list[Response]]:
    """60 real chats of 12 turns, embedded once for every test (the embedding is the cost)."""
    from turinglab.itt.embeddings import embed, remember

    rows = chitchat_conversations(60, 12, seed=5)
    texts = [r.text for r in rows]
    remember(texts, embed(texts).vectors)
    KNOWN.update(texts)
    by_conv: dict[str, list[Response]] = {}
    for r in rows:
        by_conv.setdefault(r.conversation or "", []).append(r)
    return by_conv


def relabelled(seed: int, size: int, humans: int, phrase: float = 0.0) -> list[Response]:
    """`size` chats, all but `humans` of them relabelled machine (agents a and b)."""
    rng = np.random.default_rng(seed)
    pool = chats()
    ids = rng.choice(sorted(pool), size=size, replace=False)
    out = []
    for k, cid in enumerate(ids):
        for r in pool[str(cid)]:
            if k < humans:
                out.append(r)
                continue
            text = r.text + PHRASE if rng.random() < phrase else r.text
            agent = "agent-a" if k % 2 else "agent-b"
            out.append(r.model_copy(update={"source": "machine", "agent": agent, "text": text}))
    missing = sorted({r.text for r in out} - KNOWN)
    if missing:  # only the phrased messages a test draws are embedded, not every variant
        from turinglab.itt.embeddings import embed, remember

        remember(missing, embed(missing).vectors)
        KNOWN.update(missing)
    return out


def test_reported_interval_covers_the_pipelines_own_null_spread() -> None:
    """At 40 conversations the old interval (cluster bootstrap of fixed CV predictions) was
    narrower than the estimates' spread under relabelling; the reported one is built from it."""
    result = run_judges(
        relabelled(0, 40, 20), lengths=(6, 12), extrapolation=False, permutations=99
    )
    for family in ("svm-minilm-sentence", "svm-minilm-side"):
        score = result.summary["scores"][family]
        inferred = result.summary["inference"][family]
        lo, hi = score["detectability_ci"]
        old_lo, old_hi = score["cluster_bootstrap_ci"]
        assert score["detectability_ci"] == inferred["detectability_ci"]
        # the null's central 95% is ≈ ±1.96 SD; the reported interval is at least that wide
        assert hi - lo >= 3.2 * inferred["null_sd"], (family, lo, hi, inferred)
        assert (hi - lo) > (old_hi - old_lo), (family, (lo, hi), (old_lo, old_hi))
        assert (lo > 0.5 or hi < 0.5) == (inferred["p_value"] <= 0.05)


def test_unbalanced_no_signal_designs_score_chance_on_average() -> None:
    """10 human and 20 machine conversations (two agents) with no signal: the old classifier,
    whose threshold followed the training prior, averaged 0.39 and its interval excluded 0.5."""
    estimates, excluded = [], 0
    for seed in range(6):
        got = run_judges(
            relabelled(seed, 30, 10), lengths=(12,), extrapolation=False, permutations=99
        )
        score = got.summary["scores"]["svm-minilm-sentence"]
        estimates.append(score["detectability"])
        lo, hi = score["detectability_ci"]
        excluded += lo > 0.5 or hi < 0.5
    assert abs(float(np.mean(estimates)) - 0.5) < 0.04, estimates
    assert excluded <= 1, estimates


def test_extrapolation_is_inferred_by_permutation_too() -> None:
    got = run_judges(relabelled(3, 30, 10), lengths=(12,), extrapolation=True, permutations=39)
    assert set(got.extrapolation) == {"train-one", "leave-one-out"}
    for per_model in got.extrapolation.values():
        assert set(per_model) == {"agent-a", "agent-b"}
        for s in per_model.values():
            assert s["inference"]["permutations"] == 39
            assert s["detectability_ci"] == s["inference"]["detectability_ci"]
            lo, hi = s["detectability_ci"]
            assert lo <= s["detectability"] + 0.2 and hi >= s["detectability"] - 0.2


def test_an_assistant_phrase_on_most_messages_is_detected() -> None:
    """An assistant's phrase on 60% of machine messages; the benchmark gives the power at 30%
    (where one dataset of 40 conversations is often not enough)."""
    got = run_judges(
        relabelled(1, 40, 20, phrase=0.6), lengths=(12,), extrapolation=False, permutations=99
    )
    inferred = got.summary["inference"]["svm-minilm-side"]
    assert inferred["p_value"] <= 0.05 and inferred["detectability_ci"][0] > 0.5, inferred
    assert got.summary["inference"]["svm-minilm-sentence"]["detectability"] > 0.5


def test_a_design_too_small_to_test_says_so() -> None:
    """3 human and 3 machine conversations: 20 labellings, so no 5% test exists."""
    got = run_judges(relabelled(2, 6, 3), lengths=(12,), extrapolation=False, permutations=99)
    inferred = got.summary["inference"]["svm-minilm-sentence"]
    assert inferred["labellings"] == 20
    assert inferred["detectability_ci"] is None
    assert "too small or too unbalanced" in inferred["note"]


def test_permutations_keep_strata_and_whole_units() -> None:
    from turinglab.itt.ai_judges import Sample

    samples = [
        Sample(f"{c}:{side}", c, src, None if src == "human" else "m", unit=c, slot=side,
               stratum=topic)
        for c, topic, src in (
            ("c1", "t1", "human"), ("c2", "t1", "machine"), ("c3", "t2", "human"),
            ("c4", "t2", "machine"), ("c5", "t2", "machine"),
        )
        for side in ("A", "B")
    ]  # fmt: skip
    lab = labellings(samples, permutations=50, seed=1)
    assert lab.distinct == 2 * 3  # 2 arrangements in t1, 3 in t2
    machine, _ = lab.assign(samples)
    per_unit = machine.reshape(5, 2, -1)
    assert (per_unit[:, 0] == per_unit[:, 1]).all()  # a unit's sides move together
    assert (per_unit[:2].sum(axis=0) == 1).all() and (per_unit[2:].sum(axis=0) == 2).all()


def test_verdict_excludes_chance_exactly_when_the_test_rejects() -> None:
    rng = np.random.default_rng(0)
    null = 0.47 + 0.03 * rng.standard_normal(199)
    for observed in (0.40, 0.44, 0.47, 0.52, 0.55):
        got = verdict(np.concatenate([[observed], null]), distinct=1e9)
        lo, hi = got["detectability_ci"]
        assert (lo > 0.5 or hi < 0.5) == (got["p_value"] <= 0.05), (observed, got)
        # centred on the estimate less the null's offset from ½ (CV's own bias corrected)
        assert abs((lo + hi) / 2 - (observed + 0.5 - 0.47)) < 0.02


def test_infer_cv_pools_a_family_across_lengths() -> None:
    from turinglab.itt.ai_inference import JudgeInput
    from turinglab.itt.ai_judges import Sample

    rng = np.random.default_rng(4)
    judges = []
    for length in (3, 6):
        samples = [
            Sample(f"c{c}:A", f"c{c}", "human" if c % 2 else "machine",
                   None if c % 2 else "m", length=length, unit=f"c{c}", slot="A")
            for c in range(24)
        ]  # fmt: skip
        feats = rng.standard_normal((24, 8))
        judges.append(JudgeInput(f"side@{length}", "side", feats, samples))
    got = infer_cv(judges, folds=6, seeds=(0,), permutations=59)
    assert set(got["judges"]) == {"side@3", "side@6"} and set(got["families"]) == {"side"}
    assert got["families"]["side"]["permutations"] == 59


def test_itt_judge_and_score_print_the_calibrated_intervals(tmp_path) -> None:
    import json

    from typer.testing import CliRunner

    from turinglab.cli.itt import itt_app
    from turinglab.itt.dataset import save_dataset

    save_dataset(tmp_path / "chats.csv", relabelled(4, 20, 10))
    runner = CliRunner()
    study = tmp_path / "study"
    got = runner.invoke(
        itt_app,
        ["judge", str(tmp_path / "chats.csv"), "--out", str(study), "--permutations", "59"],
    )
    assert got.exit_code == 0, got.output
    inference = json.loads((study / "study.json").read_text())["ai_judges"]["inference"]
    assert {"svm-minilm-sentence", "svm-minilm-side"} <= set(inference)
    scored = runner.invoke(itt_app, ["score", str(study / "judgements.csv"), "--json"])
    assert scored.exit_code == 0, scored.output
    families = json.loads(scored.output)["per_judge_family"]
    for family in ("svm-minilm-sentence", "svm-minilm-side"):
        assert families[family]["detectability_ci"] == inference[family]["detectability_ci"]
        assert families[family]["p_value"] == inference[family]["p_value"]
        assert families[family]["cluster_bootstrap_ci"] is not None
    text = runner.invoke(itt_app, ["score", str(study / "judgements.csv")])
    assert "AI judge families: 95% intervals and p from the permutation test" in text.output


def straightforward_detectability(
    features: np.ndarray, samples: list, machine: np.ndarray, folds: int, seeds: tuple[int, ...]
) -> tuple[float, np.ndarray]:
    """One labelling scored the slow, obvious way: for every seed and fold, fit the
    least-squares SVM on the training rows (a d × d solve), predict the test rows, average the
    seeds per response. Returns the detectability and its cells (hh, hm, mh, mm)."""
    from turinglab.itt.ai_judges import RIDGE, fold_ids, standardised

    z = standardised(features)
    groups = [s.group for s in samples]
    k = min(folds, len(set(groups)))
    said = np.zeros((len(seeds), len(samples)))
    for row, seed in enumerate(seeds):
        ids = fold_ids(groups, k, seed)
        for f in range(k):
            train, test = ids != f, ids == f
            y = machine[train]
            assert 0 < y.sum() < len(y)  # both sources in every training part of these data
            centre = z[train].mean(axis=0)
            a = z[train] - centre
            targets = np.where(y, 1.0 / y.sum(), -1.0 / (~y).sum())
            w = np.linalg.solve(a.T @ a + RIDGE * train.sum() * np.eye(z.shape[1]), a.T @ targets)
            said[row, test] = (z[test] - centre) @ w > 0
    p = said.mean(axis=0)
    cells = np.array(
        [((1 - p) * ~machine).sum(), (p * ~machine).sum(), ((1 - p) * machine).sum(),
         (p * machine).sum()]
    )  # fmt: skip
    hh, hm, mh, mm = cells
    return 0.5 * (hh / (hh + hm) + mm / (mh + mm)), cells


def test_the_shared_hat_matrix_gives_what_refitting_every_labelling_gives() -> None:
    """The pipeline scores all labellings of a fold with one matrix product; refitting each
    labelling from scratch must give the same statistic for every labelling (observed and
    permuted alike), hence the same p values and intervals that `run_judges` reports."""
    from turinglab.itt.ai_inference import JudgeInput, cv_values
    from turinglab.itt.dataset import conversations
    from turinglab.itt.embeddings import embed
    from turinglab.itt.pipeline import conversation_inputs

    rows = relabelled(7, 20, 8)  # unbalanced: 8 human, 12 machine conversations
    lengths, folds, seeds, b = (6, 12), 10, (0, 1, 2), 19
    vectors = dict(zip([r.item for r in rows], embed([r.text for r in rows]).vectors, strict=True))
    inputs = conversation_inputs(conversations(rows), vectors, lengths)
    judges = [JudgeInput(n, f, x, s) for n, f, x, s in inputs]
    fast = cv_values(judges, folds=folds, seeds=seeds, permutations=b)
    family_cells = {}
    for name, family, feats, samples in inputs:
        machine, _ = fast.labellings.assign(samples)
        assert machine[:, 0].tolist() == [s.source == "machine" for s in samples]  # observed
        slow = [straightforward_detectability(feats, samples, machine[:, k], folds, seeds)
                for k in range(b + 1)]  # fmt: skip
        np.testing.assert_allclose(fast.judges[name], [d for d, _ in slow], atol=1e-12)
        family_cells[family] = family_cells.get(family, 0) + np.array([c for _, c in slow])
    for family, cells in family_cells.items():
        hh, hm, mh, mm = cells.T
        np.testing.assert_allclose(fast.families[family], 0.5 * (hh / (hh + hm) + mm / (mh + mm)))
    # and the pipeline reports exactly the verdict on these values
    got = run_judges(rows, lengths=lengths, extrapolation=False, permutations=b)
    for family, values in fast.families.items():
        expected = verdict(values, fast.labellings.distinct)
        inferred = got.summary["inference"][family]
        assert inferred["p_value"] == expected["p_value"]
        assert inferred["detectability_ci"] == expected["detectability_ci"]
        assert inferred["detectability"] == got.summary["scores"][family]["detectability"]


def test_no_interval_from_too_few_permutations_to_reject() -> None:
    """With 19 permutations the smallest two-sided p is 0.1: an interval built from the
    extreme order statistics excluded ½ although the test cannot reject at 5%."""
    rng = np.random.default_rng(1)
    null = 0.5 + 0.03 * rng.standard_normal(19)
    got = verdict(np.concatenate([[0.7], null]), distinct=1e9)
    assert got["p_value"] == 0.1
    assert got["detectability_ci"] is None and "cannot give a 95% interval" in got["note"]
    for b in (39, 59, 199):
        null = 0.5 + 0.03 * rng.standard_normal(b)
        for observed in (0.3, 0.45, float(null.max()), 0.7):
            got = verdict(np.concatenate([[observed], null]), distinct=1e9)
            lo, hi = got["detectability_ci"]
            assert (lo > 0.5 or hi < 0.5) == (got["p_value"] <= 0.05), (b, observed, got)


def test_extrapolation_null_matches_refitting_relabelled_samples() -> None:
    """The permutation null of extrapolation relabels index arrays and solves for one weight
    vector per fit; relabelling the samples themselves and fitting them the obvious way (the
    paper's split: half the human conversations and the training agents) must agree."""
    from dataclasses import replace

    from turinglab.itt.ai_inference import extrapolation_values
    from turinglab.itt.ai_judges import RIDGE, standardised
    from turinglab.itt.dataset import conversations
    from turinglab.itt.embeddings import embed
    from turinglab.itt.pipeline import conversation_inputs

    rows = relabelled(8, 16, 6)
    vectors = dict(zip([r.item for r in rows], embed([r.text for r in rows]).vectors, strict=True))
    _, _, feats, samples = conversation_inputs(conversations(rows), vectors, ())[0]
    z = standardised(feats)
    for mode in ("train-one", "leave-one-out"):
        lab, fast = extrapolation_values(feats, samples, mode=mode, permutations=9)
        machine, model = lab.assign(samples)
        for b in range(10):
            moved = [
                replace(
                    s, source="machine" if machine[i, b] else "human", model=model[i, b] or None
                )
                for i, s in enumerate(samples)
            ]
            for x in ("agent-a", "agent-b"):
                humans = sorted({s.group for s in moved if s.source == "human"})
                np.random.default_rng(0).shuffle(humans)
                trains = {x} if mode == "train-one" else {"agent-a", "agent-b"} - {x}
                train = [
                    i
                    for i, s in enumerate(moved)
                    if s.group in humans[: len(humans) // 2] or s.model in trains
                ]
                seen = {moved[i].group for i in train}
                test = [i for i, s in enumerate(moved) if s.group not in seen
                        and (s.source == "human" or s.model not in trains)]  # fmt: skip
                y = machine[train, b]
                centre = z[train].mean(axis=0)
                a = z[train] - centre
                targets = np.where(y, 1.0 / y.sum(), -1.0 / (~y).sum())
                w = np.linalg.solve(
                    a.T @ a + RIDGE * len(train) * np.eye(z.shape[1]), a.T @ targets
                )
                said = (z[test] - centre) @ w > 0
                truth = machine[test, b]
                d = 0.5 * (
                    (~said & ~truth).sum() / (~truth).sum() + (said & truth).sum() / truth.sum()
                )
                assert fast[x][b] == pytest.approx(d, abs=1e-12), (mode, x, b)
