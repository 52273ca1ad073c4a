"""Vision agents for colour estimation and object detection: the `itt-response` game sends each
image to an OpenAI-compatible vision endpoint (the repo's fake server in its own process, a real
HTTP server) as an image_url data-URL part, checks the answer's form and exports it; the vision
judge shows a vision model each image with one answer and stores its human/machine verdict,
which `itt score` reads. No vision model runs locally: the fake server stands in for one (it
names the colour nearest each image's mean pixel)."""

from __future__ import annotations

import csv
import json
import urllib.request
from pathlib import Path

import pytest
from typer.testing import CliRunner

from turinglab.arena.itt.collect_store import CollectStore, Refused
from turinglab.cli import app
from turinglab.config import parse_config
from turinglab.itt.dataset import load_dataset
from turinglab.itt.from_run import export_itt_run
from turinglab.itt.tasks import check_agent, check_person
from turinglab.runner.execute import run_experiment
from turinglab.store.database import Store
from turinglab.testing.fake_openai import start_fake_server_process

pytestmark = pytest.mark.server

COLOURS = {"red": (210, 25, 30), "blue": (20, 50, 210), "white": (250, 250, 250)}


def vision_stimuli(folder: Path, task: str) -> Path:
    from PIL import Image

    (folder / "images").mkdir(parents=True, exist_ok=True)
    with (folder / "stimuli.csv").open("w", newline="") as fh:
        out = csv.writer(fh)
        out.writerow(["stimulus_id", "task", "stimulus", "stimulus_file"])
        for name, rgb in COLOURS.items():
            Image.new("RGB", (64, 48), rgb).save(folder / "images" / f"{name}.png")
            out.writerow([f"img-{name}", task, "", f"images/{name}.png"])
    return folder / "stimuli.csv"


def last_request(root_url: str) -> dict:
    with urllib.request.urlopen(root_url + "/_last_request", timeout=10) as r:
        return dict(json.loads(r.read()))


@pytest.mark.parametrize(
    ("task", "expected"),
    [
        ("color-estimation", {n: n for n in COLOURS}),
        ("object-detection", {n: f"{n}, square, picture" for n in COLOURS}),
    ],
)
async def test_a_vision_endpoint_answers_colour_and_object_tasks(
    tmp_path: Path, task: str, expected: dict[str, str]
) -> None:
    stimuli = vision_stimuli(tmp_path / "study", task)
    with start_fake_server_process() as fake:
        config = parse_config(
            {
                "name": f"vision-{task}",
                "agents": {"viewer": {"kind": "openai", "base_url": fake.base_url, "model": "v"}},
                "experiment": {
                    "game": "itt-response",
                    "task": task,
                    "responders": ["viewer"],
                    "stimuli": str(stimuli),
                },
            }
        )
        store = Store(str(tmp_path / "s.db"))
        summary = await run_experiment(config, store, say=lambda _: None)
        sent = last_request(fake.root_url)
    assert summary.status == "finished"
    # The image went out as an image_url part with a base64 data URL, beside the question.
    parts = sent["messages"][-1]["content"]
    assert [p["type"] for p in parts] == ["text", "image_url"]
    assert parts[1]["image_url"]["url"].startswith("data:image/png;base64,")
    question = "dominant color" if task == "color-estimation" else "What do you see"
    assert question in parts[0]["text"]

    run = store.find_run(summary.run_id)
    assert run is not None
    made = export_itt_run(store, run, tmp_path / "ds")
    rows = load_dataset(made.path)
    got = {str(r.stimulus_id).removeprefix("img-"): r.text for r in rows}
    assert got == expected
    assert {r.task for r in rows} == {task} and {r.source for r in rows} == {"machine"}
    assert all((tmp_path / "ds" / str(r.stimulus_file)).is_file() for r in rows)


def test_answers_are_checked_as_the_paper_asks() -> None:
    # colour: one of the paper's 11 colours; an agent's first colour word is its answer
    assert check_agent("color-estimation", None, "The dominant color is Grey.").text == "gray"
    assert check_agent("color-estimation", None, "turquoise").violations[0].rule == "colour"
    assert check_person("color-estimation", None, "Blue", seconds=5, previous=None).text == "blue"
    assert not check_person("color-estimation", None, "blue and red", seconds=5, previous=None).ok
    # objects: three distinct single words
    assert (
        check_agent("object-detection", None, "Dog, Frisbee, grass.").text == "dog, frisbee, grass"
    )
    rules = [v.rule for v in check_agent("object-detection", None, "dog, dog, a cat").violations]
    assert rules == ["one-word", "distinct"]
    assert [v.rule for v in check_agent("object-detection", None, "dog, cat").violations] == [
        "three-words"
    ]


def test_the_respond_page_collects_colours_and_objects_under_the_tasks_rules(
    tmp_path: Path,
) -> None:
    """People's colour answers (one of the paper's 11, from a list) and object answers (three
    distinct words), served with their image and checked on the server."""
    for task, bad, good, stored in (
        ("color-estimation", "blue and red", "Blue", "blue"),
        ("object-detection", "dog, dog", "Dog, frisbee, grass", "dog, frisbee, grass"),
    ):
        folder = tmp_path / task
        store = CollectStore.open(vision_stimuli(folder, task), seed=1, clock=lambda: 0.0)
        p = store.register("token-" + task)
        shown = store.current(p)
        assert shown is not None and shown["task"] == task
        assert shown["image"].startswith("/respond/media/")
        assert ("choices" in shown) == (task == "color-estimation")
        with pytest.raises(Refused):
            store.answer(p, 0, bad)
        assert store.answer(p, 0, good)["text"] == stored


def test_a_vision_model_judges_image_answers(tmp_path: Path) -> None:
    folder = tmp_path / "study"
    vision_stimuli(folder, "color-estimation")
    data = folder / "responses.csv"
    with data.open("w", newline="") as fh:
        out = csv.writer(fh)
        out.writerow(["item", "task", "stimulus_id", "stimulus_file", "source", "agent", "text"])
        for name in COLOURS:
            out.writerow([f"h-{name}", "color-estimation", f"img-{name}", f"images/{name}.png",
                          "human", "p1", name])  # fmt: skip
            out.writerow([f"m-{name}", "color-estimation", f"img-{name}", f"images/{name}.png",
                          "machine", "mmcq", f"{name} tone"])  # fmt: skip
    with start_fake_server_process() as fake:
        cfg = tmp_path / "judge.yaml"
        cfg.write_text(
            "name: judge\nagents:\n  seer:\n    kind: openai\n"
            f"    base_url: {fake.base_url}\n    model: v\n"
            "experiment:\n  game: itt-response\n  task: color-estimation\n"
            "  responders: [seer]\n  stimuli: study/stimuli.csv\n"
        )
        out_file = tmp_path / "vision.csv"
        args = ["itt", "vision-judge", str(data), "--agent", "seer", "--config", str(cfg)]
        done = CliRunner().invoke(app, [*args, "--out", str(out_file)])
        assert done.exit_code == 0, done.output
        sent = last_request(fake.root_url)
        again = CliRunner().invoke(app, [*args, "--out", str(out_file)])
        blind = CliRunner().invoke(
            app,
            ["itt", "vision-judge", str(data), "--agent", "eliza", "--out", str(tmp_path / "x")],
        )
    assert json.loads(done.stdout) == {"judgements": 6, "unparsed": [], "errors": {}}
    parts = sent["messages"][0]["content"]
    assert parts[1]["image_url"]["url"].startswith("data:image/png;base64,")
    assert "Was it given by a human or a machine?" in parts[0]["text"]
    # The fake's rule: an odd number of words is a machine, so humans' one word reads
    # "machine" and the machines' two words "human" — every verdict wrong, as scored below.
    with out_file.open() as fh:
        rows = list(csv.DictReader(fh))
    assert {(r["item"][0], r["label"]) for r in rows} == {("h", "M"), ("m", "H")}
    assert {r["judge"] for r in rows} == {"seer/vision"} and rows[0]["unit"] == "img-blue"
    scored = CliRunner().invoke(app, ["itt", "score", str(out_file), "--json"])
    assert scored.exit_code == 0, scored.output
    assert json.loads(scored.stdout)["overall"]["detectability"] == 0.0
    # An existing --out is never overwritten; a text-only agent is refused in one line.
    assert again.exit_code == 2 and "exists" in again.output
    assert blind.exit_code == 2 and "cannot see images" in blind.output
