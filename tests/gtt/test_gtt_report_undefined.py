"""The report on runs where much is undefined: every budget trial excluded, one-branch cells,
a silent fixed judge, decided agents at n = 2 — and a failing report leaving nothing behind."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from turinglab.config import parse_config
from turinglab.report import gtt_report
from turinglab.report.gtt_report import build_gtt_report
from turinglab.runner.execute import run_experiment
from turinglab.store.database import Store

# "judge" always says 1, "mimic" always 0, "silent" never answers.
AGENTS = {
    "judge": {"kind": "scripted", "replies": ["What is 2+2?", "<answer>1</answer>"]},
    "mimic": {
        "kind": "scripted",
        "replies": ["Hello there", "Write a haiku.", "<answer>0</answer>"],
    },
    "silent": {"kind": "scripted", "replies": ["Tell me your name.", "no idea"]},
}


def make_run(db: Path, **experiment: object) -> str:
    config = parse_config(
        {
            "name": "undefined",
            "agents": AGENTS,
            "experiment": {
                "game": "gtt",
                "universe": ["judge", "mimic", "silent"],
                "max_distinguisher_turns": 3,
                **experiment,
            },
        }
    )
    store = Store(str(db))
    run_id = asyncio.run(run_experiment(config, store, say=lambda _m: None)).run_id
    store.close()
    return run_id


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "turinglab", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=180,
    )


def test_all_budget_trials_excluded_reports_instead_of_crashing(tmp_path: Path) -> None:
    # Only "silent" judges the budget cells: under --missing exclude no trial counts.
    db = tmp_path / "s.db"
    make_run(
        db,
        variants=["gtt", "gtt-turns"],
        trials_per_pair=2,
        budgets=[1, 2],
        budget_pairs=[["mimic", "silent"], ["judge", "silent"]],
    )
    done = cli(
        "report",
        "undefined",
        "--store",
        str(db),
        "--missing",
        "exclude",
        "--out",
        "rep",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    page = (tmp_path / "rep" / "report.html").read_text()
    assert "gtt-turns: no actor-branch trial counts under the policy" in page
    assert not (tmp_path / "rep" / "budget-curves.png").exists()
    assert not list(tmp_path.glob(".rep.*"))  # no staging folder left behind


def test_a_failing_report_leaves_no_half_written_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "s.db"
    run_id = make_run(db, trials_per_pair=2)
    store = Store(str(db))
    old = tmp_path / "old"
    build_gtt_report(store, run_id, old, n_boot=20, transcripts=False)
    before = (old / "report.html").read_text()

    def broken(ctx: object) -> None:
        raise RuntimeError("a section failed")

    monkeypatch.setattr(gtt_report, "_diagnostics", broken)
    for target in (tmp_path / "new", old):
        with pytest.raises(RuntimeError, match="a section failed"):
            build_gtt_report(store, run_id, target, n_boot=20, transcripts=False)
    store.close()
    assert not (tmp_path / "new").exists()  # no figures written before the failure
    assert (old / "report.html").read_text() == before  # the previous report intact
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old", "s.db"]


def test_one_branch_cells_print_undefined_never_numbers(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    run_id = make_run(db, variants=["gtt", "gttq"], trials_per_pair=1, max_specimen_turns=1)
    store = Store(str(db))
    page = build_gtt_report(store, run_id, tmp_path / "rep", n_boot=20).read_text()
    store.close()
    section = re.search(r'<section id="gttq-advantage">(.*?)</section>', page, re.S)
    assert section
    pair_rows = re.findall(r"<tr>(.*?)</tr>", section.group(1).split("Per ordered pair")[1])
    assert pair_rows
    texts = [re.findall(r"<td[^>]*>([^<]*)</td>", r) for r in pair_rows]
    per_pair = [t for t in texts if len(t) == 10]
    assert len(per_pair) == 9  # one trial per ordered pair: one branch each
    for cells in per_pair:
        assert cells[5:8] == ["undefined"] * 3, cells  # p̂, d̂, SE
    done = cli("report", run_id, "--store", str(db), "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    pairs = json.loads(done.stdout)["variants"]["gttq"]["pairs"]
    assert all(p["p_hat"] is None and p["d_hat"] is None and not p["defined"] for p in pairs)
    table = cli("report", run_id, "--store", str(db), cwd=tmp_path).stdout
    assert "undefined" in table and "-0.50" not in table


def test_silent_fixed_judge_and_decided_agents(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    run_id = make_run(db, variants=["gtt", "fdgtt"], trials_per_pair=2, distinguishers=["silent"])
    store = Store(str(db))
    out = tmp_path / "rep"
    page = build_gtt_report(store, run_id, out, n_boot=50).read_text()
    store.close()
    # Recognition: every FD trial is unanswered, so nothing is recognised and the rate is
    # undefined; the no-answers stand beside it (not "1 of 3 recognised").
    fd = re.search(r'<section id="fixed-distinguisher">(.*?)</section>', page, re.S)
    assert fd and "<th>no answer</th>" in fd.group(1)
    # Each table with the caption printed above it (outside the scrolling box).
    tables = re.findall(
        r'(?:<p class="table-caption">[^<]*</p>)?<div.*?</table>', fd.group(1), re.S
    )
    (recognition,) = [t for t in tables if "recognition: Pr[D says 1" in t]
    rows = re.findall(r"<tr>(.*?)</tr>", recognition.split("</thead>")[1])
    assert len(rows) == 2  # D = silent recognising judge and mimic
    for row in rows:
        d, _agent, verdicts, recognised, rate, silent = re.findall(r"<td[^>]*>([^<]*)</td>", row)
        assert (d, verdicts, recognised, rate) == ("silent", "0", "0", "undefined")
        assert int(silent) > 0
    for name in ("fdgtt-fd-relations", "fdgtt-fd-collapse"):
        assert (out / f"{name}.png").exists() and f'id="{name}-' in page
    # Scripted agents decide every cell: the bootstrap has no spread, so no rank certainty.
    scores = re.search(r'<section id="gtt-scores">(.*?)</section>', page, re.S)
    assert scores and "not enough data" in scores.group(1)
    assert not re.search(r"<td>1–1</td>", scores.group(1))
    assert "Table 1 needs both gtt and gttq trials" in page
