"""LLM judges (parsing, errors are data), text statistics, ANOVA, BLEU and CIDEr."""

from __future__ import annotations

import pytest

from turinglab.agents.openai_compat import OpenAIChatAgent
from turinglab.agents.scripted import ScriptedAgent
from turinglab.itt.dataset import Conversation, Response
from turinglab.itt.judgements import JudgementRow
from turinglab.itt.llm_judges import judge_conversations, parse_answer
from turinglab.testing.fake_openai import FakeOpenAIServer


def conv(cid: str, a: str, b: str) -> Conversation:
    msgs = []
    for turn in range(4):
        speaker = "AB"[turn % 2]
        who = a if speaker == "A" else b
        msgs.append(
            Response(
                item=f"{cid}-{turn}",
                task="conversation",
                stimulus_id=cid,
                source=who,
                agent="p1" if who == "human" else "smollm2",
                text=f"message {turn}",
                conversation=cid,
                turn=turn,
                speaker=speaker,
            )
        )  # type: ignore[arg-type]
    return Conversation(cid, "music", tuple(msgs))


def test_parse_answer() -> None:
    assert parse_answer("A: human, B: AI") == {"A": "H", "B": "M"}
    assert parse_answer("I think A is an AI and B is a human.") == {"A": "M", "B": "H"}
    assert parse_answer("A: human") is None
    assert parse_answer("no idea") is None


async def test_zero_and_one_shot_judgements() -> None:
    judge = ScriptedAgent("judge", ["A: human, B: AI"], cycle=True)
    convs = [conv("c1", "human", "machine"), conv("c2", "machine", "machine")]
    run = await judge_conversations(judge, convs, shots=0)
    assert len(run.judgements) == 4 and not run.unparsed and not run.errors
    by_item = {j.item: j for j in run.judgements}
    assert by_item["c1:A"].source == "human" and by_item["c1:A"].label == "H"
    assert by_item["c2:B"].model == "smollm2" and by_item["c2:B"].label == "M"
    assert all(j.judge == "judge/zero-shot" and j.length == 4 for j in run.judgements)
    example = conv("ex", "human", "machine")
    one = await judge_conversations(judge, [example, *convs], shots=1, example=example)
    assert {j.item.split(":")[0] for j in one.judgements} == {"c1", "c2"}  # example not judged
    with pytest.raises(ValueError, match="needs an example"):
        await judge_conversations(judge, convs, shots=1)


async def test_unparsed_and_failed_calls_are_not_verdicts(fake_server: FakeOpenAIServer) -> None:
    agent = OpenAIChatAgent(name="fake", base_url=fake_server.base_url, model="fake")
    try:
        run = await judge_conversations(agent, [conv("c1", "human", "machine")], shots=0)
        assert run.unparsed == ["c1"] and not run.judgements  # "Question 1: ..." names no side
        fake_server.configure(faults=[{"kind": "bad_request", "status": 401}])
        failed = await judge_conversations(agent, [conv("c2", "human", "human")], shots=0)
        assert list(failed.errors) == ["c2"] and not failed.judgements
    finally:
        await agent.aclose()


def test_text_statistics_and_t_tests() -> None:
    from turinglab.itt.textstats import FEATURES, compare, text_features

    feats = text_features(["Hello, world! How are you?"])[0]
    assert set(feats) == set(FEATURES)
    assert feats["words_per_sentence"] == pytest.approx(2.5)  # 5 words, 2 sentences
    assert feats["punctuation_per_word"] == pytest.approx(3 / 5)
    assert feats["pos_intj"] > 0
    human = ["lol ok", "nah", "yeah sure thing", "omg lol", "idk tbh", "k"]
    machine = [
        "Certainly, I would be delighted to elaborate on this fascinating subject.",
        "Furthermore, the comprehensive analysis demonstrates considerable complexity.",
        "Additionally, numerous perspectives illuminate the underlying phenomenon.",
        "Consequently, thoughtful consideration reveals substantial implications.",
        "Nevertheless, extraordinary developments characterise contemporary technology.",
        "Ultimately, meaningful conversations require genuine understanding.",
    ]
    tests = {t.feature: t for t in compare(human, machine)}
    assert tests["word_length"].machine_mean > tests["word_length"].human_mean
    assert tests["word_length"].p < 0.01
    with pytest.raises(ValueError, match="at least two"):
        compare(["one"], machine)


def test_two_way_anova_over_demographics() -> None:
    from turinglab.itt.textstats import demographics_anova

    rows = []
    for j in range(16):
        gender, edu = ("f", "m")[j % 2], ("school", "degree")[(j // 2) % 2]
        right = 9 if edu == "degree" else 5  # education matters, gender does not
        for k in range(10):
            label = "H" if k < right else "M"
            rows.append(
                JudgementRow.model_validate(
                    {
                        "judge": f"j{j}",
                        "judge_type": "human",
                        "item": f"i{k}",
                        "source": "human",
                        "label": label,
                        "gender": gender,
                        "education": edu,
                    }
                )
            )
    table = {r["term"]: r for r in demographics_anova(rows, "gender", "education")}
    assert table["education"]["p"] < 0.001
    assert table["gender"]["p"] > 0.5
    with pytest.raises(ValueError, match="two-way ANOVA needs"):
        demographics_anova(rows[:10], "gender", "education")


def test_bleu_cider_and_their_correlation_with_detectability() -> None:
    from turinglab.itt.quality import bleu, cider, correlate

    refs = [["a man rides a horse on the beach", "a person riding a horse near the sea"]]
    good, bad = ["a man rides a horse on the beach"], ["the cat sleeps"]
    assert bleu(good, refs) > 90 > bleu(bad, refs)
    refs2 = [*refs, ["two dogs play in the snow", "dogs playing in snow"]]
    # CIDEr weighs n-grams by IDF over the images, so it needs more than one image
    assert cider([*good, "two dogs play in the snow"], refs2) > 1.0
    assert cider([*bad, "a red car"], refs2) < 0.1
    out = correlate(
        {
            "close": (["a man rides a horse on the beach", "two dogs play in the snow"], refs2),
            "mid": (["a man on a horse", "dogs in snow"], refs2),
            "far": (["the cat sleeps", "a red car"], refs2),
        },
        {"close": 0.55, "mid": 0.7, "far": 0.95},
    )
    assert out.spearman_bleu == pytest.approx(-1.0)
    assert out.spearman_cider == pytest.approx(-1.0)
