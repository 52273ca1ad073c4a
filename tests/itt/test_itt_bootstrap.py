"""Cluster-bootstrap intervals: calibrated on datasets with no signal, clustered by
conversation, with cross-validation seeds that must not count as extra responses."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from turinglab.itt.bootstrap import (
    intervals,
    judged,
    percentile,
    replicate_cells,
    statistics,
)
from turinglab.itt.judgements import JudgementRow
from turinglab.itt.metrics import Confusion, cluster_intervals, confusion, score

SEEDS = 3


def no_signal(rng: np.random.Generator, convs: int = 30, messages: int = 6) -> dict[str, list]:
    """An AI judge that knows nothing about the source: each conversation has its own pull
    towards "H" (the judge recognises the conversation, not who wrote it), the same for human
    and machine conversations; three CV seeds mostly agree with each other."""
    pull = rng.beta(1.5, 1.5, size=2 * convs)
    base = rng.random((2 * convs, messages)) < pull[:, None]
    flips = rng.random((SEEDS, 2 * convs, messages)) < 0.15
    said_h = base[None] ^ flips  # seeds × convs × messages
    conv = np.broadcast_to(np.arange(2 * convs)[None, :, None], said_h.shape)
    message = np.broadcast_to(np.arange(messages)[None, None, :], said_h.shape)
    return {
        "units": [f"c{c}" for c in conv.ravel()],
        "items": [f"c{c}-{m}" for c, m in zip(conv.ravel(), message.ravel(), strict=True)],
        "human": (conv.ravel() < convs).tolist(),
        "said_human": said_h.ravel().tolist(),
    }


def excludes_half(ci: tuple[float, float] | None) -> bool:
    assert ci is not None
    return ci[0] > 0.5 or ci[1] < 0.5


@pytest.mark.parametrize("convs", [30, 5])
def test_intervals_exclude_chance_in_2_to_8_percent_of_no_signal_datasets(convs: int) -> None:
    # 5 conversations per source is where the percentile bootstrap failed (11%); the
    # studentized interval (t on G−1 df, G/(G−1) variances) holds there too.
    rng = np.random.default_rng(20261125 + convs)
    datasets = 500
    cluster_misses = naive_misses = percentile_misses = 0
    for i in range(datasets):
        d = no_signal(rng, convs=convs)
        n = len(d["units"])
        data = judged(d["units"], ["ai:svm"] * n, [1 / SEEDS] * n, d["human"], d["said_human"])
        cluster_misses += excludes_half(intervals(data, 1000, seed=i)["detectability"])
        if convs == 5:
            old = statistics(replicate_cells(data, 1000, seed=i))["detectability"]
            percentile_misses += excludes_half(percentile(old))
        # the old way: every seed of every message an independent row
        hh = sum(h and s for h, s in zip(d["human"], d["said_human"], strict=True))
        h = sum(d["human"])
        mm = sum((not h_) and (not s) for h_, s in zip(d["human"], d["said_human"], strict=True))
        pooled = Confusion(hh, h - hh, n - h - mm, mm).detectability_ci()
        naive_misses += excludes_half(pooled)
    rate = cluster_misses / datasets
    assert 0.02 <= rate <= 0.08, f"cluster interval excluded chance in {rate:.1%}"
    # the row-level interval on the same data is far too narrow: the test can tell them apart
    assert naive_misses / datasets > 0.25
    if convs == 5:  # and the plain percentile bootstrap is too narrow with few clusters
        assert percentile_misses / datasets > 0.08


def rows_from(d: dict[str, list]) -> list[JudgementRow]:
    out = []
    for k, (unit, item, human, said) in enumerate(
        zip(d["units"], d["items"], d["human"], d["said_human"], strict=True)
    ):
        out.append(
            JudgementRow(
                judge=f"svm-minilm-sentence/seed{k // (len(d['units']) // SEEDS)}",
                judge_type="ai",
                item=item,
                source="human" if human else "machine",
                model=None if human else "m1",
                label="H" if said else "M",
                unit=unit,
            )
        )
    return out


def test_judgement_rows_give_the_same_interval_as_the_arrays() -> None:
    d = no_signal(np.random.default_rng(7), convs=8, messages=4)
    rows = rows_from(d)
    n = len(rows)
    arrays = judged(d["units"], ["x"] * n, [1 / SEEDS] * n, d["human"], d["said_human"])
    assert cluster_intervals(rows, 500, seed=3) == intervals(arrays, 500, seed=3)
    # seeds averaged: 8 + 8 conversations of 4 messages are 64 responses, not 192 rows
    assert score(rows, replicates=200)["overall"]["n"] == 64
    assert confusion(rows).n_human == pytest.approx(32)


def test_judges_are_resampled_too() -> None:
    # Two people judge the same four responses; one always says H, one always M. Units alone
    # would make p(H|H) exactly 0.5 in every replicate; resampling judges makes it vary.
    rows = [
        JudgementRow(
            judge=j,
            judge_type="human",
            item=f"i{k}",
            source="human" if k < 2 else "machine",
            model=None if k < 2 else "m",
            label="H" if j == "yes" else "M",
        )
        for j in ("yes", "no")
        for k in range(4)
    ]
    ci = cluster_intervals(rows, 400, seed=0)["p_H_given_H"]
    assert ci is not None and ci[0] == 0.0 and ci[1] == 1.0
    assert score(rows, replicates=50)["overall"]["judges"] == 2


def test_replicates_are_reproducible_and_match_the_point_estimate_without_resampling() -> None:
    d = no_signal(np.random.default_rng(1), convs=5, messages=3)
    n = len(d["units"])
    data = judged(d["units"], ["x"] * n, [1.0] * n, d["human"], d["said_human"])
    a, b = replicate_cells(data, 50, seed=9), replicate_cells(data, 50, seed=9)
    assert np.array_equal(a, b)
    # every replicate has as many units as the data: the total weight is n on average
    assert a.sum(axis=1).mean() == pytest.approx(n, rel=0.1)
    full = statistics(np.array([sum(d["human"]), 0, 0, n - sum(d["human"])], dtype=float))
    assert float(full["detectability"]) == 1.0


def test_a_missing_arm_has_no_interval() -> None:
    data = judged(["u1", "u2"], ["j", "j"], [1, 1], [True, True], [True, False])
    got = intervals(data, 100)
    assert got["detectability"] is None and got["p_H_given_H"] is not None


def test_units_come_from_the_dataset_when_the_judgements_lack_them(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from turinglab.cli import app

    # 4 images, 3 responses each (1 human, 2 machine); one person judged every response
    data = ["item,task,stimulus_id,source,agent,text"]
    judged_rows = ["judge,judge_type,item,source,model,label"]
    for img in range(4):
        for k, src in enumerate(("human", "machine", "machine")):
            agent = "p" if src == "human" else "m"
            data.append(f"r{img}{k},captioning,img{img},{src},{agent},a caption {img} {k}")
            model = "" if src == "human" else "m"
            judged_rows.append(f"j,human,r{img}{k},{src},{model},{'H' if img % 2 else 'M'}")
    (tmp_path / "d.csv").write_text("\n".join(data) + "\n")
    (tmp_path / "j.csv").write_text("\n".join(judged_rows) + "\n")
    base = ["itt", "score", str(tmp_path / "j.csv"), "--json", "--replicates", "200"]
    alone = CliRunner().invoke(app, base)
    with_data = CliRunner().invoke(app, [*base, "--responses", str(tmp_path / "d.csv")])
    assert alone.exit_code == 0 and with_data.exit_code == 0, with_data.output
    assert json.loads(alone.stdout)["overall"]["units"] == 12  # every response its own unit
    assert json.loads(with_data.stdout)["overall"]["units"] == 4  # the images


def test_a_live_session_side_is_resampled_with_its_session() -> None:
    row = JudgementRow(
        judge="p", judge_type="human", item="arena:live-itt#3/B", source="human", label="H"
    )
    assert row.cluster == "arena:live-itt#3"
