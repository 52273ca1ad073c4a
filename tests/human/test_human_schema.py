"""Study import and validation: types, defaults, format inference and row-naming errors."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest

from turinglab.human.schema import (
    STUDY_COLUMNS,
    StudyValidationError,
    load_study,
    validate_study,
)

HEADER = "game,interrogator,witness,witness_type,judged_human,confidence,format"
GOOD_ROWS = [
    "g1,i1,GPT,ai,true,80,three-party",
    "g1,i1,human,human,false,80,three-party",
    "g2,i2,ELIZA,ai,0,,two-party",
]


def write(tmp_path: Path, lines: list[str], name: str = "study.csv") -> Path:
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_csv_loads_with_types_and_defaults(tmp_path: Path) -> None:
    df = load_study(write(tmp_path, [HEADER, *GOOD_ROWS]))
    assert list(df["judged_human"]) == [True, False, False]
    assert df["judged_human"].dtype == bool
    assert df["confidence"].iloc[0] == 80.0 and math.isnan(df["confidence"].iloc[2])
    assert set(df["study"]) == {"default"}
    assert list(df["format"]) == ["three-party", "three-party", "two-party"]
    # every documented column is present, even if the file lacks it
    for spec in STUDY_COLUMNS:
        if spec.name != "survey_*":
            assert spec.name in df.columns


def test_jsonl_loads_and_transcript_list_becomes_json_text(tmp_path: Path) -> None:
    rows = [
        {
            "game": "g1",
            "interrogator": "i1",
            "witness": "GPT",
            "witness_type": "AI",
            "judged_human": True,
            "transcript": [{"sender": "interrogator", "text": "hi", "t": 1}],
        },
        {
            "game": "g1",
            "interrogator": "i1",
            "witness": "human",
            "witness_type": "human",
            "judged_human": False,
            "survey_chatbot_use": 3,
        },
    ]
    path = tmp_path / "study.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n\n", encoding="utf-8")
    df = load_study(path)
    assert list(df["witness_type"]) == ["ai", "human"]
    assert list(df["format"]) == ["three-party", "three-party"]  # inferred: 1 ai + 1 human
    assert json.loads(df["transcript"].iloc[0])[0]["text"] == "hi"
    assert df["survey_chatbot_use"].iloc[1] == 3.0


def test_leading_comments_are_skipped_and_lines_still_count(tmp_path: Path) -> None:
    lines = ["# simulated", "# second comment", HEADER, GOOD_ROWS[0], "g1,i1,human,human,maybe,,"]
    with pytest.raises(StudyValidationError) as err:
        load_study(write(tmp_path, lines))
    assert "line 5, column 'judged_human'" in str(err.value)
    assert "maybe" in str(err.value)


def test_missing_required_columns_are_named(tmp_path: Path) -> None:
    path = write(tmp_path, ["game,interrogator,witness", "g1,i1,GPT"])
    with pytest.raises(StudyValidationError) as err:
        load_study(path)
    assert "'witness_type'" in str(err.value) and "'judged_human'" in str(err.value)


@pytest.mark.parametrize(
    ("bad_row", "column", "fragment"),
    [
        ("g2,i2,ELIZA,robot,0,,two-party", "witness_type", "'robot'"),
        ("g2,i2,ELIZA,ai,perhaps,,two-party", "judged_human", "not a boolean"),
        ("g2,i2,ELIZA,ai,0,101,two-party", "confidence", "outside 0–100"),
        ("g2,i2,ELIZA,ai,0,-1,two-party", "confidence", "outside 0–100"),
        ("g2,i2,ELIZA,ai,0,high,two-party", "confidence", "not a number"),
        ("g2,i2,ELIZA,ai,0,,four-party", "format", "'four-party'"),
        ("g2,,ELIZA,ai,0,,two-party", "interrogator", "empty"),
    ],
)
def test_bad_values_name_line_and_column(
    tmp_path: Path, bad_row: str, column: str, fragment: str
) -> None:
    with pytest.raises(StudyValidationError) as err:
        load_study(write(tmp_path, [HEADER, *GOOD_ROWS[:2], bad_row]))
    message = str(err.value)
    assert f"line 4, column '{column}'" in message
    assert fragment in message
    assert err.value.problems[0][:2] == ("line 4", column)


def test_malformed_csv_row_names_its_line(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"line 3: 8 fields, the header has 7"):
        load_study(write(tmp_path, [HEADER, GOOD_ROWS[0], GOOD_ROWS[1] + ",extra"]))


def test_bad_json_line_is_named(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text('{"game": "g1"}\n{not json}\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"line 2: not valid JSON"):
        load_study(path)


def test_unknown_file_type(tmp_path: Path) -> None:
    path = tmp_path / "s.xlsx"
    path.write_text("x", encoding="utf-8")
    with pytest.raises(ValueError, match="unknown file type"):
        load_study(path)


@pytest.mark.parametrize(
    ("rows", "column", "fragment"),
    [
        (
            ["g1,i1,GPT,ai,true,,three-party", "g1,i1,ELIZA,ai,false,,three-party"],
            "witness_type",
            "one ai and one human",
        ),
        (
            ["g1,i1,GPT,ai,true,,three-party", "g1,i1,human,human,true,,three-party"],
            "judged_human",
            "exactly one witness judged human, has 2",
        ),
        (
            ["g1,i1,GPT,ai,false,,three-party", "g1,i1,human,human,false,,three-party"],
            "judged_human",
            "has 0",
        ),
        (["g1,i1,GPT,ai,true,,three-party"], "witness_type", "one ai and one human"),
        (
            ["g1,i1,GPT,ai,true,,two-party", "g1,i1,human,human,false,,two-party"],
            "game",
            "two-party game 'g1' has 2 rows",
        ),
        (
            ["g1,i1,GPT,ai,true,,three-party", "g1,i1,human,human,false,,two-party"],
            "format",
            "mixes formats",
        ),
        (
            ["g1,i1,GPT,ai,true,,three-party", "g1,i9,human,human,false,,three-party"],
            "interrogator",
            "differs",
        ),
    ],
)
def test_inconsistent_games(tmp_path: Path, rows: list[str], column: str, fragment: str) -> None:
    with pytest.raises(StudyValidationError) as err:
        load_study(write(tmp_path, [HEADER, *rows]))
    assert f"line 2, column '{column}'" in str(err.value)
    assert fragment in str(err.value)


def test_format_inference_and_ambiguity() -> None:
    base = {"interrogator": "i1", "judged_human": False}
    frame = pd.DataFrame(
        [
            {**base, "game": "a", "witness": "GPT", "witness_type": "ai", "judged_human": True},
            {**base, "game": "a", "witness": "human", "witness_type": "human"},
            {**base, "game": "b", "witness": "GPT", "witness_type": "ai"},
        ]
    )
    out = validate_study(frame)
    assert list(out["format"]) == ["three-party", "three-party", "two-party"]
    ambiguous = pd.DataFrame(
        [
            {**base, "game": "c", "witness": "GPT", "witness_type": "ai"},
            {**base, "game": "c", "witness": "ELIZA", "witness_type": "ai"},
        ]
    )
    with pytest.raises(StudyValidationError, match=r"row 1, column 'format'.*cannot infer"):
        validate_study(ambiguous)


def test_booleans_and_counts_are_coerced() -> None:
    frame = pd.DataFrame(
        [
            {
                "game": "g",
                "interrogator": "i",
                "witness": "GPT",
                "witness_type": " AI ",
                "judged_human": "Yes",
                "prior_participation": "no",
                "round": "2",
                "interrogator_messages": 3.0,
                "format": "Two-Party",
            },
        ]
    )
    out = validate_study(frame)
    assert out["judged_human"].iloc[0] is True or out["judged_human"].iloc[0] == True  # noqa: E712
    assert out["prior_participation"].iloc[0] == False  # noqa: E712
    assert out["round"].iloc[0] == 2.0 and out["format"].iloc[0] == "two-party"
    frame.loc[0, "round"] = "2.5"
    with pytest.raises(StudyValidationError, match=r"row 1, column 'round': not a whole number"):
        validate_study(frame)


def test_example_file_is_valid_and_says_simulated() -> None:
    path = Path(__file__).parents[2] / "examples" / "three_party_example.csv"
    assert "SIMULATED" in path.read_text(encoding="utf-8").splitlines()[0]
    df = load_study(path)
    assert set(df["format"]) == {"three-party"}
    assert len(df) == 2 * df["game"].nunique()
