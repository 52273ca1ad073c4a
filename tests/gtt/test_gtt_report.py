"""The HTML report built from a real store (scripted agents played through the runner)."""

from __future__ import annotations

import asyncio
import base64
import gzip
import re
from pathlib import Path

import pytest

from turinglab.config import parse_config
from turinglab.report.gtt_report import build_gtt_report
from turinglab.runner.execute import run_experiment
from turinglab.store.database import Store

# "judge" always ends with 1, "mimic" always with 0, "third" never answers (turn cap 3).
AGENTS = {
    "judge": {
        "kind": "scripted",
        "replies": ["Hi! What is 2+2? <script>alert('x')</script>", "Hmm. <answer>1</answer>"],
    },
    "mimic": {
        "kind": "scripted",
        "replies": ["Hello, I am <b>mimic</b>", "Write a haiku.", "<answer>0</answer>"],
    },
    "third": {"kind": "scripted", "replies": ["Tell me your name.", "no idea"]},
}
ALL_VARIANTS = ["gtt", "gttq", "gtt-turns", "gttq-queries", "fdgtt"]


def make_run(db: Path, variants: list[str]) -> tuple[Store, str]:
    config = parse_config(
        {
            "name": "report-test",
            "agents": AGENTS,
            "experiment": {
                "game": "gtt",
                "universe": ["judge", "mimic", "third"],
                "variants": variants,
                "trials_per_pair": 2,
                "budgets": [1, 2],
                "distinguishers": ["judge"] if "fdgtt" in variants else [],
                "max_distinguisher_turns": 3,
            },
        }
    )
    store = Store(str(db))
    summary = asyncio.run(run_experiment(config, store, say=lambda _m: None))
    return store, summary.run_id


@pytest.fixture(scope="module")
def full_report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    base = tmp_path_factory.mktemp("report")
    store, run_id = make_run(base / "store.db", ALL_VARIANTS)
    path = build_gtt_report(store, run_id, base / "out", n_boot=200)
    store.close()
    return path, path.read_text(encoding="utf-8")


def test_report_is_self_contained(full_report: tuple[Path, str]) -> None:
    _, html = full_report
    assert not re.search(r"""(src|href|action)\s*=\s*["']?\s*(https?:)?//""", html)
    assert not re.search(r"url\(\s*['\"]?(https?:)?//", html) and "@import" not in html
    assert "http://" not in html and "https://" not in html
    assert "default-src 'none'" in html  # the CSP forbids any fetch


def test_every_figure_is_inline_and_written_as_png_and_svg(full_report: tuple[Path, str]) -> None:
    path, html = full_report
    pngs = sorted(p.stem for p in path.parent.glob("*.png"))
    svgs = sorted(p.stem for p in path.parent.glob("*.svg"))
    assert pngs == svgs and all(path.parent.joinpath(f"{n}.png").stat().st_size for n in pngs)
    assert html.count("<svg") == len(pngs)
    expected = {
        "gtt-advantage-heatmap",
        "gtt-relation-circular",
        "gtt-relation-vertical",
        "gtt-relation-strict",
        "gtt-epsilon-sweep",
        "gtt-scores",
        "gttq-advantage-heatmap",
        "budget-curves",
        "fdgtt-electrophoresis",
        "probe-diagnostics",
    }
    assert expected <= set(pngs)


def test_tables_hold_hand_computed_values(full_report: tuple[Path, str]) -> None:
    _, html = full_report
    for heading in (
        "Distinguishing advantage",
        "Turing scores",
        "budget curves",
        "Fixed distinguisher",
        "Transcript diagnostics",
        "Transcripts",
    ):
        assert heading in html
    for column in ("ŝ_B,A", "F (fooling)", "T_D", "recognised", "rank range"):
        assert f"<th>{column}</th>" in html
    # "third" never answers: under the default policy it is always wrong, so d̂(·, third) =
    # −½ with n = 2; Clopper–Pearson for 0/2 is [0, 1 − 0.025^½] = [0, 0.842], minus ½.
    assert '<td class="num hover" title="95% CI [-0.500, 0.342]">-0.50</td>' in html
    # "judge" always says 1: right on its one self-branch trial per pair, ŝ_B = 1/1, whose
    # Clopper–Pearson interval is [0.025^(1/1), 1] = [0.025, 1].
    assert '<td class="num hover" title="95% CI [0.025, 1.000]">1.00</td>' in html


def test_untrusted_transcript_text_is_never_markup(full_report: tuple[Path, str]) -> None:
    _, html = full_report
    assert "<script>alert" not in html and "<b>mimic</b>" not in html
    # Present, compressed (inflated by the page and placed with textContent only).
    block = r'<script type="application/octet-stream" id="[^"]+">([^<]*)</script>'
    blocks = re.findall(block, html)
    text = "".join(gzip.decompress(base64.b64decode(b)).decode("utf-8") for b in blocks)
    assert "<script>alert" in text


def test_absent_sections_become_notes(tmp_path: Path) -> None:
    store, run_id = make_run(tmp_path / "plain.db", ["gtt"])
    html = build_gtt_report(store, run_id, tmp_path / "out", n_boot=50).read_text()
    assert "No gttq trials in this run" in html
    assert "No controlled-turn (gtt-turns) or controlled-query" in html
    assert "No fixed-distinguisher (fdgtt, fdgttq, gdgtt) trials" in html
    assert "No external leaderboard given" in html
    assert not (tmp_path / "out" / "budget-curves.png").exists()


def test_leaderboard_section(tmp_path: Path) -> None:
    import pandas as pd

    store, run_id = make_run(tmp_path / "s.db", ["gtt"])
    board = pd.DataFrame({"agent": ["judge", "mimic", "third"], "score": [3.0, 2.0, 1.0]})
    out = tmp_path / "out"
    html = build_gtt_report(store, run_id, out, n_boot=50, leaderboards={"Arena": board})
    assert "Kendall τ" in html.read_text() and (out / "rank-heatmap.svg").exists()


def test_run_without_trials_and_bad_input(tmp_path: Path) -> None:
    from turinglab.runner.plan import plan_trials

    config = parse_config(
        {
            "name": "empty",
            "agents": AGENTS,
            "experiment": {"game": "gtt", "universe": ["judge", "mimic"], "trials_per_pair": 1},
        }
    )
    store = Store(str(tmp_path / "e.db"))
    store.create_run("emptyrun", "empty", "gtt", {}, {}, plan_trials(config))
    html = build_gtt_report(store, "emptyrun", tmp_path / "out").read_text()
    assert "No finished trials yet" in html and "<svg" not in html
    with pytest.raises(ValueError, match="no run 'ghost'"):
        build_gtt_report(store, "ghost", tmp_path / "out")
    with pytest.raises(ValueError, match="unknown report option"):
        build_gtt_report(store, "emptyrun", tmp_path / "out", colour="red")
    with pytest.raises(ValueError, match="missing policy"):
        build_gtt_report(store, "emptyrun", tmp_path / "out", missing="maybe")
