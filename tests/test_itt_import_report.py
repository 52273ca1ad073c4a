"""The report reads an `itt import` folder of the paper's released judgements directly, and an
ITT judgements file is recognised as such (not taken for a three-party verdict file)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from turinglab.cli import app

RELEASED = Path(__file__).parents[1] / "data" / "released" / "new_results_prolific_first8.csv"
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
    assert "detectability [95% CI]" in html
    assert re.search(r">0\.\d\d \[0\.\d\d, 0\.\d\d\]<", html)
