"""The offline vision baseline (agent kind `vision-baseline`): `game: itt-response` on colour
estimation and object detection runs with no endpoint and no model, and what it exports says
"baseline" — the answers come from pixel statistics, not from a vision model."""

from __future__ import annotations

from pathlib import Path

import pytest

from test_itt_vision import vision_stimuli as stimuli
from turinglab.agents.base import CallContext, ChatMessage, ImagePart
from turinglab.agents.vision_baseline import VisionBaselineAgent
from turinglab.config import ConfigError, parse_config
from turinglab.itt.dataset import load_dataset
from turinglab.itt.from_run import export_itt_run
from turinglab.runner.execute import run_experiment
from turinglab.store.database import Store


async def play(tmp_path: Path, task: str, agents: dict[str, dict] | None = None) -> list:
    config = parse_config(
        {
            "name": f"baseline-{task}",
            "agents": agents or {},
            "experiment": {
                "game": "itt-response",
                "task": task,
                "responders": list(agents or {"vision-baseline": {}}),
                "stimuli": str(stimuli(tmp_path / "study", task)),
            },
        }
    )
    store = Store(str(tmp_path / "s.db"))
    summary = await run_experiment(config, store, say=lambda _: None)
    assert summary.status == "finished"
    run = store.find_run(summary.run_id)
    assert run is not None
    return load_dataset(export_itt_run(store, run, tmp_path / "ds").path)


@pytest.mark.parametrize(
    ("task", "expected"),
    [
        ("color-estimation", {"red": "red", "blue": "blue", "white": "white"}),
        # 64×48 images: wide; red and blue are dark (luma < 128), white light
        (
            "object-detection",
            {"red": "red, dark, wide", "blue": "blue, dark, wide", "white": "white, light, wide"},
        ),
    ],
)
async def test_the_embedded_baseline_answers_image_tasks_offline(
    tmp_path: Path, task: str, expected: dict[str, str]
) -> None:
    rows = await play(tmp_path, task)
    assert {str(r.stimulus_id).removeprefix("img-"): r.text for r in rows} == expected
    assert {r.source for r in rows} == {"machine"} and {r.task for r in rows} == {task}
    assert {r.agent for r in rows} == {"vision-baseline"}


async def test_object_words_from_the_config(tmp_path: Path) -> None:
    agents = {"floor": {"kind": "vision-baseline", "objects": ["Person", "tree", "car"]}}
    rows = await play(tmp_path, "object-detection", agents)
    assert {r.text for r in rows} == {"person, tree, car"}
    with pytest.raises(ConfigError, match="three different one-word answers"):
        parse_config(
            {
                "name": "x",
                "agents": {"bad": {"kind": "vision-baseline", "objects": ["a", "a", "b"]}},
                "experiment": {"game": "itt-response", "task": "object-detection",
                               "responders": ["bad"], "stimuli": "s.csv"},
            }
        )  # fmt: skip


async def test_the_route_says_baseline_and_no_image_is_not_invented() -> None:
    import io

    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (10, 40), (40, 160, 60)).save(buf, format="PNG")
    agent = VisionBaselineAgent("b")
    seen = [ChatMessage("user", "What do you see?", (ImagePart.from_bytes(buf.getvalue()),))]
    reply = await agent.reply(seen, CallContext(seed=0))
    assert reply.text == "green, dark, tall"
    assert reply.route.backend == "vision-baseline" and "baseline" in reply.route.model
    blind = await agent.reply([ChatMessage("user", "What is the dominant color?")], CallContext(0))
    assert blind.text == "I was shown no image."


async def test_itt_judge_takes_baseline_colours_and_scanpaths_together(tmp_path: Path) -> None:
    """From the run to the score offline: the baseline's colours beside people's answers and
    scanpaths in one dataset; `itt judge` trains one classifier per task (none refused)."""
    import json

    from typer.testing import CliRunner

    from turinglab.cli import app
    from turinglab.itt.dataset import Response, save_dataset

    machine = await play(tmp_path, "color-estimation")
    people = [
        Response(item=f"p-{r.stimulus_id}-{k}", task="color-estimation",
                 stimulus_id=r.stimulus_id, source="human", agent=f"person{k}", text=word)
        for r in machine for k, word in enumerate((r.text, "gray"))
    ]  # fmt: skip

    def path(i: int, shift: float) -> list[tuple[float, float]]:
        return [(10.0 * j + shift, 5.0 * i) for j in range(8)]

    scans = [
        Response(item=f"s{src}{i}", task="attention", stimulus_id=f"scene{i}", source=src,
                 agent="p" if src == "human" else "saliency",
                 fixations=path(i, 40.0 if src == "machine" else 0.0))
        for i in range(6) for src in ("human", "machine")
    ]  # fmt: skip
    data = tmp_path / "mixed.csv"
    save_dataset(data, [*machine, *people, *scans])
    out = tmp_path / "judged"
    done = CliRunner().invoke(app, ["itt", "judge", str(data), "--out", str(out), "--folds", "3"])
    assert done.exit_code == 0, done.output
    scores = json.loads(done.stdout)["scores"]
    assert scores["svm-minilm-color-estimation"]["n"] == 9  # 3 machine + 6 human answers
    assert scores["svm-scanpath"]["n"] == 12
    scored = CliRunner().invoke(app, ["itt", "score", str(out / "judgements.csv"), "--json"])
    assert scored.exit_code == 0, scored.output
    per_task = json.loads(scored.stdout)["per_task"]
    assert set(per_task) >= {"color-estimation", "attention"}
