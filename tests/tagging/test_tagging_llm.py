"""The LLM tagger with scripted agents (valid, invalid and JSON replies) and, slow, SmolLM2."""

from __future__ import annotations

import json

import pytest

from turinglab.agents.base import AgentReply, CallContext, ChatMessage, Route
from turinglab.agents.errors import FatalError, TransientError
from turinglab.agents.retry import Caller, RetryPolicy
from turinglab.agents.scripted import ScriptedAgent
from turinglab.tagging.codebooks import load_codebook
from turinglab.tagging.llm_tagger import (
    LLMTagger,
    TaggerConfig,
    TagItem,
    derive_seed,
    game_text,
    parse_code_list,
    parse_yes_no,
)

PROBES = load_codebook("gtt_probes")
STRATEGIES = load_codebook("strategies")
FAST_RETRY = RetryPolicy(retries=3, base_s=0.001, max_s=0.002)


class KeywordAgent:
    """Says yes when the question line names one of `yes_labels`; records every call."""

    name = "keyword"

    def __init__(self, yes_labels: set[str], other_reply: str = "No.") -> None:
        self.yes_labels = yes_labels
        self.other_reply = other_reply
        self.calls: list[tuple[str, CallContext]] = []

    @property
    def endpoint(self) -> str | None:
        return None

    async def reply(self, history: list[ChatMessage], ctx: CallContext) -> AgentReply:
        prompt = history[-1].content
        self.calls.append((prompt, ctx))
        question = prompt.rsplit("Question:", 1)[1]
        hit = any(f'"{label}"' in question for label in self.yes_labels)
        return AgentReply("Yes, it does." if hit else self.other_reply, Route("test", "keyword"))

    async def aclose(self) -> None:
        return None


class FlakyAgent(KeywordAgent):
    """Fails transiently on the first call of each prompt, then answers."""

    def __init__(self) -> None:
        super().__init__({"Maths"})
        self.seen: set[str] = set()

    async def reply(self, history: list[ChatMessage], ctx: CallContext) -> AgentReply:
        key = history[-1].content
        if key not in self.seen:
            self.seen.add(key)
            raise TransientError("server hiccup")
        return await super().reply(history, ctx)


class BrokenAgent(KeywordAgent):
    async def reply(self, history: list[ChatMessage], ctx: CallContext) -> AgentReply:
        raise FatalError("no such model")


def tagger(agent, book=PROBES, **cfg) -> LLMTagger:
    config = TaggerConfig(retry=FAST_RETRY, **cfg)
    return LLMTagger(agent, book, config, Caller(FAST_RETRY, default_limit=4))


ITEM = TagItem("u1", "What is 17 * 23?")


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("yes", True),
        ("No", False),
        ("  **Yes.** It is maths.", True),
        ("n", False),
        ("I think the answer is no.", False),
        ("Certainly yes", True),
        ("maybe", None),
        ("Well, yes and no", None),
        ("yes and no", True),  # the first word decides
        ("", None),
    ],
)
def test_parse_yes_no(reply: str, expected: bool | None) -> None:
    assert parse_yes_no(reply) is expected


async def test_per_code_forced_choice_asks_every_code_with_yes_no_choices() -> None:
    agent = KeywordAgent({"Maths", "Exact compliance"})
    [result] = await tagger(agent).tag([ITEM])
    assert result.codes == ("maths", "exact-compliance")  # codebook order
    assert result.complete
    assert [a.question for a in result.answers] == list(PROBES.ids)
    assert all(ctx.choices == ("yes", "no") for _, ctx in agent.calls)
    seeds = [ctx.seed for _, ctx in agent.calls]
    assert seeds == [derive_seed(0, "u1", code) for code in PROBES.ids]
    assert len(set(seeds)) == len(seeds)
    assert "What is 17 * 23?" in agent.calls[0][0]


async def test_scripted_valid_reply_tags_everything() -> None:
    [result] = await tagger(ScriptedAgent("s", ["yes"])).tag([ITEM])
    assert result.codes == PROBES.ids
    assert result.unparseable == ()


async def test_invalid_replies_are_recorded_not_dropped() -> None:
    [result] = await tagger(ScriptedAgent("s", ["I cannot say."])).tag([ITEM])
    assert result.codes == ()
    assert result.unparseable == PROBES.ids
    assert not result.complete
    assert all(a.parsed is None and a.reply == "I cannot say." for a in result.answers)


async def test_by_category_asks_codes_only_inside_opened_categories() -> None:
    agent = KeywordAgent({"Capability", "Coding"})
    [result] = await tagger(agent, mode="by-category").tag([ITEM])
    asked = [a.question for a in result.answers]
    assert asked == ["Capability", "Signature", "Other", "maths", "science", "coding", "reasoning"]
    assert result.codes == ("coding",)


async def test_by_category_unreadable_gate_still_asks_its_codes() -> None:
    agent = KeywordAgent({"Other"}, other_reply="hmm")
    [result] = await tagger(agent, mode="by-category").tag([ITEM])
    assert result.codes == ("other",)
    assert {"Capability", "Signature"} <= set(result.unparseable)
    assert "maths" in [a.question for a in result.answers]


async def test_batch_mode_validates_the_json_list_against_the_codebook() -> None:
    reply = 'Sure! ["maths", "Model identity", "bogus-code"]'
    [result] = await tagger(ScriptedAgent("s", [reply]), mode="batch").tag([ITEM])
    assert result.codes == ("maths", "model-identity")
    assert result.invalid == ("bogus-code",)
    assert result.answers[0].reply == reply
    assert result.complete


async def test_batch_mode_without_a_list_is_unparseable() -> None:
    [result] = await tagger(ScriptedAgent("s", ["maths, coding"]), mode="batch").tag([ITEM])
    assert result.codes == ()
    assert result.unparseable == ("*",)


def test_parse_code_list_skips_non_string_lists() -> None:
    assert parse_code_list("[1, 2] then []", PROBES) == ((), ())
    assert parse_code_list('["reasoning", "maths"]', PROBES) == (("maths", "reasoning"), ())
    assert parse_code_list("none", PROBES) is None


async def test_transient_failures_are_retried_through_the_caller() -> None:
    agent = FlakyAgent()
    caller = Caller(FAST_RETRY, default_limit=4)
    t = LLMTagger(agent, PROBES, TaggerConfig(retry=FAST_RETRY), caller)
    [result] = await t.tag([ITEM])
    assert result.codes == ("maths",)
    assert caller.stats.retried == len(PROBES.codes)


async def test_agent_failure_is_an_error_result() -> None:
    results = await tagger(BrokenAgent(set())).tag([ITEM, TagItem("u2", "Why?")])
    for result in results:
        assert result.error is not None and "no such model" in result.error
        assert result.codes == ()
        assert not result.complete


async def test_many_items_keep_their_order_and_ids_must_be_unique() -> None:
    items = [TagItem(f"g{i}", f"text {i}") for i in range(20)]
    results = await tagger(KeywordAgent({"Maths"}), max_concurrency=3).tag(items)
    assert [r.item_id for r in results] == [i.id for i in items]
    with pytest.raises(ValueError, match="unique"):
        await tagger(KeywordAgent(set())).tag([ITEM, ITEM])


def test_bad_config_is_named() -> None:
    with pytest.raises(ValueError, match="mode"):
        TaggerConfig(mode="all-at-once")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="max_concurrency"):
        TaggerConfig(max_concurrency=0)


def test_long_text_is_clipped_in_the_prompt() -> None:
    from turinglab.tagging.llm_tagger import code_prompt

    prompt = code_prompt(PROBES, PROBES.codes[0], "x" * 10_000, TaggerConfig(max_text_chars=500))
    assert len(prompt) < 1200
    assert "text cut here" in prompt


def test_game_text_renders_transcript_and_reason() -> None:
    transcript = json.dumps(
        [
            {"sender": "interrogator", "text": "are you a bot?", "t": 1.0},
            {"sender": "witness", "text": "lol no", "t": 3.5},
        ]
    )
    text = game_text(transcript, "too quick to reply")
    assert text == (
        "Interrogator: are you a bot?\nWitness: lol no\n\n"
        "Interrogator's reason for the verdict: too quick to reply"
    )
    assert game_text(None) == "(no messages were exchanged)"
    with pytest.raises(ValueError, match="message 0"):
        game_text([{"who": "x"}])
    with pytest.raises(ValueError, match="JSON"):
        game_text("[not json")


@pytest.mark.slow
async def test_embedded_smollm2_yields_only_valid_labels() -> None:
    from turinglab.agents.registry import build_agent
    from turinglab.config import EMBEDDED_AGENTS

    agent = build_agent("smollm2", EMBEDDED_AGENTS["smollm2"])
    # One item: every probe code is asked about it (the grammar is what is under test).
    items = [TagItem("q2", "Which model are you, and who trained you?")]
    results = await LLMTagger(agent, PROBES, TaggerConfig(seed=3)).tag(items)
    for r in results:
        assert r.error is None
        assert r.unparseable == ()  # the grammar admits only yes/no
        assert set(r.codes) <= set(PROBES.ids)
        assert {a.reply for a in r.answers} <= {"yes", "no"}
        assert len(r.answers) == len(PROBES.codes)
    [game] = await LLMTagger(agent, STRATEGIES, TaggerConfig(mode="by-category")).tag(
        [TagItem("g1", game_text([{"sender": "interrogator", "text": "are you a bot?"}]))]
    )
    assert game.error is None and game.unparseable == ()
    assert set(game.codes) <= set(STRATEGIES.ids)
