"""The embedded local models, really loaded and run by llama.cpp (no network, no key)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from turinglab.agents.base import CallContext, ChatMessage
from turinglab.agents.errors import FatalError
from turinglab.agents.local_gguf import (
    LocalGGUFAgent,
    load_model,
    resolve_model_path,
    transcript_prompt,
    trim_history,
)

pytestmark = pytest.mark.slow

HELLO = [ChatMessage("user", "Hi! What did you do last weekend?")]


async def test_smollm2_chat_reply_and_route() -> None:
    agent = LocalGGUFAgent("smollm2", "smollm2", max_tokens=24)
    reply = await agent.reply(HELLO, CallContext(seed=3))
    assert reply.text.strip()
    assert agent.mode == "chat"  # the GGUF carries a chat template
    assert reply.route.backend == "local" and reply.route.model.endswith(".gguf")
    assert reply.tokens_in and reply.tokens_out and 0 < reply.tokens_out <= 24
    again = await agent.reply(HELLO, CallContext(seed=3))
    assert again.text == reply.text  # same seed, same history: same reply


async def test_gemma_base_is_driven_as_a_transcript() -> None:
    agent = LocalGGUFAgent("gemma", "gemma3-base", mode="completion", max_tokens=32)
    reply = await agent.reply(HELLO, CallContext(seed=1))
    assert reply.extra["mode"] == "completion"
    # Speaker names are stop sequences: the model writes one turn, never the other side's.
    assert "Person A:" not in reply.text and "Person B:" not in reply.text


async def test_forced_choice_is_obeyed() -> None:
    agent = LocalGGUFAgent("smollm2", "smollm2", max_tokens=16)
    choices = ("<answer>0</answer>", "<answer>1</answer>")
    for seed in range(3):
        reply = await agent.reply(HELLO, CallContext(seed=seed, choices=choices))
        assert reply.text in choices


async def test_generation_does_not_block_the_event_loop() -> None:
    agent = LocalGGUFAgent("smollm2", "smollm2", max_tokens=48)
    await agent.reply(HELLO, CallContext(seed=0))  # load first
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    task = asyncio.create_task(ticker())
    start = time.perf_counter()
    await agent.reply(HELLO, CallContext(seed=1))
    elapsed = time.perf_counter() - start
    task.cancel()
    # A blocked loop would tick about once; a free one about elapsed / 10 ms times.
    assert ticks >= max(3, int(elapsed / 0.01 * 0.3))


def test_model_is_loaded_once_and_shared() -> None:
    path = resolve_model_path("smollm2")
    assert load_model(path, 2048) is load_model(path, 2048)


def test_unknown_model_is_a_clear_error() -> None:
    with pytest.raises(FatalError, match="not an embedded model"):
        resolve_model_path("/no/such/model.gguf")


def test_transcript_prompt_and_trimming() -> None:
    history = [
        ChatMessage("user", "rules"),
        ChatMessage("assistant", "a" * 50),
        ChatMessage("user", "b" * 50),
    ]
    prompt = transcript_prompt(history)
    assert prompt.endswith("Person B:") and "Person A: rules" in prompt
    trimmed = trim_history(history * 10, budget_chars=130)
    assert trimmed[0].content == "rules" and trimmed[-1] == history[-1]
    assert sum(len(m.content) for m in trimmed) <= 130 + 50


def test_gemma_is_assembled_once_by_processes_starting_together(tmp_path: Path) -> None:
    """On a fresh machine Gemma's file is joined from the package's chunks into ~/.cache by
    whichever process needs it first. Several starting at once (workers, test runs) each read
    the others' half-written file without the lock, and failed its checksum; a file left
    half-written by a killed process is written again."""
    env = {**os.environ, "HOME": str(tmp_path)}
    resolve = "from turinglab.agents.local_gguf import resolve_model_path as r; "
    resolve += "print(r('gemma3-base'))"
    procs = [
        subprocess.Popen([sys.executable, "-c", resolve], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
        for _ in range(3)
    ]  # fmt: skip
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0], [err[-300:] for _, err in outs]
    (path,) = {out.strip() for out, _ in outs}
    whole = Path(path).stat().st_size
    with open(path, "r+b") as half:  # a killed assembly
        half.truncate(whole // 2)
    done = subprocess.run([sys.executable, "-c", resolve], env=env, capture_output=True)
    assert done.returncode == 0, done.stderr[-300:]
    assert Path(path).stat().st_size == whole
