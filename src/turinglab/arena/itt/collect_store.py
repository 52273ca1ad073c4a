"""Durable state of human response collection (`/respond`): participants, their batches and
their accepted answers, kept beside the stimuli file.

collect/participants/<id>.json  one record per participant: consent time, the order of their
                      stimuli (a recorded seed), and every accepted answer with what was typed,
                      the stored text and the seconds taken. Rewritten whole (temporary file,
                      fsync, rename) after each accepted answer, so a record on disk is always
                      a complete one: an answer is in it entirely or not at all.
responses-human.csv   every accepted answer as dataset rows (itt/dataset.py; source human, agent
                      = the anonymous participant id), rewritten the same way.

Time is measured here, not in the browser: a stimulus's clock starts when the server first
serves it to the participant, so the "more than 4 s" rule cannot be met by a page that lies.
Refused answers change nothing on disk; the participant is told every rule the answer broke.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from turinglab.agents.base import ImagePart
from turinglab.itt.controls import Violation
from turinglab.itt.dataset import Response, save_dataset
from turinglab.itt.stimuli import Stimulus, StimulusSet, load_stimuli
from turinglab.itt.tasks import (
    CAPTION_RULES,
    COLOUR_PROMPT,
    COLOURS,
    OBJECTS_PROMPT,
    WORD_PROMPT,
    check_person,
)

PARTICIPANTS = Path("collect") / "participants"
HUMAN_RESPONSES = "responses-human.csv"
SEED_STRIDE = 100_003  # batch seed = collection seed * stride + participant ordinal


class Refused(ValueError):
    """An answer that is not stored; `violations` name every rule it broke."""

    def __init__(self, message: str, violations: list[Violation] | None = None) -> None:
        super().__init__(message)
        self.violations = violations or []


@dataclass
class Participant:
    id: str
    token_sha: str
    seed: int
    order: list[str]  # stimulus ids, in the order shown
    consented_at: str
    answers: list[dict[str, Any]] = field(default_factory=list)

    @property
    def done(self) -> bool:
        return len(self.answers) >= len(self.order)

    def record(self) -> dict[str, Any]:
        return {
            "participant": self.id,
            "token_sha": self.token_sha,
            "seed": self.seed,
            "order": self.order,
            "consented_at": self.consented_at,
            "answers": self.answers,
        }


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def write_atomically(path: Path, data: bytes) -> None:
    """The file holds the old bytes or the new ones, never a mix (rename after fsync)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    with tmp.open("wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


class CollectStore:
    def __init__(
        self,
        stimuli: StimulusSet,
        *,
        batch_size: int | None = None,
        seed: int = 0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.stimuli = stimuli
        self.by_id: dict[str, Stimulus] = {s.stimulus_id: s for s in stimuli.stimuli}
        self.batch_size = min(batch_size or len(stimuli.stimuli), len(stimuli.stimuli))
        self.seed = seed
        self.clock = clock
        self.folder = stimuli.root
        self.output = self.folder / HUMAN_RESPONSES
        self.images: list[Path] = []  # media number -> image file
        self.media_numbers: dict[str, int] = {}  # stimulus id -> media number
        self.media_types: dict[Path, str] = {}
        for s in stimuli.stimuli:
            path = stimuli.image_path(s)
            if path is None:
                continue
            if path not in self.media_types:
                self.images.append(path)
                self.media_types[path] = ImagePart.from_bytes(path.read_bytes()).media_type
            self.media_numbers[s.stimulus_id] = self.images.index(path)
        self.participants: dict[str, Participant] = {}
        self._by_token: dict[str, Participant] = {}
        self._served: dict[tuple[str, int], float] = {}  # (participant, position) -> clock
        self._lock = threading.Lock()
        self._load()

    @classmethod
    def open(cls, given: Path, **kwargs: Any) -> CollectStore:
        """A stimuli file (or a folder with stimuli.csv) opened for collection."""
        return cls(load_stimuli(given), **kwargs)

    # -- records on disk --------------------------------------------------------------------
    def _load(self) -> None:
        folder = self.folder / PARTICIPANTS
        for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
            data = json.loads(path.read_text(encoding="utf-8"))
            unknown = [i for i in data["order"] if i not in self.by_id]
            if unknown:
                raise ValueError(
                    f"{path}: stimuli {unknown[:3]} are no longer in the stimuli file; collect "
                    "for changed stimuli in a new folder"
                )
            p = Participant(
                data["participant"],
                data["token_sha"],
                data["seed"],
                list(data["order"]),
                data["consented_at"],
                list(data["answers"]),
            )
            self.participants[p.id] = p
            self._by_token[p.token_sha] = p

    def _save(self, p: Participant) -> None:
        body = json.dumps(p.record(), ensure_ascii=False, indent=1).encode()
        write_atomically(self.folder / PARTICIPANTS / f"{p.id}.json", body)

    # -- what the web layer calls -------------------------------------------------------------
    def participant_for(self, token: str | None) -> Participant | None:
        return self._by_token.get(token_hash(token)) if token else None

    def register(self, token: str) -> Participant:
        with self._lock:
            sha = token_hash(token)
            if sha in self._by_token:
                return self._by_token[sha]
            ordinal = len(self.participants) + 1
            seed = self.seed * SEED_STRIDE + ordinal
            ids = [s.stimulus_id for s in self.stimuli.stimuli]
            random.Random(seed).shuffle(ids)
            p = Participant(
                f"p-{ordinal:04d}-{sha[:6]}",
                sha,
                seed,
                ids[: self.batch_size],
                datetime.now(UTC).isoformat(),
            )
            self._save(p)
            self.participants[p.id] = p
            self._by_token[sha] = p
            return p

    def current(self, p: Participant) -> dict[str, Any] | None:
        """The stimulus the participant answers now, as the page shows it; its clock starts
        the first time it is served."""
        if p.done:
            return None
        position = len(p.answers)
        self._served.setdefault((p.id, position), self.clock())
        s = self.by_id[p.order[position]]
        view: dict[str, Any] = {"position": position, "task": s.task}
        if s.task == "captioning":
            view["rules"] = list(CAPTION_RULES)
            view["image"] = f"/respond/media/{self.media_numbers[s.stimulus_id]}"
        elif s.task == "color-estimation":  # the paper's drop-down of 11 colours
            view["prompt"] = COLOUR_PROMPT
            view["choices"] = list(COLOURS)
            view["image"] = f"/respond/media/{self.media_numbers[s.stimulus_id]}"
        elif s.task == "object-detection":
            view["prompt"] = OBJECTS_PROMPT
            view["image"] = f"/respond/media/{self.media_numbers[s.stimulus_id]}"
        else:
            view["prompt"] = WORD_PROMPT.format(cue=s.stimulus)
            view["cue"] = s.stimulus
        return view

    def answer(self, p: Participant, position: int, typed: str) -> dict[str, Any]:
        """Store a valid answer, or raise Refused naming every broken rule (nothing stored)."""
        with self._lock:
            if p.done:
                raise Refused("all your answers are in already")
            if position != len(p.answers):
                raise Refused(f"answer {position} is not the current one: reload the page")
            served = self._served.get((p.id, position))
            if served is None:
                raise Refused("this stimulus was not shown yet: reload the page")
            s = self.by_id[p.order[position]]
            seconds = self.clock() - served
            previous = p.answers[-1]["typed"] if p.answers else None
            checked = check_person(s.task, s.stimulus, typed, seconds=seconds, previous=previous)
            if not checked.ok:
                raise Refused("; ".join(v.message for v in checked.violations), checked.violations)
            answer = {
                "stimulus_id": s.stimulus_id,
                "typed": typed,
                "text": checked.text,
                "seconds": round(seconds, 3),
                "at": datetime.now(UTC).isoformat(),
            }
            p.answers.append(answer)
            try:
                self._save(p)
            except OSError:
                p.answers.pop()  # not on disk, so not accepted
                raise
            self._export()
            return answer

    # -- the dataset --------------------------------------------------------------------------
    def rows(self) -> list[Response]:
        """Every accepted answer as a dataset response row."""
        out = []
        for p in self.participants.values():
            for a in p.answers:
                s = self.by_id[a["stimulus_id"]]
                out.append(
                    Response.model_validate(
                        {
                            "item": f"{p.id}-{s.stimulus_id}",
                            "task": s.task,
                            "stimulus_id": s.stimulus_id,
                            "stimulus": s.stimulus,
                            "stimulus_file": s.stimulus_file,
                            "target": s.target,
                            "source": "human",
                            "agent": p.id,
                            "text": a["text"],
                            "raw": a["typed"],  # extra columns: what was typed, and how fast
                            "seconds": a["seconds"],
                        }
                    )
                )
        return out

    def _export(self) -> None:
        tmp = self.output.with_name(".responses-human.tmp.csv")
        save_dataset(tmp, self.rows())
        os.replace(tmp, self.output)

    def csv_bytes(self) -> bytes:
        with self._lock:
            if not self.output.is_file():
                self._export()
            return self.output.read_bytes()
