"""A seeded local conversation gives the same text whatever ran on the model in between.

Each conversation is a real multi-turn exchange with llama.cpp (the model's own replies go back
into its next prompt, as in a trial). Before the fix the same conversation, replayed after or
interleaved with other conversations, drifted after the first reply: the cached KV entries of
generated tokens differ in the last bits from a batched evaluation of the same tokens.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from turinglab.agents.base import CallContext, ChatMessage
from turinglab.agents.local_gguf import (
    PREFIX_BLOCK,
    LocalGGUFAgent,
    PrefixSnapshots,
    default_threads,
    reusable_prefix,
    usable_cores,
)
from turinglab.config import parse_config
from turinglab.runner.execute import run_experiment
from turinglab.store.database import Store

pytestmark = pytest.mark.slow

OPENERS = {
    "weekend": "Hi! What did you do last weekend? Tell me everything.",
    "cat": "Do you have any pets? I have a cat who hates Mondays.",
    "food": "What is the best thing you cooked this year, and why?",
}
FOLLOW_UPS = ("Interesting. Why?", "And what happened next?")


# Replies of at most 12 tokens, each still going back into the cache as generated (not batched)
# tokens, which is what drifted. Generated tokens are most of the cost: with 20, SmolLM2's
# scenario took 40% more CPU (Gemma's replies mostly stop sooner anyway).
REPLY_TOKENS = 12


def _agent(model: str, threads: int | None = None) -> LocalGGUFAgent:
    mode = "chat" if model == "smollm2" else "completion"
    return LocalGGUFAgent(model, model, mode=mode, max_tokens=REPLY_TOKENS, threads=threads)


async def _step(agent: LocalGGUFAgent, history: list[ChatMessage], turn: int, seed: int) -> None:
    reply = await agent.reply(history, CallContext(seed=seed * 100 + turn))
    history.append(ChatMessage("assistant", reply.text))
    if turn < len(FOLLOW_UPS):
        history.append(ChatMessage("user", FOLLOW_UPS[turn]))


async def _alone(agent: LocalGGUFAgent, topic: str, seed: int) -> list[str]:
    history = [ChatMessage("user", OPENERS[topic])]
    for turn in range(len(FOLLOW_UPS) + 1):
        await _step(agent, history, turn, seed)
    return [m.content for m in history]


async def _interleaved(agent: LocalGGUFAgent, topics: list[str], seed: int) -> dict[str, list[str]]:
    """Round-robin: one call of each conversation in turn, so every call finds another
    conversation's tokens in the cache."""
    histories = {t: [ChatMessage("user", OPENERS[t])] for t in topics}
    for turn in range(len(FOLLOW_UPS) + 1):
        for topic in topics:
            await _step(agent, histories[topic], turn, seed)
    return {t: [m.content for m in h] for t, h in histories.items()}


@pytest.mark.parametrize("model", ["smollm2", "gemma3-base"])
def test_same_conversation_same_text_in_any_call_order(model: str) -> None:
    agent = _agent(model)

    async def scenario() -> None:
        first = await _alone(agent, "weekend", seed=7)
        assert sum(len(t) for t in first[1::2]) > 0  # the model really wrote something
        await _alone(agent, "cat", seed=3)  # leaves another conversation in the cache
        again = await _alone(agent, "weekend", seed=7)
        mixed = await _interleaved(agent, ["cat", "weekend", "food"], seed=7)
        reverse = await _interleaved(agent, ["food", "weekend"], seed=7)
        assert again == first
        assert mixed["weekend"] == first
        assert reverse["weekend"] == first
        assert mixed["food"] == reverse["food"]
        # The interleaved turns were served from saved prefixes, not from a cold cache.
        assert agent._loaded is not None and agent._loaded.llama.snapshots.saved

    asyncio.run(scenario())


def test_thread_count_does_not_change_the_text() -> None:
    async def scenario() -> None:
        one = await _alone(_agent("smollm2", threads=1), "food", seed=2)
        two = await _alone(_agent("smollm2", threads=2), "food", seed=2)
        assert one == two

    asyncio.run(scenario())


def test_default_threads_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TURINGLAB_LOCAL_THREADS", "3")
    assert default_threads() == 3
    for unusable in ("0", "two", ""):  # not a positive count: every usable core
        monkeypatch.setenv("TURINGLAB_LOCAL_THREADS", unusable)
        assert default_threads() == usable_cores()


def test_reusable_prefix_leaves_a_batch_to_evaluate() -> None:
    block = list(range(PREFIX_BLOCK))
    cached = [*block, *block, 7, 7, 7]
    assert reusable_prefix(cached, [*block, *block, 7, 7, 7, 9]) == 2 * PREFIX_BLOCK
    assert reusable_prefix(cached, [*block, *block[:-1], 5, 7]) == PREFIX_BLOCK  # whole blocks
    assert reusable_prefix(cached, [*block, *block]) == PREFIX_BLOCK  # a batch stays to do
    assert reusable_prefix(cached, [*block, 1]) == 0
    assert reusable_prefix([], block) == 0


def test_saved_prefixes_keep_the_longest_and_the_most_recent() -> None:
    block = tuple(range(PREFIX_BLOCK))
    other = tuple(range(100, 100 + PREFIX_BLOCK))
    saved = PrefixSnapshots(budget=25)
    saved.put(block, b"x" * 10)
    saved.put(block * 2, b"y" * 10)  # extends the first: the first can never do better
    assert list(saved.saved) == [block * 2]
    assert saved.best([*block, *block, 5, 5]) == (block * 2, 2 * PREFIX_BLOCK)
    assert saved.best([*other, 5, 5]) == (None, 0)
    saved.put(other, b"z" * 10)
    saved.take(block * 2)  # used: now the most recent
    third = tuple(range(200, 200 + PREFIX_BLOCK))
    saved.put(third, b"w" * 10)  # over budget (30 > 25): the least recently used goes
    assert list(saved.saved) == [block * 2, third]


def _run_transcripts(db: Path, in_flight: int) -> dict[str, object]:
    config = parse_config(
        {
            "name": "reproducible-local",
            "agents": {
                "smollm2": {
                    "kind": "local",
                    "model": "smollm2",
                    "mode": "chat",
                    "max_tokens": REPLY_TOKENS,
                },
                "gemma3-base": {
                    "kind": "local",
                    "model": "gemma3-base",
                    "mode": "completion",
                    "max_tokens": REPLY_TOKENS,
                },
            },
            "experiment": {
                "game": "gtt",
                "universe": ["smollm2", "gemma3-base"],
                # Each model judging the other: both models serve both trials, interleaved.
                "pairs": [["smollm2", "gemma3-base"], ["gemma3-base", "smollm2"]],
                "trials_per_pair": 1,
                "max_distinguisher_turns": 2,
                "on_turn_cap": "ask-for-answer",
                "seed": 5,
            },
            "runner": {"max_trials_in_flight": in_flight},
        }
    )
    store = Store(str(db))
    try:
        run_id = asyncio.run(run_experiment(config, store, say=lambda _m: None)).run_id
        return {r.key: r.histories for r in store.results(run_id)}
    finally:
        store.close()


def test_a_seeded_local_run_replays_exactly_in_another_order(tmp_path: Path) -> None:
    """The same trials, one at a time and then all at once (calls interleaved differently on
    the shared models): identical transcripts, trial by trial."""
    one_by_one = _run_transcripts(tmp_path / "serial.db", in_flight=1)
    all_at_once = _run_transcripts(tmp_path / "parallel.db", in_flight=2)
    assert len(one_by_one) == 2
    assert all_at_once == one_by_one
