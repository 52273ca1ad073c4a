"""CSV exports neutralise spreadsheet formulas (issue 32: a reason `=cmd|' /C calc'!A0` landed
verbatim in study.csv), reversibly: our readers get the text back; JSONL keeps the raw text."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from pydantic import BaseModel

from test_study_export import JUDGE, play, three_party
from turinglab.csv_cells import neutralised, restored
from turinglab.human.schema import load_study
from turinglab.itt.tables import read_rows, write_rows
from turinglab.store.database import Store
from turinglab.study_export import export_study

FORMULA = "=cmd|' /C calc'!A0"


@pytest.mark.parametrize(
    "text",
    [FORMULA, "+1+1", "-2+3", "@SUM(A1)", "\tx", "\rx", "'=already", "''", "'tis", "'", "plain"],
)
def test_text_cells_are_neutralised_and_restored_exactly(text: str) -> None:
    written = neutralised(text)
    assert not written.startswith(("=", "+", "-", "@", "\t", "\r"))
    assert restored(written) == text


def test_numbers_are_left_alone() -> None:
    assert [neutralised(v) for v in (-0.5, -3, "-0.5", "+2", None, "")] == [
        -0.5,
        -3,
        "-0.5",
        "+2",
        None,
        "",
    ]


async def test_the_study_file_holds_no_formula_and_reads_back_the_reason(tmp_path: Path) -> None:
    config = three_party(2)
    judge = [*JUDGE[:-1], f"Confidence: 80\nReason: {FORMULA}"]
    config["agents"]["judge"]["replies"] = judge
    store = Store(str(tmp_path / "s.db"))
    run = store.find_run(await play(config, store))
    assert run is not None
    done = export_study(store, run, tmp_path / "out")
    with done.path.open(newline="", encoding="utf-8") as f:
        cells = [cell for row in csv.reader(f) for cell in row]
    assert "'" + FORMULA in cells and FORMULA not in cells
    assert set(load_study(done.path)["reason"]) == {FORMULA}


class Row(BaseModel):
    text: str
    score: float


def test_row_files_csv_neutralised_jsonl_raw(tmp_path: Path) -> None:
    rows = [Row(text='@HYPERLINK("http://x")', score=-1.5)]
    write_rows(tmp_path / "r.csv", rows, ["text", "score"])
    write_rows(tmp_path / "r.jsonl", rows, ["text", "score"])
    assert "'@HYPERLINK" in (tmp_path / "r.csv").read_text()
    assert json.loads((tmp_path / "r.jsonl").read_text())["text"] == rows[0].text
    assert read_rows(tmp_path / "r.csv", Row) == rows
