"""An AI witness's reply as the interrogator sees it: what a person would have typed, nothing
of the prompt around it.

Small chat models echo the transcript they were given: a speaker label before the reply
("Ashley: i'm here", "Witness: hi", "B: no"), the instructions' own lines ("Name: Ashley",
"Time remaining: 4:12"), or the next turn of the other side ("\\nInterrogator: and you?").
Each of those tells the interrogator a program is typing, so they are taken out here:

* a label at the start of the reply, and at the start of any later line in the witness's own
  voice (its persona's name, "Witness", "A"/"B", "Person B", "Assistant"), is dropped;
* an opening line in another speaker's voice is the question echoed: dropped;
* a later line in another speaker's voice ("Interrogator:", "Person A:", "User:") ends the
  reply: everything from there is the model writing the other side;
* a line that is one of the witness prompt's fields ("Your role: Witness", "Current time: …")
  is dropped.

A reply cut by the token limit (finish_reason "length") ends mid-word or mid-sentence, which no
person sends: it is cut back to its last sentence end, or failing one (the persona writes
without full stops) to its last whole word.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

OWN_LABELS = ("witness", "a", "b", "person b", "assistant", "ai", "me", "bot")
OTHER_LABELS = ("interrogator", "person a", "user", "human", "interviewer")
# The fields of the witness prompt (prompts/witness_helpful.txt) a model may copy out.
PROMPT_FIELDS = (
    "your role",
    "name",
    "location",
    "languages spoken",
    "game started",
    "current time",
    "time remaining",
)
_LABEL = re.compile(r"^\s*[*_]{0,2}([A-Za-z][A-Za-z .'-]{0,30}?)[*_]{0,2}\s*:[*_]{0,2}\s*")
_SENTENCE_END = re.compile(r"[.!?…]+(?=\s|$)|\n")
_TRAILING = " \t,;:-–—("


def _label(line: str) -> tuple[str, str] | None:
    """(label lower-cased, the rest) when the line opens with "Label:"."""
    found = _LABEL.match(line)
    if found is None:
        return None
    return found.group(1).strip().lower(), line[found.end() :]


def clean_reply(text: str, *, names: Iterable[str] = (), truncated: bool = False) -> str:
    """`text` without speaker labels and prompt scaffolding; cut back to a sentence (or word)
    end when `truncated`. `names` are the witness's own names (its persona's first name)."""
    own = {*OWN_LABELS, *(n.strip().lower() for n in names if n.strip())}
    lines = text.strip().split("\n")
    kept: list[str] = []
    for i, line in enumerate(lines):
        found = _label(line)
        if found is not None:
            label, rest = found
            if label in PROMPT_FIELDS and label not in own:
                continue
            if label in own:
                line = rest
            elif label in OTHER_LABELS and i == 0:
                if len(lines) > 1:
                    continue  # the question echoed before the answer
                line = rest
            elif label in OTHER_LABELS:
                break  # the model went on to write the other side's turn
        kept.append(line.rstrip())
    cleaned = "\n".join(kept).strip()
    if truncated:
        cleaned = cut_to_an_end(cleaned)
    return cleaned or text.strip()


def cut_to_an_end(text: str) -> str:
    """A reply the token limit cut off, back to its last sentence end, or else its last whole
    word (a person never sends half a word); unchanged when it has neither."""
    text = text.rstrip()
    ends = [m.end() for m in _SENTENCE_END.finditer(text)]
    if ends and ends[-1] >= len(text):
        return text  # it happened to stop at an end already
    if ends:
        return text[: ends[-1]].rstrip()
    space = text.rfind(" ")
    if space <= 0:
        return text
    return text[:space].rstrip(_TRAILING)
