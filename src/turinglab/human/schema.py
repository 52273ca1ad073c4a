"""Import and validation of human-judged Turing-test studies (SPEC §2, rows.txt §2).

One row per (game, witness) judgement:

=====================  ========  ========  ===================================================
column                 type      required  meaning
=====================  ========  ========  ===================================================
game                   str       yes       game id; a three-party game has two rows
interrogator           str       yes       the judging participant
witness                str       yes       AI witness label ("GPT-4.5-PERSONA", "ELIZA") or "human"
witness_type           str       yes       "ai" or "human"
judged_human           bool      yes       the interrogator's verdict on THIS witness
study                  str       no        population label; "default" when absent
format                 str       no*       "three-party" or "two-party" (*see below)
confidence             float     no        0–100 slider ("total guess" … "totally sure"), or empty
reason                 str       no        free-text reason for the verdict
round                  int       no        the interrogator's game order, 1..k
interrogator_messages  int       no        messages the interrogator sent to this witness
witness_messages       int       no        messages the witness sent
duration_s             float     no        game duration in seconds
prior_participation    bool      no        took part in a similar experiment before
persona                str       no        prompt condition of an AI witness (PERSONA, NO-PERSONA)
model                  str       no        underlying model of an AI witness
strategies             str       no        ';'-separated strategy codes
reason_codes           str       no        ';'-separated reason codes
transcript             str       no        JSON list of {"sender", "text", "t"} messages
survey_*               any       no        exit-survey answers of the interrogator
excluded_reason        str       no        set: a game with no usable verdict (abandoned,
                                           flagged); listed among the exclusions, not analysed
=====================  ========  ========  ===================================================

Rows with an `excluded_reason` need none of the other values but `game`: they are set aside
before validation (`df.attrs["excluded_games"]`: game -> reason) and counted by the report's
exclusions (human/exclusions.py).

When `format` is absent (or empty for a whole game) it is inferred only where unambiguous: a
one-row game is two-party; a two-row game with one AI and one human witness is three-party.
Anything else needs an explicit `format`. Booleans accept true/false, 1/0, yes/no, t/f, y/n.
Files: CSV (leading lines starting with '#' are comments) or JSONL (one object per line).
Errors name the 1-based line of the file (CSV: the header is line 1) and the column.
"""

from __future__ import annotations

import csv
import functools
import io
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from turinglab.csv_cells import restored

FORMATS = ("three-party", "two-party")
WITNESS_TYPES = ("ai", "human")
REQUIRED = ("game", "interrogator", "witness", "witness_type", "judged_human")
EXCLUDED_REASON = "excluded_reason"  # a game listed among the exclusions with this reason
_TRUE = {"true", "1", "yes", "t", "y", "1.0"}
_FALSE = {"false", "0", "no", "f", "n", "0.0"}
_MAX_LISTED = 20


@dataclass(frozen=True)
class ColumnSpec:
    name: str
    type: str
    required: bool
    description: str


STUDY_COLUMNS: tuple[ColumnSpec, ...] = (
    ColumnSpec("game", "str", True, "game id; a three-party game has two rows"),
    ColumnSpec("interrogator", "str", True, "the judging participant"),
    ColumnSpec("witness", "str", True, 'AI witness label or "human"'),
    ColumnSpec("witness_type", "str", True, '"ai" or "human"'),
    ColumnSpec("judged_human", "bool", True, "the interrogator's verdict on this witness"),
    ColumnSpec("study", "str", False, 'population label; "default" when absent'),
    ColumnSpec("format", "str", False, '"three-party" or "two-party"; inferred if unambiguous'),
    ColumnSpec("confidence", "float", False, "verdict confidence 0–100, or empty"),
    ColumnSpec("reason", "str", False, "free-text reason for the verdict"),
    ColumnSpec("round", "int", False, "the interrogator's game order, 1..k"),
    ColumnSpec("interrogator_messages", "int", False, "messages the interrogator sent"),
    ColumnSpec("witness_messages", "int", False, "messages the witness sent"),
    ColumnSpec("duration_s", "float", False, "game duration in seconds"),
    ColumnSpec("prior_participation", "bool", False, "took part in a similar study before"),
    ColumnSpec("persona", "str", False, "prompt condition of an AI witness"),
    ColumnSpec("model", "str", False, "underlying model of an AI witness"),
    ColumnSpec("strategies", "str", False, "';'-separated strategy codes"),
    ColumnSpec("reason_codes", "str", False, "';'-separated reason codes"),
    ColumnSpec("transcript", "str", False, 'JSON list of {"sender", "text", "t"}'),
    ColumnSpec("survey_*", "any", False, "exit-survey answers of the interrogator"),
)
_TEXT_COLUMNS = ("reason", "persona", "model", "strategies", "reason_codes", "transcript")
_COUNT_COLUMNS = ("round", "interrogator_messages", "witness_messages")


class StudyValidationError(ValueError):
    """Bad study data; `problems` lists every (location, column, message) found."""

    def __init__(self, problems: list[tuple[str, str, str]]):
        self.problems = problems
        lines = [f"{where}, column {col!r}: {msg}" for where, col, msg in problems[:_MAX_LISTED]]
        more = len(problems) - _MAX_LISTED
        if more > 0:
            lines.append(f"... and {more} more")
        # one problem is one line; several are listed under a heading
        joiner = " " if len(lines) == 1 else "\n  "
        super().__init__("invalid study data:" + joiner + "\n  ".join(lines))


# ---------------------------------------------------------------- reading files


def read_records(path: str | Path) -> tuple[pd.DataFrame, list[int]]:
    """Read a CSV or JSONL file as raw values plus the 1-based source line of every row."""
    path = Path(path)
    text = path.read_text(encoding="utf-8-sig")
    if path.suffix.lower() in (".jsonl", ".ndjson"):
        return _read_jsonl(text, path.name)
    if path.suffix.lower() in (".csv", ".txt"):
        return _read_csv(text, path.name)
    raise ValueError(f"{path}: unknown file type {path.suffix!r} (use .csv or .jsonl)")


def _read_jsonl(text: str, name: str) -> tuple[pd.DataFrame, list[int]]:
    rows: list[dict[str, Any]] = []
    lines: list[int] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as err:
            raise ValueError(f"{name}: line {number}: not valid JSON ({err.msg})") from None
        if not isinstance(value, dict):
            raise ValueError(f"{name}: line {number}: expected a JSON object")
        if isinstance(value.get("transcript"), list):
            value["transcript"] = json.dumps(value["transcript"])
        rows.append(value)
        lines.append(number)
    if not rows:
        raise ValueError(f"{name}: no rows (the file is empty)")
    return pd.DataFrame(rows), lines


_DELIMITERS = ",;\t|"


def _delimiter(body: str) -> str:
    """The field separator: a comma, unless the header line is split by one of ; tab | and
    has no comma (spreadsheets in many locales write semicolons, with decimal commas)."""
    header = body.splitlines()[0]
    if "," in header or not header:
        return ","
    found = [c for c in _DELIMITERS[1:] if c in header]
    if not found:
        return ","  # one column: the missing-column message will list what is needed
    return max(found, key=header.count)


def _read_csv(text: str, name: str) -> tuple[pd.DataFrame, list[int]]:
    all_lines = text.splitlines(keepends=True)
    skipped = 0
    while skipped < len(all_lines) and all_lines[skipped].lstrip().startswith("#"):
        skipped += 1
    body = "".join(all_lines[skipped:])
    if not body.strip():
        raise ValueError(f"{name}: no rows (the file is empty)")
    reader = csv.reader(io.StringIO(body), delimiter=_delimiter(body))
    header = next(reader)
    header = [h.strip() for h in header]
    repeated = sorted({h for h in header if header.count(h) > 1})
    if repeated:  # which of the two would count is anyone's guess
        shown = ", ".join(repr(h) for h in repeated)
        raise ValueError(
            f"{name}: line {skipped + 1}: the header names {shown} more than once; "
            "keep one column of each name"
        )
    rows: list[list[str]] = []
    lines: list[int] = []
    start = reader.line_num + 1
    try:
        for record in reader:
            if record:
                if len(record) != len(header):
                    raise ValueError(
                        f"{name}: line {start + skipped}: {len(record)} fields, "
                        f"the header has {len(header)}"
                    )
                rows.append(record)
                lines.append(start + skipped)
            start = reader.line_num + 1
    except csv.Error as err:
        raise ValueError(
            f"{name}: line {reader.line_num + skipped}: malformed CSV ({err})"
        ) from None
    frame = pd.DataFrame(rows, columns=header, dtype=object)
    for column in frame.columns.unique():
        values = frame[column]
        if isinstance(values, pd.Series):  # (a duplicated header name gives a frame)
            frame[column] = values.where(values != "", None).map(restored)
    return frame, lines


def load_study(path: str | Path) -> pd.DataFrame:
    """Load a study file (CSV or JSONL) into the validated, typed study table."""
    raw, lines = read_records(path)
    if raw.empty:
        raise ValueError(f"{Path(path).name}: no rows (a header line only)")
    return _validate(raw, lambda i: f"line {lines[i]}")


def validate_study(df: pd.DataFrame) -> pd.DataFrame:
    """Validate and normalise an in-memory study table; errors name 1-based data rows."""
    return _validate(df.reset_index(drop=True), lambda i: f"row {i + 1}")


# ---------------------------------------------------------------- cell parsers


def _missing(value: Any) -> bool:
    if value is None or value is pd.NA:
        return True
    if isinstance(value, float) and math.isnan(value):
        return True
    return isinstance(value, str) and not value.strip()


def parse_bool(value: Any) -> bool | None:
    """Boolean-like value → bool; None if missing; ValueError otherwise."""
    if _missing(value):
        return None
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if isinstance(value, int | float | np.integer | np.floating) and value in (0, 1):
        return bool(value)
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ValueError(f"not a boolean: {value!r}")


_DECIMAL_COMMA = re.compile(r"^[-+]?\d+,\d+$")


def _parse_number(value: Any, *, integer: bool, low: float, high: float) -> float:
    if _missing(value):
        return math.nan
    if isinstance(value, bool):
        raise ValueError(f"not a number: {value!r}")
    try:
        number = float(value)
    except (TypeError, ValueError):
        if isinstance(value, str) and _DECIMAL_COMMA.match(value.strip()):
            fixed = value.strip().replace(",", ".")
            raise ValueError(f"not a number: {value!r} (a decimal comma? write {fixed})") from None
        raise ValueError(f"not a number: {value!r}") from None
    if not math.isfinite(number):
        raise ValueError(f"not a finite number: {value!r}")
    if integer and not number.is_integer():
        raise ValueError(f"not a whole number: {value!r}")
    if not low <= number <= high:
        raise ValueError(f"{value!r} is outside {low:g}–{high:g}")
    return number


# ---------------------------------------------------------------- validation


def _validate(raw: pd.DataFrame, where: Any) -> pd.DataFrame:
    excluded: dict[str, str] = {}
    if EXCLUDED_REASON in raw.columns:
        reasons = raw[EXCLUDED_REASON].map(lambda v: None if _missing(v) else str(v).strip())
        set_aside = reasons.notna().to_numpy()
        for game, reason in zip(raw["game"][set_aside], reasons[set_aside], strict=True):
            excluded.setdefault(str(game), str(reason))
        kept_at = np.flatnonzero(~set_aside)
        raw = raw.loc[~set_aside].drop(columns=[EXCLUDED_REASON]).reset_index(drop=True)
        where = functools.partial(_where_kept, where, kept_at)
    out = _validate_rows(raw, where)
    out.attrs["excluded_games"] = excluded
    return out


def _where_kept(where: Any, kept_at: Any, i: int) -> Any:
    return where(int(kept_at[i]))


def _validate_rows(raw: pd.DataFrame, where: Any) -> pd.DataFrame:
    missing = [c for c in REQUIRED if c not in raw.columns]
    if missing:
        raise StudyValidationError([("header", c, "required column is missing") for c in missing])
    problems: list[tuple[str, str, str]] = []
    out = pd.DataFrame(index=raw.index)

    def convert(column: str, parse: Any) -> list[Any]:
        if column not in raw:  # an absent optional column: every cell is missing
            return _parse_column(
                column, pd.Series([None] * len(raw), dtype=object), parse, where, problems
            )
        return _parse_column(column, raw[column], parse, where, problems)

    def required_text(value: Any) -> str:
        if _missing(value):
            raise ValueError("required value is empty")
        return str(value).strip()

    def choice(options: tuple[str, ...], *, allow_missing: bool) -> Any:
        def parse(value: Any) -> str | None:
            if _missing(value):
                if allow_missing:
                    return None
                raise ValueError("required value is empty")
            text = str(value).strip().lower()
            if text not in options:
                raise ValueError(f"{value!r} is not one of {', '.join(options)}")
            return text

        return parse

    def required_bool(value: Any) -> bool | None:
        parsed = parse_bool(value)
        if parsed is None:
            raise ValueError("required value is empty")
        return parsed

    for column in ("game", "interrogator", "witness"):
        out[column] = convert(column, required_text)
    out["witness_type"] = convert("witness_type", choice(WITNESS_TYPES, allow_missing=False))
    out["judged_human"] = convert("judged_human", required_bool)
    out["study"] = [s if s else "default" for s in convert("study", _optional_text)]
    out["format"] = convert("format", choice(FORMATS, allow_missing=True))
    out["confidence"] = convert(
        "confidence", lambda v: _parse_number(v, integer=False, low=0, high=100)
    )
    out["round"] = convert("round", lambda v: _parse_number(v, integer=True, low=1, high=1e9))
    for column in ("interrogator_messages", "witness_messages"):
        out[column] = convert(column, lambda v: _parse_number(v, integer=True, low=0, high=1e9))
    out["duration_s"] = convert(
        "duration_s", lambda v: _parse_number(v, integer=False, low=0, high=math.inf)
    )
    out["prior_participation"] = convert("prior_participation", parse_bool)
    for column in _TEXT_COLUMNS:
        out[column] = convert(column, _optional_text)
    for column in raw.columns:
        if column not in out.columns:
            out[column] = _maybe_numeric(raw[column])
    if problems:
        raise StudyValidationError(problems)
    _check_games(out, where, problems)
    if problems:
        raise StudyValidationError(problems)
    return _typed(out)


def _parse_each(
    column: str, values: list[Any], parse: Any, where: Any, problems: list[tuple[str, str, str]]
) -> list[Any]:
    out = []
    for i, value in enumerate(values):
        try:
            out.append(parse(value))
        except ValueError as err:
            problems.append((where(i), column, str(err)))
            out.append(None)
    return out


def _parse_column(
    column: str, series: pd.Series, parse: Any, where: Any, problems: list[tuple[str, str, str]]
) -> list[Any]:
    """`parse` applied to every cell — once per distinct value when the cells are text (as
    every CSV cell is): 200,000 rows hold a few hundred distinct confidences, rounds and
    verdicts, so this is what keeps validation linear and cheap. Mixed-type cells (JSONL) are
    parsed one by one, since 1, 1.0 and True would share one entry of a hash table."""
    if pd.api.types.infer_dtype(series, skipna=True) not in ("string", "empty"):
        return _parse_each(column, series.tolist(), parse, where, problems)
    codes, uniques = pd.factorize(series, use_na_sentinel=True)
    parsed: list[Any] = []
    failed: dict[int, str] = {}
    for code, value in enumerate(uniques.tolist()):
        try:
            parsed.append(parse(value))
        except ValueError as err:
            parsed.append(None)
            failed[code] = str(err)
    try:
        missing_value, missing_error = parse(None), None
    except ValueError as err:
        missing_value, missing_error = None, str(err)
    if failed or (missing_error is not None and (codes == -1).any()):
        for i in np.flatnonzero(np.isin(codes, list(failed)) | (codes == -1)):
            message = failed.get(int(codes[i])) if codes[i] >= 0 else missing_error
            if message is not None:
                problems.append((where(int(i)), column, message))
    lookup = np.empty(len(parsed) + 1, dtype=object)
    lookup[: len(parsed)] = parsed
    lookup[-1] = missing_value  # code -1 indexes the last slot
    return list(lookup[codes])


def _optional_text(value: Any) -> str | None:
    return None if _missing(value) else str(value).strip()


def _maybe_numeric(column: pd.Series) -> pd.Series:
    """Survey and other extra columns: numeric when every non-empty value is a number.
    Decided once per distinct value (a survey answer has a handful)."""
    codes, uniques = pd.factorize(column.astype(object), use_na_sentinel=True)
    cleaned = [None if _missing(v) else v for v in uniques.tolist()]
    numbers: list[float] = []
    for value in cleaned:
        if value is None:
            numbers.append(math.nan)
            continue
        try:
            number = float(value)
        except (TypeError, ValueError):
            break
        numbers.append(number)
    lookup = np.empty(len(cleaned) + 1, dtype=object)
    lookup[: len(cleaned)] = cleaned
    lookup[-1] = None
    if len(numbers) == len(cleaned) and not any(isinstance(v, bool) for v in cleaned):
        as_float = np.append(np.array(numbers, dtype=float), math.nan)
        return pd.Series(as_float[codes], index=column.index, name=column.name)
    return pd.Series(lookup[codes], index=column.index, name=column.name, dtype=object)


def _check_games(df: pd.DataFrame, where: Any, problems: list[tuple[str, str, str]]) -> None:
    """Per-game consistency; fills inferred formats in place.

    Vectorised over games (one groupby, no per-game pandas calls): a study of 100,000 games
    is checked in well under a second. Problems are then phrased for the offending games only.
    """
    if df.empty:
        return
    by = df.groupby("game", sort=False)
    games = pd.DataFrame(
        {
            "first": df.index.to_series().groupby(df["game"], sort=False).first(),
            "rows": by.size(),
            "studies": by["study"].nunique(),
            "interrogators": by["interrogator"].nunique(),
            "formats": by["format"].nunique(),
            "given": by["format"].first(),
            "ai": (df["witness_type"] == "ai").groupby(df["game"], sort=False).sum(),
            "human": (df["witness_type"] == "human").groupby(df["game"], sort=False).sum(),
            "judged": df["judged_human"].astype(bool).groupby(df["game"], sort=False).sum(),
        }
    )
    shaped_3p = (games["rows"] == 2) & (games["ai"] == 1) & (games["human"] == 1)
    inferred = pd.Series(None, index=games.index, dtype=object)
    inferred[shaped_3p] = "three-party"
    inferred[games["rows"] == 1] = "two-party"
    fmt = games["given"].where(games["given"].notna(), inferred)
    mixed = games["formats"] > 1
    fmt = fmt.where(~mixed, None)
    bad = (
        (games["studies"] > 1)
        | (games["interrogators"] > 1)
        | mixed
        | fmt.isna()
        | ((fmt == "two-party") & (games["rows"] != 1))
        | ((fmt == "three-party") & (~shaped_3p | (games["judged"] != 1)))
    )
    for game in games.index[bad.to_numpy()]:
        _game_problems(df, game, games.loc[game], fmt[game], where, problems)
    df["format"] = df["game"].map(fmt).astype(object)


def _game_problems(
    df: pd.DataFrame,
    game: str,
    info: pd.Series,
    fmt: Any,
    where: Any,
    problems: list[tuple[str, str, str]],
) -> None:
    """The problems of one inconsistent game, phrased for the person who wrote the file."""
    first = where(info["first"])
    for column, count in (("study", "studies"), ("interrogator", "interrogators")):
        if info[count] > 1:
            problems.append((first, column, f"differs between the rows of game {game!r}"))
    rows = df[df["game"] == game]
    if info["formats"] > 1:
        given = sorted(set(rows["format"].dropna()))
        problems.append((first, "format", f"game {game!r} mixes formats {given}"))
        return
    if fmt is None or pd.isna(fmt):
        problems.append(
            (first, "format", f"game {game!r} has {info['rows']} rows; cannot infer its format")
        )
        return
    if fmt == "two-party" and info["rows"] != 1:
        problems.append((first, "game", f"two-party game {game!r} has {info['rows']} rows"))
    if fmt == "three-party":
        types = sorted(rows["witness_type"])
        if not (info["rows"] == 2 and types == ["ai", "human"]):
            problems.append(
                (
                    first,
                    "witness_type",
                    f"three-party game {game!r} needs one ai and one human row, has {types}",
                )
            )
        elif info["judged"] != 1:
            problems.append(
                (
                    first,
                    "judged_human",
                    f"three-party game {game!r} must have exactly one witness judged human, "
                    f"has {info['judged']}",
                )
            )


def _typed(df: pd.DataFrame) -> pd.DataFrame:
    df = df.copy()
    df["judged_human"] = df["judged_human"].astype(bool)
    for column in ("confidence", "duration_s", *_COUNT_COLUMNS):
        df[column] = df[column].astype(float)
    df["prior_participation"] = df["prior_participation"].astype("boolean")
    for column in (*_TEXT_COLUMNS, "format", "study"):
        df[column] = df[column].astype(object).where(df[column].notna(), None)
    return df.reset_index(drop=True)
