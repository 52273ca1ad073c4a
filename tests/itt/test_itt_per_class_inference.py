"""Per-class rates of AI judges — p(H|H), p(M|M), per model, per length and per conversation
type (Figure S4E) — inferred the way detectability is: the grouped CV re-run on relabelled
conversations (real MiniLM embeddings of real chitchat text, real classifiers). They used to
get cluster-bootstrap intervals of fixed cross-validated predictions, which ignore the
classifier's training variance. A per-class rate has no fixed chance level: it is tested
against the rate label-free prediction gives (ai_null.py)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from test_itt_calibration_real import KNOWN, chats, relabelled, straightforward_detectability
from turinglab.itt.ai_null import rate_verdict, rate_verdicts
from turinglab.itt.dataset import Response
from turinglab.itt.pipeline import run_judges

pytestmark = pytest.mark.slow

MACHINE_PHRASE = " As an AI language model, I am happy to help with that."


def mixed(seed: int, kinds: dict[str, int], phrase: bool = False) -> list[Response]:
    """Real chats as HH, HAI (B machine), AIH (A machine) and AIAI conversations, `kinds`
    giving how many of each; with `phrase`, every machine message ends with an assistant's
    phrase (a signal any judge finds)."""
    pool = chats()
    rng = np.random.default_rng(seed)
    ids = rng.choice(sorted(pool), size=sum(kinds.values()), replace=False)
    plan = [kind for kind, n in kinds.items() for _ in range(n)]
    out = []
    for k, (cid, kind) in enumerate(zip(ids, plan, strict=True)):
        machine_sides = {"HH": "", "HAI": "B", "AIH": "A", "AIAI": "AB"}[kind]
        for r in pool[str(cid)]:
            if r.speaker not in machine_sides:
                out.append(r)
                continue
            text = r.text + MACHINE_PHRASE if phrase else r.text
            agent = "agent-a" if k % 2 else "agent-b"
            out.append(r.model_copy(update={"source": "machine", "agent": agent, "text": text}))
    missing = sorted({r.text for r in out} - KNOWN)
    if missing:
        from turinglab.itt.embeddings import embed, remember

        remember(missing, embed(missing).vectors)
        KNOWN.update(missing)
    return out


def test_rate_verdict_tests_against_the_label_free_rate() -> None:
    """Label-free prediction at 0.30 (a judge that says M most of the time): an observed 0.30
    is no evidence, 0.45 is; the interval excludes 0.30 exactly when the test rejects."""
    rng = np.random.default_rng(2)
    null = 0.30 + 0.04 * rng.standard_normal(199)
    for observed in (0.18, 0.25, 0.30, 0.36, 0.45):
        got = rate_verdict(np.concatenate([[observed], null]), distinct=1e9)
        lo, hi = got["ci"]
        assert got["label_free"] == pytest.approx(0.30, abs=0.01)
        excluded = lo > got["label_free"] or hi < got["label_free"]
        assert excluded == (got["p_value"] <= 0.05), (observed, got)
        # around the estimate itself: the label-free value is the null's centre
        assert abs((lo + hi) / 2 - observed) < 0.02
    assert rate_verdict(np.concatenate([[0.30], null]), 1e9)["p_value"] > 0.5
    assert rate_verdict(np.concatenate([[0.45], null]), 1e9)["p_value"] <= 0.01
    small = rate_verdict(np.concatenate([[0.9], null]), distinct=20)
    assert small["ci"] is None and "too small or too unbalanced" in small["note"]


def test_per_class_rates_come_from_the_refitted_null() -> None:
    """The per-class verdicts the pipeline reports are those of the cells obtained by refitting
    every labelling the slow way (no shortcut between the two)."""
    from turinglab.itt.ai_inference import JudgeInput, cv_values
    from turinglab.itt.dataset import conversations
    from turinglab.itt.embeddings import embed
    from turinglab.itt.pipeline import conversation_inputs

    rows = relabelled(9, 20, 8)
    lengths, folds, seeds, b = (12,), 10, (0, 1, 2), 39
    vectors = dict(zip([r.item for r in rows], embed([r.text for r in rows]).vectors, strict=True))
    inputs = conversation_inputs(conversations(rows), vectors, lengths)
    fast = cv_values([JudgeInput(n, f, x, s) for n, f, x, s in inputs], folds=folds,
                     seeds=seeds, permutations=b)  # fmt: skip
    got = run_judges(rows, lengths=lengths, extrapolation=False, permutations=b)
    for _, family, feats, samples in inputs:  # one judge per family at one length
        machine, _ = fast.labellings.assign(samples)
        slow = np.array(
            [
                straightforward_detectability(feats, samples, machine[:, k], folds, seeds)[1]
                for k in range(b + 1)
            ]
        )
        np.testing.assert_allclose(fast.family_cells[family], slow, atol=1e-9)
        expected = rate_verdicts(slow, fast.labellings.distinct)
        inferred = got.summary["inference"][family]["rates"]
        score = got.summary["scores"][family]
        for rate in ("p_H_given_H", "p_M_given_M"):
            assert inferred[rate]["ci"] == expected[rate]["ci"]
            assert inferred[rate]["p_value"] == expected[rate]["p_value"]
            assert inferred[rate]["rate"] == score[rate]  # the rate `itt score` prints
        assert score["ci_H_given_H"] == inferred["p_H_given_H"]["ci"]
        lo, hi = inferred["p_H_given_H"]["ci"]
        assert score["ci_M_given_H"] == [round(1 - hi, 4), round(1 - lo, 4)]


def test_the_s4e_split_of_an_ai_judge_is_inferred_by_permutation() -> None:
    """HH, HAI, AIH and AIAI conversations: each of Figure S4E's cells of the side judge holds
    the speakers it should, its rate is the seeds' average of the judge's predictions, and a
    machine phrase on every machine message is found in both machine cells."""
    kinds = {"HH": 8, "HAI": 6, "AIH": 6, "AIAI": 8}
    lengths = (6, 12)
    for phrase in (False, True):
        got = run_judges(mixed(3, kinds, phrase), lengths=lengths, extrapolation=False,
                         permutations=99)  # fmt: skip
        types = got.summary["inference"]["svm-minilm-side"]["conversation_types"]
        assert {k: (v["n"], v["units"]) for k, v in types.items()} == {
            "p(H|H) HH": (2 * 8 * len(lengths), 8),
            "p(H|H) mixed": (12 * len(lengths), 12),
            "p(AI|AI) AIAI": (2 * 8 * len(lengths), 8),
            "p(AI|AI) mixed": (12 * len(lengths), 12),
        }
        side = [j for j in got.judgements if j.judge.startswith("svm-minilm-side@")]
        right = [float((j.label == "H") == (j.source == "human")) for j in side
                 if j.source == "machine" and j.item.split(":")[0] in _aiai(got, side)]  # fmt: skip
        assert types["p(AI|AI) AIAI"]["rate"] == pytest.approx(np.mean(right), abs=1e-4)
        for cell in types.values():
            lo, hi = cell["ci"]
            assert (lo > cell["label_free"] or hi < cell["label_free"]) == (cell["p_value"] <= 0.05)
        if phrase:
            for cell in ("p(AI|AI) AIAI", "p(AI|AI) mixed"):
                assert types[cell]["ci"][0] > types[cell]["label_free"], types[cell]
                assert types[cell]["p_value"] <= 0.05


def _aiai(got, side) -> set[str]:  # type: ignore[no-untyped-def]
    """The conversations both of whose sides are machines."""
    sides: dict[str, set[str]] = {}
    for j in side:
        sides.setdefault(j.item.split(":")[0], set()).add(j.source)
    return {c for c, s in sides.items() if s == {"machine"}}


def test_itt_score_and_the_report_show_per_class_length_and_type_intervals(tmp_path) -> None:
    """`itt judge` → `itt score --json` and the report: every AI per-class interval, per
    length and per conversation type is the permutation one; none is a cluster bootstrap."""
    from typer.testing import CliRunner

    from turinglab.cli.itt import itt_app
    from turinglab.itt.dataset import save_dataset
    from turinglab.report.itt_report import itt_report

    save_dataset(tmp_path / "chats.csv", mixed(4, {"HH": 6, "HAI": 4, "AIH": 4, "AIAI": 6}))
    runner = CliRunner()
    study = tmp_path / "study"
    got = runner.invoke(
        itt_app,
        ["judge", str(tmp_path / "chats.csv"), "--out", str(study), "--permutations", "59"],
    )
    assert got.exit_code == 0, got.output
    inference = json.loads((study / "study.json").read_text())["ai_judges"]["inference"]
    scored = runner.invoke(itt_app, ["score", str(study / "judgements.csv"), "--json"])
    assert scored.exit_code == 0, scored.output
    result = json.loads(scored.output)
    for family in ("svm-minilm-sentence", "svm-minilm-side"):
        s, rates = result["per_judge_family"][family], inference[family]["rates"]
        assert s["ci_H_given_H"] == rates["p_H_given_H"]["ci"]
        assert s["ci_M_given_M"] == rates["p_M_given_M"]["ci"]
        assert s["sd"]["p_H_given_H"] == rates["p_H_given_H"]["null_sd"]
        assert s["rates_inference"]["p_M_given_M"]["label_free"] is not None
        assert set(s["cluster_bootstrap_rates_ci"]) >= {"ci_H_given_H", "ci_M_given_M"}
        for models in result["per_judge_model"][family].values():
            for model, m in models.items():
                want = inference[family]["per_model"][model]["rates"]["p_M_given_M"]["ci"]
                assert m["ci_M_given_M"] == want
        split = result["conversation_types"][family]
        for name, cell in inference[family]["conversation_types"].items():
            assert split[name]["ci"] == cell["ci"] and split[name]["label_free"] is not None
        (task,) = result["per_judge_family_and_task"][family].values()  # its one task
        assert task["ci_M_given_M"] == rates["p_M_given_M"]["ci"]
        assert task["detectability_ci"] == inference[family]["detectability_ci"]
    for length, cut in result["per_judge_family_and_length"]["svm-minilm-side"].items():
        want = inference["svm-minilm-side"]["per_length"][length]
        assert cut["detectability_ci"] == want["detectability_ci"]
        assert cut["ci_H_given_H"] == want["rates"]["p_H_given_H"]["ci"]
    text = runner.invoke(itt_app, ["score", str(study / "judgements.csv")]).output
    assert "vs label-free" in text and "label-free" in text.split("Figure S4E")[-1]
    html = itt_report(study, tmp_path / "report.html").read_text()
    assert "svm-minilm-side: by conversation type (Figure S4E)" in html
    assert "label-free prediction gives" in html


def test_ai_rows_without_per_class_inference_get_no_per_class_interval() -> None:
    """A study.json written before per-class inference has detectability's verdict only: the
    AI judge's p(H|H) and p(M|M) then get no interval (not the cluster bootstrap's), and the
    summary says why; people keep their bootstrap intervals."""
    from turinglab.itt.judgements import JudgementRow
    from turinglab.itt.metrics import score

    rng = np.random.default_rng(0)
    rows = [
        JudgementRow(judge=judge, judge_type=kind, item=f"r{i}", unit=f"c{i // 4}",
                     source="human" if i % 2 else "machine", model=None if i % 2 else "m",
                     label="H" if rng.random() < 0.5 else "M", task="conversation")
        for kind, judge in (("ai", "svm-x/seed0"), ("human", "p1"))
        for i in range(80)
    ]  # fmt: skip
    old = {"detectability_ci": [0.4, 0.6], "p_value": 0.5, "null_sd": 0.05, "note": None}
    got = score(rows, replicates=200, ai_inference={"svm-x": old})["per_judge_family"]
    ai, people = got["svm-x"], got["human judges"]
    assert ai["detectability_ci"] == [0.4, 0.6]
    assert ai["ci_H_given_H"] is None and ai["ci_M_given_M"] is None
    assert ai["sd"]["p_H_given_H"] is None and "per-class" in ai["rates_note"]
    assert ai["cluster_bootstrap_rates_ci"]["ci_H_given_H"] is not None
    assert people["ci_H_given_H"] is not None and "rates_inference" not in people
