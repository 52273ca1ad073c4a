"""Three-party games with scripted people on a simulated clock, scripted and failing AIs."""

from __future__ import annotations

import time
from pathlib import Path

import pandas as pd
import pytest
from pydantic import ValidationError

from games_helpers import CONTEXT, Failing, Recording, Silent, play_with_people, table_for
from turinglab.agents.eliza import ElizaAgent
from turinglab.agents.errors import FatalError
from turinglab.agents.human import HumanAgent, HumanInput, say
from turinglab.agents.scripted import ScriptedAgent
from turinglab.games.clock import SimulatedClock
from turinglab.games.events import EventLog, GameFlagged, InputRefused, Revealed
from turinglab.games.spec import FINISHED, FLAGGED
from turinglab.games.study_rows import study_rows
from turinglab.games.three_party import ThreePartyExperiment, ThreePartyGame
from turinglab.human.schema import load_study


def make_game(**overrides: object) -> ThreePartyGame:
    cfg = {
        "game": "three-party",
        "interrogators": ["judge"],
        "ai_witnesses": [{"agent": "bot", "persona": "persona"}],
        "human_witnesses": ["person"],
        **overrides,
    }
    return ThreePartyGame(ThreePartyExperiment.model_validate(cfg), CONTEXT)


def verdict(human: str, confidence: object = 80, reason: str = "typos") -> HumanInput:
    return HumanInput("verdict", data={"human": human, "confidence": confidence, "reason": reason})


def people_game(bot: object | None = None, **overrides: object):  # type: ignore[no-untyped-def]
    game = make_game(**overrides)
    spec = game.plan()[0]
    judge, person = HumanAgent("judge", "p1"), HumanAgent("person", "p2")
    agents = {
        "judge": judge,
        "person": person,
        "bot": bot or Recording(ScriptedAgent("bot", ["hey", "nm u", "lol ok"])),
    }
    human = spec.params["human_seat"]
    ai = "witness_b" if human == "witness_a" else "witness_a"
    return game, spec, agents, human, ai


async def test_plan_records_sides_and_witness_values() -> None:
    game = make_game(n=6)
    specs = game.plan()
    assert {s.params["human_seat"] for s in specs} == {"witness_a", "witness_b"}
    for s in specs:
        ai_seat = next(k for k, w in s.params["witnesses"].items() if not w["human"])
        assert s.seats[ai_seat] == "bot" and s.params["witnesses"][ai_seat]["name"] == "BOT-PERSONA"
        facts = s.params["witnesses"][ai_seat]["facts"]
        assert facts["languages"][0] == "English" and facts["tz"].count("/") >= 1
    assert [s.seed for s in specs] == [s.seed for s in make_game(n=6).plan()]
    assert len({s.seed for s in specs}) == 6


def test_config_errors_name_the_problem() -> None:
    with pytest.raises(ValidationError, match="human_witnesses"):
        ThreePartyExperiment.model_validate(
            {"game": "three-party", "interrogators": ["j"], "ai_witnesses": ["bot"]}
        )
    with pytest.raises(ValidationError, match="extra"):
        ThreePartyExperiment.model_validate(
            {
                "game": "three-party",
                "interrogators": ["j"],
                "ai_witnesses": ["b"],
                "human_witnesses": ["h"],
                "time_limit": 3,
            }
        )


async def test_channel_privacy_and_reveal() -> None:
    game, spec, agents, human, ai = people_game()
    log = EventLog()
    scripts = {
        "judge": [
            (3, say("hi who are you", ai)),
            (5, say("SECRET-FOR-HUMAN where do you live", human)),
            (40, say("SECRET-FOR-AI what did you eat", ai)),
            (70, verdict(human)),
        ],
        "person": [(20, say("hey im in ohio", human)), (60, say("PERSON-TEXT pizza", human))],
    }
    result, table = await play_with_people(game, spec, agents, scripts, observer=log)
    assert result.status == FINISHED and result.correct is True
    (judgement,) = result.judgements
    assert judgement.verdict == human and judgement.confidence == 80 and judgement.reason == "typos"
    # The person (a witness) saw only its own channel, never the AI's conversation.
    messages = log.messages_to(human)
    assert messages and all(m.channel == human for m in messages)
    assert not any("SECRET-FOR-AI" in m.text or m.text in ("hey", "nm u") for m in messages)
    # The AI witness's every view lacks the other channel.
    bot = agents["bot"]
    assert isinstance(bot, Recording) and bot.histories
    for history in bot.histories:
        text = " ".join(m.content for m in history)
        assert "SECRET-FOR-HUMAN" not in text and "PERSON-TEXT" not in text and "ohio" not in text
    for m in table.messages:
        if m.channel in ("witness_a", "witness_b"):
            assert set(m.visible_to) == {"interrogator", m.channel}
    # The interrogator saw both channels; after the verdict everyone learns who was who.
    assert {m.channel for m in log.messages_to("interrogator")} == {human, ai}
    for seat in ("interrogator", human):
        (reveal,) = log.seen_by(seat, Revealed)
        assert reveal.side(human).human is True and reveal.side(ai).human is False


async def test_300_character_rule_refuses_without_truncating() -> None:
    game, spec, agents, human, ai = people_game()
    log = EventLog()
    long_text = "x" * 301
    scripts = {
        "judge": [(1, say(long_text, ai)), (2, say("y" * 300, human)), (50, verdict(ai))],
        "person": [(10, say("z" * 400, human)), (12, say("ok fine", human))],
    }
    result, table = await play_with_people(game, spec, agents, scripts, observer=log)
    refused = log.seen_by("interrogator", InputRefused)
    assert refused[0].reason == "the message has 301 characters; the limit is 300"
    assert "400 characters" in log.seen_by(human, InputRefused)[0].reason
    texts = [m.text for m in table.messages]
    assert long_text not in texts and "z" * 400 not in texts and "z" * 300 not in texts
    assert "y" * 300 in texts and "ok fine" in texts
    assert result.details["refusals"] == 2 and result.correct is False


async def test_turns_alternate_on_each_channel() -> None:
    game, spec, agents, human, _ai = people_game()
    log = EventLog()
    scripts = {
        "judge": [(1, say("first", human)), (2, say("again", human)), (30, verdict(human))],
        "person": [
            (0.5, say("me first", human)),
            (10, say("answer", human)),
            (11, say("more", human)),
        ],
    }
    _result, table = await play_with_people(game, spec, agents, scripts, observer=log)
    sent = [(m.sender, m.text) for m in table.messages if m.channel == human]
    assert sent == [("interrogator", "first"), (human, "answer")]
    assert "wait for the witness" in log.seen_by("interrogator", InputRefused)[0].reason
    reasons = [e.reason for e in log.seen_by(human, InputRefused)]
    assert len(reasons) == 2 and all("wait for the interrogator" in r for r in reasons)


async def test_time_limit_on_the_simulated_clock_runs_fast() -> None:
    game, spec, agents, human, ai = people_game(time_limit_s=300)
    log = EventLog()
    scripts = {
        "judge": [
            (3, say("hi", ai)),
            (299, say("last words", human)),
            (301, say("too late", human)),
            (330, verdict(human, 55)),
        ],
        "person": [(320, say("after the end", human))],
    }
    real = time.perf_counter()
    result, table = await play_with_people(game, spec, agents, scripts, observer=log)
    assert time.perf_counter() - real < 2.0
    assert result.details["end_reason"] == "time" and result.details["duration_s"] == 300
    texts = [m.text for m in table.messages]
    assert "last words" in texts and "too late" not in texts and "after the end" not in texts
    assert "the game is over" in log.seen_by("interrogator", InputRefused)[0].reason
    assert result.judgements[0].created_at == pytest.approx(table.clock.now())
    assert table.clock.now() - result.details["started_at"] == pytest.approx(330)


async def test_interrogator_may_end_early_and_verdict_times_out() -> None:
    game, spec, agents, _human, ai = people_game(verdict_timeout_s=60)
    scripts = {"judge": [(3, say("hi", ai)), (40, HumanInput("end"))]}
    result, _ = await play_with_people(game, spec, agents, scripts)
    assert result.details["end_reason"] == "interrogator-ended"
    assert result.details["duration_s"] == 40
    assert result.status == "no-verdict" and result.judgements == []


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        (verdict("witness_c"), "choose the human witness"),
        (verdict("A", 150), "outside 0–100"),
        (verdict("A", "sure"), "not a number"),
        (verdict("A", None), "give a confidence"),
    ],
)
async def test_verdict_is_validated(bad: HumanInput, reason: str) -> None:
    game, spec, agents, human, _ai = people_game()
    log = EventLog()
    label = spec.params["witnesses"][human]["label"]
    scripts = {"judge": [(5, bad), (6, verdict(label, 100))]}
    result, _ = await play_with_people(game, spec, agents, scripts, observer=log)
    assert reason in log.seen_by("interrogator", InputRefused)[0].reason
    assert result.judgements[0].verdict == human and result.judgements[0].confidence == 100


@pytest.mark.parametrize("bot", [Failing("bot"), Silent("bot")])
async def test_failing_ai_witness_flags_the_live_game(bot: object) -> None:
    game, spec, agents, human, ai = people_game(bot=bot, message_deadline_s=20)
    log = EventLog()
    scripts = {"judge": [(3, say("hi", ai)), (200, verdict(human))]}
    result, table = await play_with_people(game, spec, agents, scripts, observer=log)
    assert result.status == FLAGGED and result.judgements == [] and result.correct is None
    assert result.flags and ai in result.flags[0]
    if isinstance(bot, Silent):
        assert "20 s deadline" in result.flags[0] and bot.cancelled
        assert result.details["duration_s"] == 23
    for seat in ("interrogator", human):
        (flagged,) = log.seen_by(seat, GameFlagged)
        assert "stopped" in flagged.reason
    assert "hi" in [m.text for m in table.messages]


async def test_batch_game_errors_propagate_for_the_runner_to_retry() -> None:
    game = make_game()
    spec = game.plan()[0]
    agents = {
        "judge": ScriptedAgent("judge", ["A: hi", "B: hi"]),
        "person": ScriptedAgent("person", ["hello"]),
        "bot": Failing("bot"),
    }
    table = table_for(game, spec, agents, SimulatedClock())
    with pytest.raises(FatalError):
        await game.play(table, spec)


async def test_ai_interrogator_with_stand_in_and_eliza_batch(tmp_path: Path) -> None:
    game = make_game(
        ai_witnesses=[{"agent": "eliza", "persona": "none"}],
        stand_ins=["person"],
        human_witnesses=["person"],
        max_interrogator_messages=4,
    )
    spec = game.plan()[0]
    judge = Recording(
        ScriptedAgent(
            "judge",
            [
                "A: hey, how is your day",
                "B: hi there",
                "to witness a: what do you do?",
                "nonsense without address",
                "B: cool",
                "A",
                "Confidence: 70\nReason: B felt natural",
            ],
        )
    )
    person = Recording(ScriptedAgent("person", ["good thanks", "im a nurse", "yeah"]))
    agents = {"judge": judge, "person": person, "eliza": ElizaAgent("eliza")}
    table = table_for(game, spec, agents, SimulatedClock())
    result = await game.play(table, spec)
    human = spec.params["human_seat"]
    assert table.seats[human].kind == "stand-in" and table.seats["interrogator"].kind == "agent"
    assert result.status == FINISHED and result.details["end_reason"] == "message-limit"
    assert result.judgements[0].verdict == "witness_a"
    assert result.judgements[0].confidence == 70
    assert result.judgements[0].reason == "B felt natural"
    assert result.correct is (human == "witness_a")
    assert "human volunteer" in person.histories[0][0].content  # the stand-in's instructions
    counts = result.details["message_counts"]
    assert counts["witness_a"]["interrogator"] == 2 and counts["witness_b"]["interrogator"] == 2
    assert result.details["refusals"] == 1  # the unaddressed line was refused, not guessed
    # Round trip through the study loader.
    kinds = {k: s.kind for k, s in table.seats.items()}
    rows = study_rows([game.study_game(spec, result, seat_kinds=kinds, messages=table.messages)])
    path = tmp_path / "study.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    study = load_study(path)
    assert len(study) == 2 and set(study["witness"]) == {"human", "ELIZA"}
    assert list(study["format"]) == ["three-party"] * 2
    assert study.loc[study["witness"] == "human", "witness_kind"].item() == "stand-in"
    judged = dict(zip(study["witness"], study["judged_human"], strict=True))
    assert judged["human"] == (human == "witness_a")


async def test_unparseable_ai_verdict_is_an_outcome_not_a_guess() -> None:
    game = make_game(max_interrogator_messages=1)
    spec = game.plan()[0]
    agents = {
        "judge": ScriptedAgent("judge", ["A: hi", "I cannot tell", "x"]),
        "person": ScriptedAgent("person", ["hello"]),
        "bot": ScriptedAgent("bot", ["yo"]),
    }
    table = table_for(game, spec, agents, SimulatedClock())
    result = await game.play(table, spec)
    assert result.status == "unparseable-verdict" and result.judgements == []
    # Listed among the study's exclusions, with why: never a row to analyse.
    seen = game.study_game(spec, result, seat_kinds={}, messages=table.messages)
    assert study_rows([seen]) == [
        {"game": spec.key, "excluded_reason": "no verdict (unparseable-verdict)"}
    ]


async def test_over_long_ai_reply_is_asked_again_then_flags() -> None:
    game = make_game(max_interrogator_messages=1)
    spec = game.plan()[0]
    human = spec.params["human_seat"]
    ai = "witness_b" if human == "witness_a" else "witness_a"
    label = spec.params["witnesses"][ai]["label"]
    bot = Recording(ScriptedAgent("bot", ["w" * 301, "short"]))
    agents = {
        "judge": ScriptedAgent("judge", [f"{label}: hi", "A", "Confidence: 5"]),
        "person": ScriptedAgent("person", ["hello"]),
        "bot": bot,
    }
    table = table_for(game, spec, agents, SimulatedClock())
    result = await game.play(table, spec)
    assert result.status == FINISHED and result.details["end_reason"] == "message-limit"
    assert "short" in [m.text for m in table.messages]  # the answer owed arrived first
    assert "301 characters" in bot.histories[1][-1].content
    assert "w" * 301 not in [m.text for m in table.messages]

    bot2 = ScriptedAgent("bot", ["w" * 301])
    agents["bot"] = bot2
    table = table_for(game, spec, agents, SimulatedClock())
    result = await game.play(table, spec)
    assert result.status == FLAGGED and "300-character limit" in result.flags[0]


async def test_typing_delay_on_the_simulated_clock() -> None:
    game, spec, agents, human, ai = people_game(typing_delay=True)
    scripts = {"judge": [(10, say("hello there", ai)), (100, verdict(human))]}
    result, table = await play_with_people(game, spec, agents, scripts)
    sent = [m for m in table.messages if m.channel == ai]
    delay = sent[1].created_at - sent[0].created_at
    # 1 s + ~0.3 s/char × 3 + ~0.03 s/char × 11 + Γ(2.5, 0.25) (mean 0.6 s)
    assert 1.5 < delay < 6
    again, _ = await play_with_people(*people_game(typing_delay=True)[:3], scripts)
    assert again.details == result.details  # seeded: the same game twice is the same game


@pytest.mark.slow
async def test_smollm2_interrogator_eliza_and_stand_in_full_game(tmp_path: Path) -> None:
    from turinglab.agents.local_gguf import LocalGGUFAgent

    game = make_game(
        ai_witnesses=[{"agent": "eliza", "persona": "none"}],
        human_witnesses=["replay"],
        stand_ins=["replay"],
        max_interrogator_messages=4,
    )
    spec = game.plan()[0]
    smollm2 = Recording(LocalGGUFAgent("smollm2", "smollm2", max_tokens=40))
    replay = ScriptedAgent("replay", ["hey whats up", "just got off work lol", "pizza probably"])
    agents = {"judge": smollm2, "replay": replay, "eliza": ElizaAgent("eliza", case="sentence")}
    table = table_for(game, spec, agents, SimulatedClock())
    result = await game.play(table, spec)
    # A real model: whatever it says, the outcome is a valid, visible status.
    assert result.status in (FINISHED, "unparseable-verdict")
    assert table.seats[spec.params["human_seat"]].kind == "stand-in"
    counts = result.details["message_counts"]
    # Every line it wrote was either sent to a witness or refused with the reason shown to it
    # (which depends on the llama.cpp build: SmolLM2 often misses the "A:"/"B:" format).
    sent = sum(c.get("interrogator", 0) for k, c in counts.items() if k != "control")
    assert sent + result.details["refusals"] >= 1
    assert result.details["end_reason"] in ("message-limit", "interrogator-ended", "time")
    if result.status == FINISHED:  # forced choice: the side is always readable
        (judgement,) = result.judgements
        assert judgement.verdict in ("witness_a", "witness_b")
        assert judgement.confidence is None or 0 <= judgement.confidence <= 100
        kinds = {k: s.kind for k, s in table.seats.items()}
        seen = game.study_game(spec, result, seat_kinds=kinds, messages=table.messages)
        pd.DataFrame(study_rows([seen])).to_csv(tmp_path / "s.csv", index=False)
        assert len(load_study(tmp_path / "s.csv")) == 2
    for m in table.messages:
        if m.channel in ("witness_a", "witness_b"):
            assert set(m.visible_to) == {"interrogator", m.channel} and len(m.text) <= 300


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("A: where are you from?", ("send", "witness_a", "where are you from?")),
        ("  to witness b - you there?", ("send", "witness_b", "you there?")),
        ("Sure!\nB: what's for lunch", ("send", "witness_b", "what's for lunch")),
        ("END", ("end", "", "")),
        ("A: <message>", ("invalid", "", "write an actual message, not a placeholder")),
        ("hello both", ("invalid", "", 'start the line with "A:" or "B:", or answer END')),
        ("", ("invalid", "", "the reply was empty")),
    ],
)
def test_ai_interrogator_moves_are_parsed_without_guessing(
    text: str, expected: tuple[str, str, str]
) -> None:
    from turinglab.games.interrogation_text import parse_action

    assert parse_action(text, {"A": "witness_a", "B": "witness_b"}) == expected
    assert parse_action("hi there", {"": "witness"}) == ("send", "witness", "hi there")


def test_confidence_and_choice_reading() -> None:
    from turinglab.games.interrogation_text import read_choice, read_confidence

    assert read_confidence("Confidence: 70\nReason: short replies") == (70.0, "short replies")
    assert read_confidence("I'm 85% sure") == (85.0, None)
    assert read_confidence("Confidence: 250") == (None, None)
    assert read_choice(" b.", ("A", "B")) == "B" and read_choice("maybe A", ("A", "B")) is None


async def test_min_messages_each_makes_an_ai_interrogator_question_both_witnesses() -> None:
    """Every game of a shipped config must survive the studies' exclusion (at least two
    messages to each witness): an AI interrogator that keeps writing to A is told to write to
    B once its messages left are just enough, and may not END before."""
    game = make_game(
        ai_witnesses=[{"agent": "eliza", "persona": "none"}],
        stand_ins=["person"],
        max_interrogator_messages=4,
        min_messages_each=2,
    )
    spec = game.plan()[0]
    judge = Recording(
        ScriptedAgent(
            "judge",
            [
                "A: hey",
                "END",  # refused: B has had nothing yet
                "A: and you?",
                "A: one more",  # refused: the last two must go to B
                "B: hi there",
                "B: where are you",
                "A",
                "Confidence: 60",
            ],
        )
    )
    agents = {
        "judge": judge,
        "person": ScriptedAgent("person", ["hi", "ok", "yes", "no"]),
        "eliza": ElizaAgent("eliza"),
    }
    table = table_for(game, spec, agents, SimulatedClock())
    result = await game.play(table, spec)
    assert result.status == FINISHED and result.details["end_reason"] == "message-limit"
    counts = result.details["message_counts"]
    assert counts["witness_a"]["interrogator"] == 2 and counts["witness_b"]["interrogator"] == 2
    assert result.details["refusals"] == 2
    told = " ".join(m.content for h in judge.histories for m in h)
    assert "write to Witness B" in told and "not yet" in told
    # Without the rule the same script ends at once.
    plain = make_game(
        ai_witnesses=[{"agent": "eliza", "persona": "none"}],
        stand_ins=["person"],
        max_interrogator_messages=4,
    )
    judge2 = ScriptedAgent("judge", ["A: hey", "END", "A", "Confidence: 60"])
    agents2 = {**agents, "judge": judge2}
    spec2 = plain.plan()[0]
    result2 = await plain.play(table_for(plain, spec2, agents2, SimulatedClock()), spec2)
    assert result2.details["end_reason"] == "interrogator-ended"


async def test_alternate_addressing_sends_each_message_to_the_witness_written_to_least() -> None:
    """A model too small to pick a witness (it writes "A:" every time): under "alternate"
    addressing the game picks, so both witnesses are questioned and the game survives the
    studies' exclusion rule."""
    game = make_game(
        ai_witnesses=[{"agent": "eliza", "persona": "none"}],
        stand_ins=["person"],
        max_interrogator_messages=4,
        min_messages_each=2,
        addressing="alternate",
    )
    spec = game.plan()[0]
    judge = Recording(
        ScriptedAgent("judge", ["A: one", "A: two", "END", "A: three", "A: four", "B", "50"])
    )
    agents = {
        "judge": judge,
        "person": ScriptedAgent("person", ["hi", "ok", "yes", "no"]),
        "eliza": ElizaAgent("eliza"),
    }
    table = table_for(game, spec, agents, SimulatedClock())
    result = await game.play(table, spec)
    assert result.status == FINISHED and result.details["end_reason"] == "message-limit"
    sent = [(m.channel, m.text) for m in table.messages if m.sender == "interrogator"]
    to_witnesses = [(c, t) for c, t in sent if c.startswith("witness")]
    assert to_witnesses == [
        ("witness_a", "one"), ("witness_b", "two"), ("witness_a", "three"), ("witness_b", "four")
    ]  # fmt: skip
    assert result.details["refusals"] == 1  # END before each witness had 2
    assert "the game sends it there" in judge.histories[0][-1].content


def test_min_messages_each_must_fit_the_message_limit() -> None:
    """Two witnesses times the minimum must fit the AI interrogator's messages, else END
    could never be allowed; the refusal names both settings."""
    import pydantic

    make_game(max_interrogator_messages=4, min_messages_each=2)
    with pytest.raises(pydantic.ValidationError, match=r"max_interrogator_messages >= 6"):
        make_game(max_interrogator_messages=5, min_messages_each=3)
