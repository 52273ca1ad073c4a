"""GTT trials against a server we did not write: llama-cpp-python's own OpenAI-compatible
server (`python -m llama_cpp.server`) serving the embedded SmolLM2 model."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator

import pytest

from turinglab.agents.local_gguf import resolve_model_path
from turinglab.config import parse_config
from turinglab.runner.execute import run_experiment
from turinglab.store.database import Store

pytestmark = [pytest.mark.slow, pytest.mark.server]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = free_port()
    # The server logs a lot; a file, not a pipe nobody drains (a full pipe would stall it).
    log_path = tmp_path_factory.mktemp("llama") / "server.log"
    log = log_path.open("w")
    model = resolve_model_path("smollm2")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(model),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--n_ctx",
            "4096",
            # one thread: llama.cpp's spinning pool costs many times the CPU on shared cores
            "--n_threads",
            "1",
            "--n_threads_batch",
            "1",
            "--model_alias",
            "smollm2-135m",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    base_url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"llama_cpp.server exited:\n{log_path.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(f"{base_url}/models", timeout=2) as resp:
                if resp.status == 200:
                    break
        except OSError:
            time.sleep(0.5)
    else:
        proc.kill()
        pytest.fail("llama_cpp.server did not come up within 120 s")
    yield base_url
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
    log.close()


async def test_gtt_against_llama_cpp_server(llama_server: str, tmp_path) -> None:
    config = parse_config(
        {
            "name": "llama-server-gtt",
            "agents": {
                # Two agents on the same server, sampled differently, so A ≠ B.
                "smol": {
                    "kind": "openai",
                    "base_url": llama_server,
                    "model": "smollm2-135m",
                    "params": {"max_tokens": 16, "temperature": 0.7, "seed": 1},
                },
                "smol-pirate": {
                    "kind": "openai",
                    "base_url": llama_server,
                    "model": "smollm2-135m",
                    "params": {"max_tokens": 16, "temperature": 1.0, "seed": 2},
                },
            },
            "experiment": {
                "game": "gtt",
                "universe": ["smol", "smol-pirate"],
                "pairs": [["smol-pirate", "smol"], ["smol", "smol"]],
                "trials_per_pair": 2,
                "max_distinguisher_turns": 2,
                "on_turn_cap": "ask-for-answer",
            },
            "runner": {"max_trials_in_flight": 2},
        }
    )
    store = Store(str(tmp_path / "llama.db"))
    summary = await run_experiment(config, store, say=lambda m: None)
    assert summary.status == "finished", store.failed_attempts(summary.run_id)
    rows = store.results(summary.run_id)
    assert len(rows) == 4
    for row in rows:
        assert row.status in {"answered", "opening-answer", "no-answer"}
        route = row.routes["distinguisher"]
        assert route["backend"] == "openai" and route["base_url"] == llama_server
        assert route["model"]  # the model id the server reported
        history = row.histories["distinguisher"]
        assert history[0]["role"] == "user" and history[1]["role"] == "assistant"
        assert all(isinstance(m["content"], str) for m in history)
    assert summary.stats.calls >= 4 * 3  # at least D1, X1, D2 (+ the final ask) per trial
    assert summary.stats.tokens_in > 0 and summary.stats.tokens_out > 0
    store.close()
