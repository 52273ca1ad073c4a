"""Stimuli of an ITT task: what humans and machines respond to, read from a CSV/JSONL file.

A stimuli file has the stimulus columns of the dataset (`stimulus_id`, `task`, `stimulus`,
`stimulus_file`, `target`), so a responses file serves as one too (its other columns are
ignored and each stimulus is taken once). `stimulus_file` is an image path relative to the
stimuli file's folder and may not leave it. Text tasks (word association: the cue) put their
stimulus in `stimulus`; image tasks (captioning) name a PNG or JPEG file.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from turinglab.agents.base import ImagePart
from turinglab.itt.tables import RowError, raw_rows

STIMULI_FILE = "stimuli.csv"  # the stimuli of a folder given instead of a file
IMAGE_TASKS = frozenset({"captioning", "color-estimation", "object-detection"})
TEXT_TASKS = frozenset({"word-association"})
RESPONSE_TASKS = IMAGE_TASKS | TEXT_TASKS  # the tasks people and agents answer one at a time


class Stimulus(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True, str_strip_whitespace=True)

    stimulus_id: str = Field(min_length=1)
    task: str
    stimulus: str | None = None
    stimulus_file: Path | None = None
    target: str | None = None

    @model_validator(mode="after")
    def _fits_task(self) -> Stimulus:
        if self.task not in RESPONSE_TASKS:
            raise ValueError(
                f"task {self.task!r} is not answered one stimulus at a time "
                f"(one of: {', '.join(sorted(RESPONSE_TASKS))})"
            )
        if self.task in IMAGE_TASKS and self.stimulus_file is None:
            raise ValueError(f"a {self.task} stimulus needs stimulus_file (an image)")
        if self.task in TEXT_TASKS and not self.stimulus:
            raise ValueError(f"a {self.task} stimulus needs stimulus (its text)")
        return self


@dataclass(frozen=True)
class StimulusSet:
    """Stimuli with the folder their image paths are relative to."""

    root: Path
    stimuli: tuple[Stimulus, ...]

    def image_path(self, s: Stimulus) -> Path | None:
        return None if s.stimulus_file is None else (self.root / s.stimulus_file).resolve()

    def image(self, s: Stimulus) -> ImagePart | None:
        """The stimulus image as an agent gets it (PNG/JPEG checked by its bytes)."""
        path = self.image_path(s)
        return None if path is None else ImagePart.from_bytes(path.read_bytes())


def stimuli_path(given: Path) -> Path:
    """The stimuli file itself, or `stimuli.csv` of a folder."""
    return given / STIMULI_FILE if given.is_dir() else given


def load_stimuli(given: Path) -> StimulusSet:
    """Every stimulus of a file (or folder), checked: bad rows are refused with their line and
    column, and image files must exist inside the folder and be PNG or JPEG."""
    path = stimuli_path(given)
    if not path.is_file():
        raise ValueError(f"{path}: no such stimuli file")
    root = path.parent.resolve()
    seen: dict[str, Stimulus] = {}
    for line, raw in raw_rows(path):
        try:
            s = Stimulus.model_validate(raw)
        except ValidationError as err:
            first = err.errors()[0]
            column = ".".join(str(p) for p in first["loc"]) or None
            raise RowError(path, line, column, first["msg"].removeprefix("Value error, ")) from None
        if s.stimulus_id in seen:
            if seen[s.stimulus_id] != s:
                raise RowError(path, line, "stimulus_id", f"{s.stimulus_id!r} differs above")
            continue  # a responses file repeats each stimulus once per response
        _check_image(path, line, root, s)
        seen[s.stimulus_id] = s
    if not seen:
        raise ValueError(f"{path}: no stimuli")
    return StimulusSet(root, tuple(seen.values()))


def _check_image(path: Path, line: int, root: Path, s: Stimulus) -> None:
    if s.stimulus_file is None:
        return
    full = (root / s.stimulus_file).resolve()
    if not full.is_relative_to(root):
        raise RowError(path, line, "stimulus_file", "the image must be inside the stimuli folder")
    if not full.is_file():
        raise RowError(path, line, "stimulus_file", f"no such image: {s.stimulus_file}")
    try:
        ImagePart.from_bytes(full.read_bytes())
    except ValueError as err:
        raise RowError(path, line, "stimulus_file", f"{s.stimulus_file}: {err}") from None


def text_stimuli(task: str, texts: Sequence[str]) -> StimulusSet:
    """Stimuli given inline (word-association cues in a config), ids from the text."""
    stimuli = tuple(Stimulus(stimulus_id=f"cue-{t}", task=task, stimulus=t) for t in texts)
    return StimulusSet(Path.cwd(), stimuli)
