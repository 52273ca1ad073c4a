"""The judgements file, the common currency of ITT studies: one row per H/M decision, whether a
person in the browser or an AI judge made it. Columns beyond the named ones are demographics
(age, gender, education, ...) and are kept as given."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from turinglab.itt.tables import csv_text, read_rows, write_rows

Source = Literal["human", "machine"]
Label = Literal["H", "M"]
JUDGEMENT_COLUMNS = (
    *("judge", "judge_type", "item", "source", "model", "label", "task", "length"),
    *("unit", "rt"),
)


class JudgementRow(BaseModel):
    """One judge's H/M label for one response (or one conversation side, cut to `length`)."""

    model_config = ConfigDict(extra="allow", frozen=True, str_strip_whitespace=True)

    judge: str = Field(min_length=1)
    judge_type: Literal["human", "ai"]
    item: str = Field(min_length=1)
    source: Source
    model: str | None = None  # the machine that wrote the response; empty for human responses
    label: Label
    task: str | None = None
    length: int | None = Field(default=None, ge=1)  # exchanges shown (conversations)
    # The independent unit the response belongs to (stimulus or conversation): intervals
    # resample units, never rows. Empty: the item, less a conversation side's ":A"/":B" (or
    # a live session's "/A"); a study folder fills it from its responses (`with_units`).
    unit: str | None = None
    rt: float | None = Field(default=None, ge=0)  # the judge's response time, seconds

    @model_validator(mode="after")
    def _model_matches_source(self) -> JudgementRow:
        if self.source == "machine" and not self.model:
            raise ValueError("a machine response needs its model")
        if self.source == "human" and self.model:
            raise ValueError("model must be empty for a human response")
        return self

    @property
    def demographics(self) -> dict[str, str]:
        return {k: str(v) for k, v in (self.model_extra or {}).items()}

    @property
    def cluster(self) -> str:
        return self.unit or re.sub(r"[:/][AB]$", "", self.item)

    @property
    def correct(self) -> bool:
        return (self.label == "H") == (self.source == "human")


def with_units(rows: Sequence[JudgementRow], units: dict[str, str]) -> list[JudgementRow]:
    """Rows without a unit get the one `units` gives their item (a response's stimulus or
    conversation), so judgements of responses to one stimulus are resampled together."""
    return [
        r.model_copy(update={"unit": units[r.item]}) if not r.unit and r.item in units else r
        for r in rows
    ]


def load_judgements(path: Path) -> list[JudgementRow]:
    rows = read_rows(path, JudgementRow)
    if not rows:
        raise ValueError(f"{path}: no judgements")
    return rows


def save_judgements(path: Path, rows: Sequence[JudgementRow]) -> None:
    write_rows(path, rows, JUDGEMENT_COLUMNS)


def judgements_csv(rows: Sequence[JudgementRow]) -> str:
    return csv_text(rows, JUDGEMENT_COLUMNS)
