"""What the benchmark's people and its AI witness say: turns of real human-human chats.

The texts are the `chitchat-dataset` package's conversations (BYU's Chit Chat Challenge,
~7,000 two-person chats): one turn is the consecutive utterances one person sent before the
other replied, joined with a space (as itt/human_sources.py reads them). A message's length is
a real turn's length, cut at the arena's 300-character limit; a simulated person's message
is that turn's own text with the benchmark's tag (message id and scheduled send time) put in
front, cut back to the same length, or padded with the turn's words when the tag is longer
than the turn, so the tag never changes the length drawn. `distribution()` states what that
gives.
"""

from __future__ import annotations

import functools
import random
import statistics

MAX_CHARS = 300  # the arena's (and the papers') per-message limit
TURNS_KEPT = 20_000  # a seeded sample of the turns: plenty for the draw, quick to load


@functools.cache
def chat_turns() -> tuple[str, ...]:
    """A seeded sample of real chat turns, each cut at MAX_CHARS (loads once per process)."""
    from turinglab.extras import require

    dataset = require("itt", "chitchat_dataset", "the arena benchmark's chat texts")
    turns: list[str] = []
    for conv in dict(dataset.Dataset()).values():
        for message in conv["messages"]:
            text = " ".join(u["text"].strip() for u in message).strip()
            if text:
                turns.append(text[:MAX_CHARS].rstrip())
    random.Random(0).shuffle(turns)
    return tuple(turns[:TURNS_KEPT])


def draw_turn(rng: random.Random) -> str:
    return rng.choice(chat_turns())


def tagged(tag: str, turn: str) -> str:
    """`turn`'s text carrying `tag` in front, as long as the turn (at least the tag)."""
    return f"{tag} {turn}"[: max(len(turn), len(tag))]


def distribution() -> dict[str, float | int]:
    """The message lengths the people draw (characters), for the benchmark's report."""
    lengths = sorted(len(t) for t in chat_turns())

    def pct(p: float) -> int:
        return lengths[min(len(lengths) - 1, int(p * len(lengths)))]

    return {
        "turns": len(lengths),
        "mean": round(statistics.fmean(lengths), 1),
        "p10": pct(0.1),
        "p50": pct(0.5),
        "p90": pct(0.9),
        "p99": pct(0.99),
        "max": lengths[-1],
        "share_at_limit": round(sum(n == MAX_CHARS for n in lengths) / len(lengths), 4),
    }
