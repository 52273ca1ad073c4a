"""The AI-judge pipeline: one classifier per task, word association judged on the cue–answer
relation, extrapolation for every task with two machine agents, and intervals that count a
response once whatever the number of cross-validation seeds."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from turinglab.itt.ai_judges import Sample, cross_validate
from turinglab.itt.dataset import Response
from turinglab.itt.metrics import summarise


def test_cv_rows_carry_their_unit_and_seeds_count_once() -> None:
    rng = np.random.default_rng(0)
    # 5 human and 5 machine conversations of 30 messages whose features only say which
    # conversation they are in: no signal about the source (the leak probe)
    convs = 10
    ids = np.repeat(np.arange(convs), 30)
    markers = rng.standard_normal((convs, convs))  # each conversation's own direction
    feats = markers[ids] + 0.01 * rng.standard_normal((len(ids), convs))
    samples = [
        Sample(f"m{i}", f"c{c}", "human" if c < 5 else "machine", None if c < 5 else "bot")
        for i, c in enumerate(ids)
    ]
    res = cross_validate(feats, samples, judge="svm", folds=5, seeds=(0, 1, 2))
    assert len(res.judgements) == 3 * 300 and {r.unit for r in res.judgements} == {
        f"c{c}" for c in range(convs)
    }
    s = summarise(res.judgements, replicates=500)
    assert (s["n"], s["units"], s["judges"]) == (300, 10, 1)
    lo, hi = s["detectability_ci"]
    # 10 independent conversations cannot pin detectability down to a tenth
    assert hi - lo > 0.25


@pytest.mark.slow
def test_one_judge_per_task_and_the_word_relation() -> None:
    from turinglab.itt.pipeline import run_judges

    cues = ["apple", "river", "doctor", "window", "music", "winter", "garden", "money"]
    human_words = ["pie", "water", "nurse", "glass", "song", "snow", "flower", "bank"]
    captions = [
        "a dog runs along the beach", "two children play football", "a red bus in the city",
        "a cat sleeps on a sofa", "a man reads a newspaper", "three friends share a pizza",
    ]  # fmt: skip
    rows: list[Response] = []
    for i, (cue, word) in enumerate(zip(cues, human_words, strict=True)):
        rows.append(Response(item=f"wh{i}", task="word-association", stimulus_id=f"w{i}",
                             stimulus=cue, source="human", agent="p", text=word))  # fmt: skip
        for agent in ("echo", "far"):
            text = cue if agent == "echo" else "zebra"
            rows.append(Response(item=f"w{agent}{i}", task="word-association",
                                 stimulus_id=f"w{i}", stimulus=cue, source="machine",
                                 agent=agent, text=text))  # fmt: skip
    for i, cap in enumerate(captions):
        rows.append(Response(item=f"ch{i}", task="captioning", stimulus_id=f"img{i}",
                             source="human", agent="p", text=cap))  # fmt: skip
        for agent in ("echo", "far"):
            said = f"{agent} says {cap}"
            rows.append(Response(item=f"c{agent}{i}", task="captioning", stimulus_id=f"img{i}",
                                 source="machine", agent=agent, text=said))  # fmt: skip
    got = run_judges(rows, folds=3, seeds=(0, 1))
    families = set(got.summary["scores"])
    assert families == {"svm-minilm-captioning", "svm-minilm-word-relation"}
    by_family = {r.judge.split("/")[0] for r in got.judgements}
    assert by_family == families  # no pooled single-response judge
    assert {"train-one (captioning)", "leave-one-out (word-association)"} <= set(got.extrapolation)
    relation = got.summary["scores"]["svm-minilm-word-relation"]
    assert relation["n"] == 24 and relation["units"] == 8 and relation["detectability_ci"]


def test_scanpaths_are_judged_from_itt_judge(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from turinglab.cli import app

    rng = np.random.default_rng(3)
    lines = ["item,task,stimulus_id,source,agent,fixations"]
    for img in range(12):
        for src, agent, shift in (("human", "p", 0.0), ("machine", "deepgaze", 40.0)):
            path = [[float(x) + shift, float(y)] for x, y in rng.uniform(0, 100, size=(8, 2))]
            lines.append(f'{src[0]}{img},attention,img{img},{src},{agent},"{json.dumps(path)}"')
    data = tmp_path / "scanpaths.csv"
    data.write_text("\n".join(lines) + "\n")
    out = tmp_path / "study"
    done = CliRunner().invoke(app, ["itt", "judge", str(data), "--out", str(out), "--folds", "4"])
    assert done.exit_code == 0, done.output
    summary = json.loads(done.stdout)
    scan = summary["scores"]["svm-scanpath"]
    assert (scan["n"], scan["units"]) == (24, 12)
    assert scan["detectability"] > 0.7  # machine scanpaths sit 40 px to the right
    assert "texts_embedded" not in summary  # nothing to embed
