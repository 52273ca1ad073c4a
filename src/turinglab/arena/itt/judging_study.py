"""What a human judge is shown in an ITT study: the dataset turned into candidates for
itt/batches.py and each drawn trial turned into a view for the browser.

A view never names the source, the model, the agent or the item id (an id such as "h3" would
give the answer away); images are addressed by an opaque number, and only raster files the
dataset names, inside the study folder, can be fetched.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from turinglab.itt.batches import BatchTrial, Candidate, candidates
from turinglab.itt.dataset import Conversation, Response, conversations, load_dataset
from turinglab.itt.study import RESPONSES

IMAGE_TYPES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
}
TASK_QUESTION = {
    "captioning": "Was this caption written by a human or a machine?",
    "word-association": "Was this association made by a human or a machine?",
    "color-estimation": "Was this colour estimate made by a human or a machine?",
    "object-detection": "Was this answer given by a human or a machine?",
    "attention": "Did a human or a machine look at the image like this?",
}


@dataclass
class JudgingStudy:
    """A study folder opened for judging: its responses indexed for drawing and showing."""

    folder: Path
    rows: list[Response]
    by_item: dict[str, Response]
    by_conversation: dict[str, Conversation]
    images: list[Path]  # media number -> file (resolved, inside the folder)

    @classmethod
    def open(cls, folder: Path) -> JudgingStudy:
        folder = folder.resolve()
        if not folder.is_dir():
            raise ValueError(f"{folder}: not an ITT study folder")
        rows = load_dataset(folder / RESPONSES)
        images: list[Path] = []
        for r in rows:
            if r.stimulus_file is None:
                continue
            path = (folder / r.stimulus_file).resolve()
            if not path.is_relative_to(folder):
                raise ValueError(f"{r.item}: stimulus_file {r.stimulus_file} is outside the study")
            if path.suffix.lower() not in IMAGE_TYPES:
                raise ValueError(f"{r.item}: stimulus_file {r.stimulus_file} is not an image")
            if not path.is_file():
                raise ValueError(f"{r.item}: stimulus_file {r.stimulus_file} does not exist")
            if path not in images:
                images.append(path)
        return cls(
            folder,
            rows,
            {r.item: r for r in rows},
            {c.id: c for c in conversations(rows)},
            images,
        )

    def candidates(self) -> list[Candidate]:
        return candidates(self.rows)

    def image(self, number: int) -> tuple[Path, str] | None:
        if not 0 <= number < len(self.images):
            return None
        path = self.images[number]
        return path, IMAGE_TYPES[path.suffix.lower()]

    def _image_url(self, r: Response) -> str | None:
        if r.stimulus_file is None:
            return None
        return f"/judge/media/{self.images.index((self.folder / r.stimulus_file).resolve())}"

    def view(self, trial: BatchTrial) -> dict[str, Any]:
        """What the browser shows for one trial (no source, model or item id)."""
        control = None
        if trial.control is not None:
            control = {"question": trial.control.question, "options": list(trial.control.options)}
        base: dict[str, Any] = {"position": trial.position, "control": control}
        if trial.task == "conversation":
            conv_id, side = trial.item.rsplit(":", 1)
            conv = self.by_conversation[conv_id]
            shown = conv.cut(trial.length or len(conv.messages))
            return base | {
                "kind": "conversation",
                "question": f"Was speaker {side} (outlined) a human or a machine?",
                "side": side,
                "messages": [{"speaker": m.speaker, "text": m.text} for m in shown],
            }
        r = self.by_item[trial.item]
        view = base | {
            "kind": "scanpath" if r.fixations else "text",
            "question": TASK_QUESTION.get(r.task, "Was this written by a human or a machine?"),
            "stimulus": r.stimulus,
            "target": r.target,
            "image": self._image_url(r),
            "text": r.text or None,
        }
        if r.fixations:
            view["fixations"] = [list(xy) for xy in r.fixations[:10]]
        return view
