"""Small ITT study folders for the judging tests: conversations with topics (control
questions), and image tasks (captions with true/false controls, scanpaths)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

XSS = "<script>window.__pwned = 1</script><img src=x onerror=window.__pwned=2>"
ADMIN_PASSWORD = "judge-admin-pw"
COLUMNS = ["item", "task", "stimulus_id", "stimulus", "source", "agent", "text",
           "conversation", "turn", "speaker", "topic"]  # fmt: skip

# (conversation, topic, speaker A (source, agent), speaker B (source, agent))
CONVERSATIONS = [
    ("c1", "music", ("human", "p1"), ("human", "p2")),
    ("c2", "sports", ("machine", "smollm2"), ("machine", "gemma3-base")),
    ("c3", "books", ("human", "p3"), ("machine", "smollm2")),
    ("c4", "science", ("human", "p4"), ("machine", "gemma3-base")),
]


def conversation_study(folder: Path, messages: int = 6) -> Path:
    """4 conversations, 8 sides: 4 human, 4 machine. c4 opens with a script tag."""
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "responses.csv").open("w", newline="") as fh:
        out = csv.DictWriter(fh, COLUMNS)
        out.writeheader()
        for cid, topic, a, b in CONVERSATIONS:
            for turn in range(messages):
                speaker = "AB"[turn % 2]
                source, agent = a if speaker == "A" else b
                text = XSS if (cid, turn) == ("c4", 0) else f"{cid} {topic} message {turn}"
                out.writerow({
                    "item": f"{cid}-{turn}", "task": "conversation", "stimulus_id": cid,
                    "stimulus": topic, "source": source, "agent": agent, "text": text,
                    "conversation": cid, "turn": turn, "speaker": speaker, "topic": topic,
                })  # fmt: skip
    (folder / "study.json").write_text(json.dumps({"kind": "test"}))
    return folder


def _png(path: Path, size: tuple[int, int], colour: str) -> None:
    from PIL import Image

    Image.new("RGB", size, colour).save(path)


def image_study(folder: Path) -> Path:
    """Captions (with true/false controls) and scanpaths over two images."""
    (folder / "images").mkdir(parents=True, exist_ok=True)
    _png(folder / "images" / "red.png", (320, 200), "red")
    _png(folder / "images" / "blue.png", (200, 200), "blue")
    rows = []
    for i, (img, colour) in enumerate([("red.png", "red"), ("blue.png", "blue")]):
        captions = {"human": f"a plain {colour} square", "machine": f"{colour} block on white"}
        for source, agent in [("human", f"p{i}"), ("machine", "captioner")]:
            rows.append({
                "item": f"cap-{i}-{source}", "task": "captioning", "stimulus_id": f"img{i}",
                "stimulus_file": f"images/{img}", "source": source, "agent": agent,
                "text": captions[source],
                "control_question": f"The image was mostly {colour}.", "control_answer": "true",
            })  # fmt: skip
            rows.append({
                "item": f"att-{i}-{source}", "task": "attention", "stimulus_id": f"img{i}",
                "stimulus_file": f"images/{img}", "source": source, "agent": agent,
                "fixations": json.dumps([[20, 20], [100, 80], [150, 150]]),
                "control_question": f"The image was mostly {colour}.", "control_answer": "true",
            })  # fmt: skip
    with (folder / "responses.jsonl").open("w") as fh:
        for r in rows:
            fh.write(json.dumps(r) + "\n")
    # The study folder holds responses.csv; write it through the dataset's own writer path.
    from turinglab.itt.dataset import load_dataset, save_dataset

    save_dataset(folder / "responses.csv", load_dataset(folder / "responses.jsonl"))
    (folder / "responses.jsonl").unlink()
    return folder


def stimuli_folder(folder: Path, cues: tuple[str, ...] = ("ocean",)) -> Path:
    """A stimuli folder for the response games and the /respond page: one picture to caption
    (images/green.png) and word-association cues, in stimuli.csv."""
    (folder / "images").mkdir(parents=True, exist_ok=True)
    _png(folder / "images" / "green.png", (240, 160), "green")
    with (folder / "stimuli.csv").open("w", newline="") as fh:
        out = csv.writer(fh)
        out.writerow(["stimulus_id", "task", "stimulus", "stimulus_file"])
        out.writerow(["img-green", "captioning", "", "images/green.png"])
        for cue in cues:
            out.writerow([f"cue-{cue}", "word-association", cue, ""])
    return folder
