"""An ITT study on disk: a folder with the dataset, the judgements and what the pipeline found.

responses.csv     the dataset (human and machine responses)
judgements.csv    every H/M label the pipeline made (AI judges; imported human labels too)
judgements-human.csv  labels of the people who judged in the browser (`turinglab serve
                  --itt-study`), written by the arena; read alongside judgements.csv
study.json        provenance, timings, extrapolation, text statistics, re-samples

An `itt import` folder (judgements.csv, trials.csv, study.json: the paper's released human
judgements) has no responses.csv; it loads with no responses, its rows carrying their units.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from turinglab.itt.dataset import Response, load_dataset, save_dataset
from turinglab.itt.judgements import (
    JudgementRow,
    load_judgements,
    save_judgements,
    with_units,
)

RESPONSES = "responses.csv"
JUDGEMENTS = "judgements.csv"
HUMAN_JUDGEMENTS = "judgements-human.csv"
STUDY = "study.json"
IMPORTED_TRIALS = "trials.csv"  # written by `itt import` (psiturk.save_import)


@dataclass
class Study:
    responses: list[Response]
    judgements: list[JudgementRow]
    facts: dict[str, Any]

    def save(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        save_dataset(folder / RESPONSES, self.responses)
        save_judgements(folder / JUDGEMENTS, self.judgements)
        (folder / STUDY).write_text(json.dumps(self.facts, indent=2, default=str) + "\n")


def existing_study(folder: Path) -> str:
    """The study files `folder` already holds (comma-separated), or "" when none."""
    return ", ".join(n for n in (RESPONSES, JUDGEMENTS, STUDY) if (folder / n).exists())


def load_study(folder: Path) -> Study:
    if not folder.is_dir():
        raise ValueError(f"{folder}: not an ITT study folder")
    imported = (folder / IMPORTED_TRIALS).is_file()
    needed = (JUDGEMENTS,) if imported else (RESPONSES, JUDGEMENTS)
    missing = [n for n in needed if not (folder / n).is_file()]
    if missing:
        raise ValueError(f"{folder}: missing {', '.join(missing)}")
    facts = json.loads((folder / STUDY).read_text()) if (folder / STUDY).is_file() else {}
    judgements = load_judgements(folder / JUDGEMENTS)
    if (folder / HUMAN_JUDGEMENTS).is_file():  # browser judges: human vs AI side by side
        judgements += load_judgements(folder / HUMAN_JUDGEMENTS)
    responses = load_dataset(folder / RESPONSES) if (folder / RESPONSES).is_file() else []
    return Study(responses, with_units(judgements, response_units(responses)), facts)


def response_units(responses: list[Response]) -> dict[str, str]:
    """item → the independent unit it belongs to: its conversation, else its stimulus."""
    return {r.item: r.conversation or r.stimulus_id for r in responses}
