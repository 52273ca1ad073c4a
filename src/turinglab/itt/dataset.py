"""An ITT dataset: responses of humans and machines to the same stimuli, one row each.

A stimulus is text (a cue word, a prompt, a conversation topic), an image file, or an image plus
a target (`stimulus_file`, `target`). Conversations are responses too: one row per message, with
its `conversation`, `turn` (0-based) and `speaker` ("A" opens). Responses carry their `source`
(human|machine) and `agent` (a person's id or the model's name); `fixations` holds a scanpath as
[[x, y], ...] in image pixels for attention tasks."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from turinglab.itt.judgements import Source
from turinglab.itt.tables import RowError, read_rows, write_rows

Task = Literal[
    "captioning",
    "word-association",
    "conversation",
    "color-estimation",
    "object-detection",
    "attention",
]
RESPONSE_COLUMNS = (
    "item",
    "task",
    "stimulus_id",
    "stimulus",
    "stimulus_file",
    "target",
    "source",
    "agent",
    "text",
    "conversation",
    "turn",
    "speaker",
    "topic",
    "reference",
)


class Response(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True, str_strip_whitespace=True)

    item: str = Field(min_length=1)
    task: Task
    stimulus_id: str = Field(min_length=1)
    stimulus: str | None = None
    stimulus_file: Path | None = None
    target: str | None = None
    source: Source
    agent: str = Field(min_length=1)
    text: str = ""
    conversation: str | None = None
    turn: int | None = Field(default=None, ge=0)
    speaker: Literal["A", "B"] | None = None
    topic: str | None = None
    reference: str | None = None  # a human reference answer, for BLEU/CIDEr
    fixations: list[tuple[float, float]] | None = None

    @field_validator("fixations", mode="before")
    @classmethod
    def _fixations_from_csv(cls, value: object) -> object:
        if isinstance(value, str):  # CSV cells hold JSON text
            import json

            try:
                return json.loads(value)
            except json.JSONDecodeError:
                raise ValueError("fixations must be a JSON list of [x, y] pairs") from None
        return value

    @model_validator(mode="after")
    def _complete(self) -> Response:
        if self.task == "conversation" and (self.conversation is None or self.turn is None):
            raise ValueError("a conversation message needs conversation and turn")
        if self.task == "attention":
            if not self.fixations:
                raise ValueError("an attention response needs fixations")
        elif not self.text:
            raise ValueError("text is empty")
        return self


def load_dataset(path: Path) -> list[Response]:
    rows = read_rows(path, Response)
    seen: dict[str, int] = {}
    for number, r in enumerate(rows, start=2):
        if r.item in seen:
            raise RowError(path, number, "item", f"duplicate item id {r.item!r}")
        seen[r.item] = number
    if not rows:
        raise ValueError(f"{path}: no responses")
    return rows


def save_dataset(path: Path, rows: Sequence[Response]) -> None:
    write_rows(path, rows, RESPONSE_COLUMNS)


@dataclass(frozen=True)
class Conversation:
    id: str
    topic: str | None
    messages: tuple[Response, ...]  # in turn order

    def side(self, speaker: str) -> tuple[Source, str]:
        """(source, agent) of speaker A or B."""
        for m in self.messages:
            if m.speaker == speaker:
                return m.source, m.agent
        raise ValueError(f"conversation {self.id} has no speaker {speaker}")

    @property
    def kind(self) -> str:
        """H-H, H-M or M-M."""
        sides = sorted({"H" if m.source == "human" else "M" for m in self.messages})
        return "-".join(sides * 2 if len(sides) == 1 else sides)

    def cut(self, exchanges: int) -> list[Response]:
        return list(self.messages[:exchanges])

    def transcript(self, exchanges: int | None = None, names: tuple[str, str] = ("A", "B")) -> str:
        shown = self.messages if exchanges is None else self.messages[:exchanges]
        return "\n".join(f"{names[0] if m.speaker == 'A' else names[1]}: {m.text}" for m in shown)


def conversations(rows: Sequence[Response]) -> list[Conversation]:
    by_id: dict[str, list[Response]] = defaultdict(list)
    for r in rows:
        if r.task == "conversation" and r.conversation is not None:
            by_id[r.conversation].append(r)
    out = []
    for cid, msgs in sorted(by_id.items()):
        msgs.sort(key=lambda m: m.turn or 0)
        out.append(Conversation(cid, msgs[0].topic, tuple(msgs)))
    return out
