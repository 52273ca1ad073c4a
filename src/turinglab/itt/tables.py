"""Reading and writing row files (CSV or JSONL) into pydantic records, refusing bad rows with
the file's line and the offending column, so a researcher can fix the file in one go."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, TextIO, TypeVar

from pydantic import BaseModel, ValidationError

from turinglab.csv_cells import neutralised, restored

Row = TypeVar("Row", bound=BaseModel)


class RowError(ValueError):
    """A row of an input file that cannot be used: where it is and what is wrong."""

    def __init__(self, path: Path, line: int, column: str | None, problem: str) -> None:
        where = f"{path}:{line}" + (f": column {column!r}" if column else "")
        super().__init__(f"{where}: {problem}")
        self.path, self.line, self.column, self.problem = path, line, column, problem


def file_format(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix in (".csv", ".tsv"):
        return "csv"
    if suffix in (".jsonl", ".ndjson", ".json"):
        return "jsonl"
    raise ValueError(f"{path}: unknown format {suffix!r} (use .csv or .jsonl)")


def read_text(path: Path) -> str:
    """The file as text: UTF-8, a byte-order mark (Excel's "CSV UTF-8") dropped; anything else
    is refused with the line of the first byte that is not UTF-8."""
    data = path.read_bytes()
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        raise RowError(
            path, line, None, f"not UTF-8 (byte 0x{data[err.start]:02x}); save the file as UTF-8"
        ) from None


def csv_dicts(path: Path) -> tuple[list[str], Iterable[tuple[int, dict[str, str]]]]:
    """Header and (line, row) pairs of a CSV/TSV file, read as `read_text` does."""
    reader = csv.DictReader(
        io.StringIO(read_text(path), newline=""), delimiter="\t" if path.suffix == ".tsv" else ","
    )
    if reader.fieldnames is None:
        raise RowError(path, 1, None, "empty file (expected a header row)")
    header = [str(f) for f in reader.fieldnames]

    def rows() -> Iterable[tuple[int, dict[str, str]]]:
        for raw in reader:
            if None in raw:  # more cells than header columns
                raise RowError(path, reader.line_num, None, "more cells than header columns")
            yield reader.line_num, raw

    return header, rows()


def raw_rows(path: Path) -> Iterable[tuple[int, dict[str, Any]]]:
    """(line number, raw row) pairs; blank values are dropped so optional fields default."""
    if file_format(path) == "csv":
        _, rows = csv_dicts(path)
        for line, raw in rows:
            yield line, {k: restored(v) for k, v in raw.items() if v not in ("", None)}
        return
    for number, text in enumerate(read_text(path).splitlines(), start=1):
        if not text.strip():
            continue
        try:
            data = json.loads(text)
        except json.JSONDecodeError as err:
            raise RowError(path, number, None, f"not JSON: {err.msg}") from None
        if not isinstance(data, dict):
            raise RowError(path, number, None, "expected a JSON object per line")
        yield number, {k: v for k, v in data.items() if v not in ("", None)}


def read_rows(path: Path, model: type[Row]) -> list[Row]:
    """Every row of `path` as `model`; the first bad row raises RowError (line, column)."""
    if not path.is_file():
        raise ValueError(f"{path}: no such file")
    rows: list[Row] = []
    for line, raw in raw_rows(path):
        try:
            rows.append(model.model_validate(raw))
        except ValidationError as err:
            first = err.errors()[0]
            column = ".".join(str(p) for p in first["loc"]) or None
            raise RowError(path, line, column, first["msg"]) from None
    return rows


def write_rows(path: Path, rows: Sequence[BaseModel], columns: Sequence[str]) -> None:
    """Write rows as CSV or JSONL by suffix; None becomes an empty cell / is omitted."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if file_format(path) == "csv":
        with path.open("w", newline="", encoding="utf-8") as fh:
            _write_csv(fh, rows, columns)
        return
    with path.open("w", encoding="utf-8") as fh:
        for d in (r.model_dump(mode="json") for r in rows):
            fh.write(json.dumps({k: v for k, v in d.items() if v is not None}) + "\n")


def csv_text(rows: Sequence[BaseModel], columns: Sequence[str]) -> str:
    """The CSV `write_rows` would write, as a string (for a download)."""
    out = io.StringIO(newline="")
    _write_csv(out, rows, columns)
    return out.getvalue()


def _write_csv(fh: TextIO, rows: Sequence[BaseModel], columns: Sequence[str]) -> None:
    """The named columns first, then any extra ones (demographics) in name order."""
    dumped = [r.model_dump(mode="json") for r in rows]
    extra = sorted({k for d in dumped for k in d} - set(columns))
    writer = csv.DictWriter(fh, fieldnames=[*columns, *extra], extrasaction="ignore")
    writer.writeheader()
    for d in dumped:
        writer.writerow({k: ("" if v is None else neutralised(v)) for k, v in d.items()})
