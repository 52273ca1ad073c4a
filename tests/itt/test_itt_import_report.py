"""The report reads an `itt import` folder of the paper's released judgements directly, and an
ITT judgements file is recognised as such (not taken for a three-party verdict file)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from turinglab.cli import app
from turinglab.itt.judgements import JudgementRow
from turinglab.itt.metrics import conversation_type_split

RELEASED = Path(__file__).parents[2] / "data" / "released" / "new_results_prolific_first8.csv"
runner = CliRunner()


@pytest.fixture
def imported(tmp_path: Path) -> Path:
    out = tmp_path / "paper"
    done = runner.invoke(app, ["itt", "import", str(RELEASED), "--out", str(out)])
    assert done.exit_code == 0, done.output
    assert not (out / "responses.csv").exists()
    return out


@pytest.mark.parametrize("target", ["", "judgements.csv"])
def test_the_report_reads_an_import_folder(imported: Path, tmp_path: Path, target: str) -> None:
    out = tmp_path / f"report{len(target)}"
    done = runner.invoke(app, ["report", str(imported / target), "--out", str(out)])
    assert done.exit_code == 0, done.output
    html = (out / "itt_report.html").read_text()
    assert "Integrative Turing test" in html
    assert "human" in html and "conversation" in html
    # intervals printed beside the estimate (not only in a hover tooltip)
    assert "value ± SD [95% CI]" in html
    assert "Figure S4E" in html and "p(AI|AI) AIAI" in html
    assert re.search(r">0\.\d\d ± 0\.\d\d \[0\.\d\d, 0\.\d\d\]<", html)


def _side(judge: str, trial: str, side: str, source: str, label: str) -> JudgementRow:
    return JudgementRow(
        judge=judge,
        judge_type="human",
        item=f"{trial}:{side}",
        source=source,
        model="" if source == "human" else "AI",
        label=label,
        task="conversation",
    )


def test_the_s4e_split_by_conversation_type() -> None:
    rows = [
        # HH: both called human; AIAI: one called machine; HAI: human called human, AI called H
        _side("j", "hh", "A", "human", "H"), _side("j", "hh", "B", "human", "H"),
        _side("j", "aa", "A", "machine", "M"), _side("j", "aa", "B", "machine", "H"),
        _side("j", "ha", "A", "human", "M"), _side("j", "ha", "B", "machine", "H"),
        _side("j", "lone", "A", "human", "H"),  # no B side: not a pair
    ]  # fmt: skip
    got = conversation_type_split(rows, replicates=100)
    assert got is not None
    assert {k: (v["n"], v["rate"], v["units"]) for k, v in got.items()} == {
        "p(H|H) HH": (2, 1.0, 1),
        "p(H|H) mixed": (1, 0.0, 1),
        "p(AI|AI) AIAI": (2, 0.5, 1),
        "p(AI|AI) mixed": (1, 0.0, 1),
    }
    assert all(v["ci"] is None for v in got.values())  # one conversation each: no interval
