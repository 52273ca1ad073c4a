"""What interrogators say, read and checked: an AI's next move, its verdict and confidence,
and any verdict (a person's or an AI's) validated against the game's witnesses.

Nothing here guesses: what cannot be read is reported as such (an "invalid" move with the
reason, a None choice), and the game turns it into a refusal or a visible outcome status.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from turinglab.games.spec import Judgement

INTERROGATOR = "interrogator"

_ADDRESSED = re.compile(r"^\W{0,3}(?:to\s+)?(?:witness\s+)?([ab])\s*[:>\-–—)]\s*(.*)$", re.I)
_END = re.compile(r"^\W*end\W*$", re.I)
_PLACEHOLDER = re.compile(r"^\s*(?:<[^>]*>|\.\.\.|…)?\s*$")
_CONFIDENCE = re.compile(r"confidence\W{0,3}(\d{1,3}(?:\.\d+)?)", re.I)
_PERCENT = re.compile(r"\b(\d{1,3}(?:\.\d+)?)\s*%")
_REASON = re.compile(r"reason\s*[:\-]\s*(.+)", re.I | re.S)
_LEADING_NUMBER = re.compile(r"\s*(\d{1,3}(?:\.\d+)?)\b(?!\s*[/.,]\d)")


class Refused(ValueError):
    """An input the game does not accept; the text is the reason given to the sender."""


def unaddressed(text: str) -> str:
    """The reply without the witness it names on its first line ("B: hi" -> "hi"): for a game
    that chose the witness itself."""
    lines = text.strip().splitlines()
    match = _ADDRESSED.match(lines[0].strip()) if lines else None
    if match is None:
        return text
    return "\n".join([match.group(2), *lines[1:]])


def parse_action(text: str, labels: Mapping[str, str]) -> tuple[str, str, str]:
    """An AI interrogator's move: ("send", seat, message), ("end", "", "") or
    ("invalid", "", reason). `labels` maps "A"/"B" to seats; one entry with label "" is a
    two-party game, where any line is a message to the one witness."""
    lines = [ln.strip().strip('"') for ln in text.strip().splitlines() if ln.strip()]
    if not lines:
        return ("invalid", "", "the reply was empty")
    if _END.match(lines[0]):
        return ("end", "", "")
    if "" in labels:
        line = re.sub(r"^(?:interrogator|me)\s*:\s*", "", lines[0], flags=re.I)
        if _PLACEHOLDER.match(line):
            return ("invalid", "", "write an actual message, not a placeholder")
        return ("send", labels[""], line)
    for line in lines:
        match = _ADDRESSED.match(line)
        if not match:
            continue
        if _PLACEHOLDER.match(match.group(2)):
            return ("invalid", "", "write an actual message, not a placeholder")
        seat = labels.get(match.group(1).upper())
        if seat is not None:
            return ("send", seat, match.group(2).strip().strip('"'))
    names = " or ".join(f'"{label}:"' for label in labels)
    return ("invalid", "", f"start the line with {names}, or answer END")


def validate_verdict(
    data: Mapping[str, Any],
    *,
    sides: Mapping[str, str],
    three_party: bool,
    at: float,
    confidence_required: bool = True,
) -> Judgement:
    """A verdict as the interrogator gave it, checked; raises Refused naming what is wrong.

    Three-party: data["human"] names the witness seat (or its label) judged human. Two-party:
    data["verdict"] is "human" or "ai". data["confidence"] is 0–100; data["reason"] free text.
    """
    if three_party:
        raw = str(data.get("human", "")).strip()
        by_label = {label.upper(): seat for seat, label in sides.items()}
        seat = raw if raw in sides else by_label.get(raw.upper())
        if seat is None:
            raise Refused(f"verdict: choose the human witness among {', '.join(sides)}")
        verdict = seat
    else:
        verdict = str(data.get("verdict", "")).strip().lower()
        if verdict not in ("human", "ai"):
            raise Refused('verdict: say "human" or "ai"')
    confidence = data.get("confidence")
    if confidence is None or confidence == "":
        if confidence_required:
            raise Refused("verdict: give a confidence from 0 to 100")
        value = None
    else:
        try:
            value = float(confidence)
        except (TypeError, ValueError):
            raise Refused(f"verdict: confidence {confidence!r} is not a number") from None
        if not 0 <= value <= 100:
            raise Refused(f"verdict: confidence {value:g} is outside 0–100")
    reason = str(data.get("reason") or "").strip() or None
    return Judgement(
        judge=INTERROGATOR,
        kind="verdict",
        verdict=verdict,
        confidence=value,
        reason=reason,
        created_at=at,
    )


def read_choice(text: str, choices: tuple[str, ...]) -> str | None:
    cleaned = text.strip().strip(".\"'*").lower()
    for choice in choices:
        if cleaned == choice.lower() or cleaned in (f"witness {choice.lower()}",):
            return choice
    return None


def read_confidence(text: str) -> tuple[float | None, str | None]:
    # "Confidence: 70" as asked; else the first percentage ("I'm 80% sure"); else a reply that
    # starts with a bare number ("80, the other one typed like a bot"); else unread.
    match = _CONFIDENCE.search(text) or _PERCENT.search(text) or _LEADING_NUMBER.match(text)
    confidence = float(match.group(1)) if match else None
    if confidence is not None and not 0 <= confidence <= 100:
        confidence = None  # out of range is unreadable, not clipped
    reason_match = _REASON.search(text)
    reason = reason_match.group(1).strip() if reason_match else None
    return confidence, reason
