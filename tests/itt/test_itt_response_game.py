"""`game: itt-response` through the real runner: scripted agents answer word cues, refused
answers are re-sampled and recorded, the run exports as dataset rows; a killed run resumes
without duplicates; an image reaches a vision endpoint (a real local HTTP server) as an
image part, and its caption is exported beside the copied image."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from aiohttp import web

from judge_fixtures import stimuli_folder
from test_crash_resume import finished_count, start_run, wait_for_finished
from turinglab.agents.base import AgentReply, CallContext, ChatMessage, Route
from turinglab.agents.scripted import ScriptedAgent
from turinglab.config import ConfigError, load_config, parse_config
from turinglab.itt.dataset import load_dataset
from turinglab.itt.from_run import export_itt_run
from turinglab.runner.execute import run_experiment
from turinglab.store.database import Store
from turinglab.testing.fake_openai import image_parts, start_fake_server_process

CUES = ["forest", "garden", "river"]


def words_config(agents: dict[str, Any], **experiment: Any) -> dict[str, Any]:
    return {
        "name": "words",
        "agents": agents,
        "experiment": {
            "game": "itt-response",
            "task": "word-association",
            "responders": sorted(agents),
            "cues": CUES,
            **experiment,
        },
    }


async def exported(store: Store, run_id: str, out: Path) -> list[Any]:
    run = store.find_run(run_id)
    assert run is not None
    made = export_itt_run(store, run, out)
    return load_dataset(made.path)


async def test_word_run_stores_post_processed_answers_and_refusals(tmp_path: Path) -> None:
    config = parse_config(
        words_config(
            {
                "plural": {"kind": "scripted", "replies": ["Trees and more"]},
                "stopper": {"kind": "scripted", "replies": ["the"]},
            },
            responses_per_stimulus=2,
            max_resamples=1,
        )
    )
    store = Store(str(tmp_path / "s.db"))
    summary = await run_experiment(config, store, say=lambda _: None)
    assert summary.counters.planned == 12  # 2 agents x 3 cues x 2 answers
    results = store.results(summary.run_id, include_flagged=True)
    stopped = [r for r in results if r.seats["responder"] == "stopper"]
    assert {r.status for r in stopped} == {"flagged"}
    assert stopped[0].details["refused"] == [
        {"attempt": a, "text": "the", "rules": ["association"], "why": "choose another word: "
         "stop word"} for a in (0, 1)
    ]  # fmt: skip
    rows = await exported(store, summary.run_id, tmp_path / "ds")
    assert len(rows) == 6 and {r.agent for r in rows} == {"plural"}
    assert {r.text for r in rows} == {"tree"} and {r.stimulus for r in rows} == set(CUES)
    assert {r.model_extra["raw"] for r in rows} == {"Trees and more"}  # type: ignore[index]
    assert all(r.source == "machine" and r.task == "word-association" for r in rows)
    # The agent was asked with the worked examples, then the cue.
    history = results[0].histories["responder"]
    assert "associate with the word" in history[0]["content"]


def test_config_file_resolves_and_checks_its_stimuli(tmp_path: Path) -> None:
    folder = stimuli_folder(tmp_path / "study", cues=("ocean",))
    path = tmp_path / "words.yaml"
    config = words_config({"a": {"kind": "scripted", "replies": ["wave"]}})
    del config["experiment"]["cues"]
    config["experiment"]["stimuli"] = "study/stimuli.csv"
    path.write_text(yaml.safe_dump(config))
    with pytest.raises(ConfigError, match=r"holds \['captioning'\] stimuli"):
        load_config(path)  # the folder also has a picture: not word association
    (folder / "stimuli.csv").write_text("stimulus_id,task,stimulus\ncue-ocean,word-association,\n")
    with pytest.raises(ConfigError, match=r"stimuli.csv:2: .*needs stimulus"):
        load_config(path)
    (folder / "stimuli.csv").write_text("stimulus_id,task,stimulus\nc,word-association,ocean\n")
    loaded = load_config(path)
    assert loaded.experiment.stimuli == (folder / "stimuli.csv").resolve()  # type: ignore[union-attr]


def test_embedded_words_config_is_valid() -> None:
    config = load_config(Path(__file__).parents[2] / "configs" / "itt-words.yaml")
    assert config.experiment.game == "itt-response"
    assert set(config.used_agents()) == {"smollm2", "gemma3-base"}


def check_once(db: Path, planned: int) -> None:
    with sqlite3.connect(db) as conn:
        trials = conn.execute("SELECT count(*) FROM trials").fetchone()[0]
        outcomes = conn.execute("SELECT count(*) FROM outcomes").fetchone()[0]
        distinct = conn.execute("SELECT count(DISTINCT trial_id) FROM outcomes").fetchone()[0]
    assert trials == outcomes == distinct == planned


@pytest.mark.slow
@pytest.mark.server
def test_killed_run_resumes_without_duplicates(tmp_path: Path) -> None:
    # Five-letter cues: the fake's "Question N: ..." post-processes to "question", which
    # overlaps none of them by more than 60%.
    cues = [
        "apple", "bread", "candy", "daisy", "eagle", "fairy", "grape", "honey", "ivory", "jelly",
        "koala", "lemon", "mango", "nylon", "olive", "panda", "radar", "salad", "tiger", "umbra",
        "vapor", "whale", "xylem", "yacht", "zebra", "amber", "blaze", "cabin", "delta", "ember",
    ]  # fmt: skip
    with start_fake_server_process(latency_s=0.1) as server:
        agent = {"kind": "openai", "base_url": server.base_url, "model": "fake"}
        config = words_config({"a": agent, "b": agent}, cues=cues)
        config["runner"] = {"max_trials_in_flight": 4}
        config["store"] = str(tmp_path / "crash.db")
        path = tmp_path / "crash.yaml"
        path.write_text(yaml.safe_dump(config))
        proc = start_run(path)
        wait_for_finished(tmp_path / "crash.db", at_least=8)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        survivors = finished_count(tmp_path / "crash.db")
        assert 8 <= survivors < 60
        rerun = subprocess.run(
            [sys.executable, "-m", "turinglab", "run", str(path), "--no-progress"],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert rerun.returncode == 0, rerun.stderr
        assert f"{survivors}/60 trials already finished" in rerun.stdout
    check_once(tmp_path / "crash.db", 60)
    out = tmp_path / "ds"
    export = subprocess.run(
        [sys.executable, "-m", "turinglab", "export", "words", "--format", "itt",
         "--out", str(out), "--store", str(tmp_path / "crash.db")],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert export.returncode == 0, export.stderr
    assert "60 machine responses from 60 answers" in " ".join(export.stdout.split())
    rows = load_dataset(out / "responses.csv")
    assert len({r.item for r in rows}) == 60  # the fake says "Question N: ..." -> "question"
    assert {r.text for r in rows} == {"question"}


@pytest.fixture
async def vision_server() -> AsyncIterator[tuple[str, list[list[tuple[str, int]]]]]:
    """A chat-completions server that looks at the image parts it gets: its first reply breaks
    a captioning rule (it says "image"), later ones describe the bytes it received."""
    seen: list[list[tuple[str, int]]] = []

    async def chat(request: web.Request) -> web.Response:
        body = await request.json()
        parts = image_parts(body["messages"])  # raises on anything but text or data URLs
        seen.append(parts)
        if len(seen) == 1:
            text = "An image of something"
        else:
            kind, size = parts[0]
            text = f"A flat green field of {size} bytes seen as {kind.split('/')[1]} data"
        message = {"role": "assistant", "content": text}
        return web.json_response({"choices": [{"message": message, "finish_reason": "stop"}]})

    app = web.Application()
    app.router.add_post("/v1/chat/completions", chat)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    yield f"http://127.0.0.1:{runner.addresses[0][1]}/v1", seen
    await runner.cleanup()


async def test_image_reaches_a_vision_agent_and_its_caption_is_exported(
    tmp_path: Path, vision_server: tuple[str, list[list[tuple[str, int]]]]
) -> None:
    base_url, seen = vision_server
    folder = stimuli_folder(tmp_path / "study", cues=())
    png = (folder / "images" / "green.png").read_bytes()
    config = parse_config(
        {
            "name": "captions",
            "agents": {"viewer": {"kind": "openai", "base_url": base_url, "model": "v"}},
            "experiment": {
                "game": "itt-response",
                "task": "captioning",
                "responders": ["viewer"],
                "stimuli": str(folder / "stimuli.csv"),
            },
        }
    )
    store = Store(str(tmp_path / "s.db"))
    summary = await run_experiment(config, store, say=lambda _: None)
    assert seen == [[("image/png", len(png))]] * 2  # asked again after the refused caption
    (result,) = store.results(summary.run_id)
    assert result.details["refused"][0]["rules"] == ["min-words", "mentions-medium"]
    out = tmp_path / "ds"
    (row,) = await exported(store, summary.run_id, out)
    assert row.text == f"A flat green field of {len(png)} bytes seen as png data"
    assert row.task == "captioning" and str(row.stimulus_file) == "images/green.png"
    assert (out / "images" / "green.png").read_bytes() == png  # a self-contained study folder


class Blind(ScriptedAgent):
    """A text-only agent (no `sees_images`)."""


class Seeing(ScriptedAgent):
    sees_images = True

    async def reply(self, history: list[ChatMessage], ctx: CallContext) -> AgentReply:
        assert history[-1].images, "the picture was not attached"
        return AgentReply("Two children fly a kite on a hill", Route("scripted", self.name))


async def test_captioning_needs_agents_that_see_images(tmp_path: Path) -> None:
    folder = stimuli_folder(tmp_path / "study", cues=())
    config = parse_config(
        {
            "name": "captions",
            "agents": {n: {"kind": "scripted", "replies": ["x"]} for n in ("blind", "seeing")},
            "experiment": {
                "game": "itt-response",
                "task": "captioning",
                "responders": ["blind", "seeing"],
                "stimuli": str(folder),
            },
            "runner": {"max_attempts": 1},
        }
    )
    store = Store(str(tmp_path / "s.db"))
    agents = {"blind": Blind("blind", ["x"]), "seeing": Seeing("seeing", [])}
    summary = await run_experiment(config, store, say=lambda _: None, agents=agents)
    assert summary.status == "finished-with-failures"
    (done,) = store.results(summary.run_id)
    assert done.seats["responder"] == "seeing"
    with sqlite3.connect(tmp_path / "s.db") as conn:
        (error,) = conn.execute("SELECT error_message FROM games WHERE status='failed'").fetchone()
    assert "agent 'blind' cannot see images" in error


@pytest.mark.slow
def test_demo_words_plays_the_game_with_the_embedded_models(tmp_path: Path) -> None:
    out = tmp_path / "words.csv"
    made = subprocess.run(
        [sys.executable, "-m", "turinglab", "itt", "demo-words", str(out), "--cues",
         "river,doctor"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    report = json.loads(made.stdout)
    rows = load_dataset(out)
    assert report["kept"] == len(rows) and report["kept"] + len(report["dropped"]) == 4
    assert {r.agent for r in rows} <= {"smollm2", "gemma3-base"}
    assert all(r.text.isalpha() and r.text == r.text.lower() for r in rows)  # post-processed
