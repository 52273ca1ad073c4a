"""Split a GTT distinguisher's message into question units.

A unit is a sentence that ends in '?', a numbered or bulleted item, or an imperative request
("Write…", "Explain…", "Solve…"). Statements ("I'm curious.") are not units. A fenced code block
joins the unit that leads into it ("What does this print?" or "Fix this:") or else the unit after
it, so a question about code keeps its code.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

UnitKind = Literal["question", "item", "request", "code"]

ANSWER_TAG = re.compile(r"<answer>.*?</answer>", re.IGNORECASE | re.DOTALL)
CODE_FENCE = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
LIST_MARKER = re.compile(r"^\s*(?:\d{1,2}[.)]|\(?[a-hA-H]\)|[-*•–])\s+")
# A sentence ends at . ! ? (possibly followed by quotes/brackets) before whitespace.
SENTENCE_END = re.compile(r"(?:(?<=[.!?])|(?<=[.!?][\"')\]]))\s+")
LEADING_FILLER = re.compile(
    r"^(?:(?:please|pls|ok(?:ay)?|now|next|first|second|then|also|and|so|finally|lastly|"
    r"alright|great|quick(?:ly)?|one more)\b[,:]?\s+)+",
    re.IGNORECASE,
)
_REQUEST_VERB_TEXT = """
    write explain solve calculate compute describe tell list give name translate summarize
    summarise repeat reply respond answer count spell define compose generate create provide show
    prove convert rewrite complete continue say state sort reverse find estimate imagine
    pretend recite share draft rank compare identify evaluate simplify factor derive implement
    debug fix output print type use format choose pick guess"""
REQUEST_VERBS = frozenset(_REQUEST_VERB_TEXT.split())


@dataclass(frozen=True, slots=True)
class QuestionUnit:
    text: str
    kind: UnitKind


def _is_request(sentence: str) -> bool:
    words = LEADING_FILLER.sub("", sentence.strip()).split()
    return bool(words) and words[0].lower().strip(",:;") in REQUEST_VERBS


def _segments(message: str) -> list[tuple[str, bool, bool]]:
    """(text, is_list_item, is_code) pieces of a message in order."""
    pieces: list[tuple[str, bool, bool]] = []
    pos = 0
    for fence in CODE_FENCE.finditer(message):
        pieces.extend(_prose_segments(message[pos : fence.start()]))
        pieces.append((fence.group(0).strip(), False, True))
        pos = fence.end()
    pieces.extend(_prose_segments(message[pos:]))
    return pieces


def _prose_segments(text: str) -> list[tuple[str, bool, bool]]:
    out: list[tuple[str, bool, bool]] = []
    paragraph: list[str] = []

    def flush() -> None:
        joined = " ".join(paragraph).strip()
        paragraph.clear()
        out.extend((s.strip(), False, False) for s in SENTENCE_END.split(joined) if s.strip())

    for line in text.splitlines():
        marker = LIST_MARKER.match(line)
        if marker:
            flush()
            out.append((line[marker.end() :].strip(), True, False))
        elif not line.strip():
            flush()
        elif out and out[-1][1] and not paragraph and line.startswith((" ", "\t")):
            # An indented continuation line belongs to the list item above it.
            prev = out.pop()
            out.append((f"{prev[0]} {line.strip()}", True, False))
        else:
            paragraph.append(line.strip())
    flush()
    return out


def _unit_kind(text: str, is_item: bool) -> UnitKind | None:
    bare = text.rstrip("\"')]* ")
    if is_item:
        return "item"
    if bare.endswith("?"):
        return "question"
    if _is_request(text):
        return "request"
    return None


def split_units(message: str) -> list[QuestionUnit]:
    """The question units of one message, in order; the `<answer>` tag is ignored."""
    message = ANSWER_TAG.sub(" ", message)
    pieces = _segments(message)
    kinds: list[UnitKind | None] = [
        None if is_code else _unit_kind(text, is_item) for text, is_item, is_code in pieces
    ]
    texts = [text for text, _, _ in pieces]
    for i, (_, _, is_code) in enumerate(pieces):
        if not is_code:
            continue
        prev_unit = i > 0 and kinds[i - 1] is not None and not pieces[i - 1][2]
        next_unit = i + 1 < len(pieces) and kinds[i + 1] is not None
        # "What does this print? ```…```" leads into its code; "```…``` What does it print?"
        # follows it; an unrelated request before the code ("Tell me a joke.") does neither.
        leads_in = prev_unit and texts[i - 1].rstrip().endswith((":", "?"))
        if leads_in or (prev_unit and not next_unit):
            texts[i - 1] = f"{texts[i - 1]}\n{texts[i]}"
        elif next_unit:
            texts[i + 1] = f"{texts[i]}\n{texts[i + 1]}"
        else:
            kinds[i] = "code"  # a bare code block sent to the other side is itself a probe
            continue
        texts[i] = ""
    return [
        QuestionUnit(text, kind)
        for text, kind in zip(texts, kinds, strict=True)
        if kind is not None and text
    ]
