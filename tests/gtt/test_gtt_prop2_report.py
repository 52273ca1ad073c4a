"""F, D, T by hand from a run's export, per Proposition 2, against the HTML report and `--json`.

The run is real: three models on the fake OpenAI server (whose verdicts hash the conversation,
so cells differ) and ELIZA (which never answers as a distinguisher), played by the runner into a
SQLite store, exported with `turinglab export`, reported with `turinglab report`.
"""

from __future__ import annotations

import csv
import html as html_lib
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from turinglab.config import parse_config
from turinglab.report.gtt_report import build_gtt_report
from turinglab.runner.execute import run_experiment
from turinglab.store.database import Store
from turinglab.testing.fake_openai import FakeOpenAIServer

UNIVERSE = ["eliza", "judge", "mimic", "alpha", "beta"]
# Scripted judges decide by script (judge: 1, mimic: 0); the fake server's verdict hashes the
# conversation, so it depends on who X is; ELIZA never gives a verdict.
SCRIPTED = {
    "judge": {"kind": "scripted", "replies": ["What is 2+2?", "Right. <answer>1</answer>"]},
    "mimic": {"kind": "scripted", "replies": ["Hello there", "Hmm.", "<answer>0</answer>"]},
}


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-m", "turinglab", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    return done


def hand_scores(rows: list[dict[str, str]], variant: str, estimator: str) -> dict[str, tuple]:
    """Plain arithmetic over export rows, the default policy (no verdict = B was wrong)."""

    def right(r: dict[str, str]) -> int:
        if r["verdict"] == "":
            return 0
        return int((r["verdict"] == "1") == (r["x_is_target"] == "True"))

    cells: dict[tuple[str, str, bool], list[int]] = {}
    for r in rows:
        if r["variant"] == variant:
            key = (r["actor"], r["distinguisher"], r["x_is_target"] == "True")
            cells.setdefault(key, []).append(right(r))

    def share(cell: tuple[str, str, bool]) -> float:
        return sum(cells[cell]) / len(cells[cell])

    out = {}
    for a in UNIVERSE:
        others = [b for b in UNIVERSE if b != a]
        # F(A): A acts in cell (A, B); it succeeds when B is wrong in the actor branch.
        f = sum(1 - share((a, b, False)) for b in others) / len(others)
        if estimator == "paper":
            # D(A) = mean over B ≠ A of p(B, A) = ½ s_A + ½ s_A,B, both from cell (B, A).
            d = sum(0.5 * share((b, a, True)) + 0.5 * share((b, a, False)) for b in others)
            d /= len(others)
        else:
            selfs = [
                x
                for (_, judge, is_target), v in cells.items()
                if judge == a and is_target
                for x in v
            ]
            s_a = sum(selfs) / len(selfs)
            d = 0.5 * s_a + 0.5 * sum(share((b, a, False)) for b in others) / len(others)
        out[a] = (f, d, 0.5 * f + 0.5 * d)
    return out


def table_rows(page: str, section_id: str) -> dict[str, list[str]]:
    """Cell texts of the first table in a section, keyed by the row's agent (second cell)."""
    section = re.search(rf'<section id="{section_id}">(.*?)</section>', page, re.S)
    assert section, section_id
    table = re.search(r"<tbody>(.*?)</tbody>", section.group(1), re.S)
    assert table
    rows = {}
    for tr in re.findall(r"<tr>(.*?)</tr>", table.group(1), re.S):
        cells = [
            html_lib.unescape(c)
            for c in re.findall(
                r"<td[^>]*>([^<]*)(?:<span class=\"detail\">[^<]*</span>)?</td>", tr
            )
        ]
        rows[cells[1] if section_id.endswith("scores") else cells[0]] = cells
    return rows


@pytest.fixture
async def run_store(tmp_path: Path, fake_server: FakeOpenAIServer) -> tuple[Path, str]:
    assert fake_server.base_url
    agent = {"kind": "openai", "base_url": fake_server.base_url, "timeout_s": 10}
    config = parse_config(
        {
            "name": "prop2",
            "agents": SCRIPTED
            | {name: agent | {"model": f"fake-{name}"} for name in ("alpha", "beta")},
            "experiment": {
                "game": "gtt",
                "variants": ["gtt", "gttq"],
                "universe": UNIVERSE,
                "trials_per_pair": 4,
                "max_distinguisher_turns": 4,
                "max_specimen_turns": 2,
                "seed": 3,
            },
        }
    )
    db = tmp_path / "store.db"
    store = Store(str(db))
    summary = await run_experiment(config, store, say=lambda _m: None)
    store.close()
    return db, summary.run_id


async def test_scores_match_proposition_2_by_hand(tmp_path: Path, run_store: tuple) -> None:
    db, run_id = run_store
    cli("export", run_id, "--store", str(db), "--format", "csv", "--out", "exp", cwd=tmp_path)
    (export,) = (tmp_path / "exp").glob("*results*.csv")
    rows = list(csv.DictReader(export.open(encoding="utf-8")))
    assert len(rows) == 2 * 25 * 4 and any(r["verdict"] == "" for r in rows)
    paper = {v: hand_scores(rows, v, "paper") for v in ("gtt", "gttq")}
    # (The fake server's self-branch verdicts do not depend on the cell, so the two estimators
    # agree here; test_analysis_gtt tells them apart on rows where they do not.)
    pooled = hand_scores(rows, "gtt", "pooled")

    store = Store(str(db))
    page = build_gtt_report(store, run_id, tmp_path / "rep", n_boot=50).read_text()
    store.close()
    assert "Proposition 2" in page and "estimator" in page
    # The overview's spend table adds up what the export's spend file holds, per agent.
    (spend_file,) = (tmp_path / "exp").glob("*spend*.csv")
    spent: dict[str, list[int]] = {}
    for r in csv.DictReader(spend_file.open(encoding="utf-8")):
        totals = spent.setdefault(r["agent"], [0, 0, 0])
        for i, key in enumerate(("calls", "tokens_in", "tokens_out")):
            totals[i] += int(r[key])
    assert spent and any(t[1] > 0 for t in spent.values())  # the fake server counts tokens
    overview = re.search(r'<section id="overview">(.*?)</section>', page, re.S)
    assert overview and "What the run spent per agent" in overview.group(1)
    for agent, (calls, tokens_in, tokens_out) in spent.items():
        assert f'<tr><td>{agent}</td><td class="num">{calls}</td>' in overview.group(1)
        assert f'<td class="num">{tokens_in}</td><td class="num">{tokens_out}</td>' in (
            overview.group(1)
        )
    # Intervals are printed under the scores, not only in tooltips.
    assert '<span class="detail">[' in page
    for variant in ("gtt", "gttq"):
        shown = table_rows(page, f"{variant}-scores")
        for agent, (f, d, t) in paper[variant].items():
            assert shown[agent][2:5] == [f"{f:.2f}", f"{d:.2f}", f"{t:.2f}"], (variant, agent)
    # Table 1: both settings side by side, ordered by mean T, three decimals.
    table1 = table_rows(page, "table1")
    mean_t = {a: (paper["gtt"][a][2] + paper["gttq"][a][2]) / 2 for a in UNIVERSE}
    assert list(table1) == sorted(UNIVERSE, key=lambda a: -mean_t[a])
    for agent, cells in table1.items():
        (fg, dg, tg), (fq, dq, tq) = paper["gtt"][agent], paper["gttq"][agent]
        expected = [tg, fg, dg, tq, fq, dq, mean_t[agent]]
        assert [c.replace("\u00a0★", "") for c in cells[1:8]] == [f"{x:.3f}" for x in expected]

    for estimator, expected_scores in (("paper", paper["gtt"]), ("pooled", pooled)):
        done = cli(
            "report", run_id, "--store", str(db), "--json", "--estimator", estimator, cwd=tmp_path
        )
        payload = json.loads(done.stdout)
        assert payload["estimator"] == estimator
        got = {s["agent"]: s for s in payload["variants"]["gtt"]["scores"]}
        for agent, (f, d, t) in expected_scores.items():
            assert got[agent]["fooling"] == pytest.approx(f)
            assert got[agent]["distinguishing"] == pytest.approx(d)
            assert got[agent]["total"] == pytest.approx(t)
            assert got[agent]["estimator"] == estimator
