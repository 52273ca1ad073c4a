"""AI witness prompts: persona parts, per-game values, local times, the typing delay."""

from __future__ import annotations

import random
from collections import Counter
from datetime import datetime
from zoneinfo import ZoneInfo

from turinglab.agents.base import ChatMessage
from turinglab.games.clock import SIMULATED_EPOCH
from turinglab.games.typing_delay import TypingDelay
from turinglab.games.witness import WitnessPrompt, availability, cities, names, sample_facts


def test_facts_are_seeded_weighted_and_include_english() -> None:
    assert sample_facts(7, SIMULATED_EPOCH) == sample_facts(7, SIMULATED_EPOCH)
    drawn = [sample_facts(seed, SIMULATED_EPOCH) for seed in range(2000)]
    assert all(f.languages[0] == "English" and len(f.languages) >= 2 for f in drawn)
    assert {f.name for f in drawn} <= set(names())
    counts = Counter(f.city for f in drawn)
    # New York (weight 12) is drawn far more often than Anchorage (weight 1).
    assert counts["New York"] > 4 * counts["Anchorage"]
    for f in drawn[:50]:
        city = next(c for c in cities() if c.city == f.city)
        top = max(city.languages, key=city.languages.__getitem__)
        assert top in f.languages  # the most common other language is always spoken


def test_availability_shape() -> None:
    assert availability(10) == 0.7 and availability(3) == 0.1 and availability(20) == 0.4


def test_prompt_parts_and_local_times() -> None:
    facts = sample_facts(3, SIMULATED_EPOCH)
    persona = WitnessPrompt("persona", facts, time_limit_s=300, max_chars=300)
    text = persona.text(SIMULATED_EPOCH, SIMULATED_EPOCH + 75)
    local = datetime.fromtimestamp(SIMULATED_EPOCH + 75, ZoneInfo(facts.tz))
    assert f"Current time: {local:%Y-%m-%d %H:%M:%S}" in text
    assert "Time remaining: 3:45" in text and f"Name: {facts.name}" in text
    assert "19" in text and "$" not in text  # persona part, every placeholder filled
    bare = WitnessPrompt("no-persona", facts, time_limit_s=300, max_chars=300).text(0, 0)
    assert "19" not in bare.split("Rules of the game")[0] and "Turing test" in bare
    assert WitnessPrompt("none", facts, 300, 300).text(0, 0) == ""
    two = WitnessPrompt("no-persona", facts, 300, 300, three_party=False).text(0, 0)
    assert "one Witness" in two
    view = [ChatMessage("user", "hi"), ChatMessage("assistant", "yo")]
    merged = persona.history(view, 0, 0)
    assert merged[0].content.endswith("\n\nhi") and merged[1:] == view[1:]


def test_typing_delay_follows_the_formula() -> None:
    delay = TypingDelay()
    rng = random.Random(1)
    draws = [delay.seconds(20, 100, rng) for _ in range(4000)]
    mean = sum(draws) / len(draws)
    # E = 1 + 0.3·20 + 0.03·100 + 2.5·0.25 = 10.625
    assert abs(mean - 10.625) < 0.1 and min(draws) >= 1.0
    assert TypingDelay().seconds(5, 5, random.Random(9)) == TypingDelay().seconds(
        5, 5, random.Random(9)
    )
