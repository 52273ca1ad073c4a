"""What people and agents are asked in the one-stimulus ITT tasks, and how an answer is checked.

The paper showed machines the same instructions as people, so both the runner game
(games/itt_response.py) and the browser page (arena/collect*.py) take their wording and their
checks from here. The wording is ours; the rules are the paper's (Zhang et al., Methods):

- Captioning: describe the important parts of the scene in one sentence; controls of
  itt/controls.py (≥ 6 words, no special characters, more than 4 s, no word more than 4 times,
  no "image"/"photo", not the previous answer). Timing and repeats apply to people only.
- Word association: one word for a cue, post-processed (singular, present tense, letters only,
  no stop words or short words, not too close to the cue). People get the free-association
  question and must type one word; agents get the same question after three worked examples
  (the paper's prompt-based version, which it merged with the free one), so that chat and base
  models answer with a bare word, and their first word is taken ("limited to one word").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from turinglab.agents.base import ChatMessage
from turinglab.itt.controls import Violation, check_caption, postprocess_association

CAPTION_RULES = (
    "Describe the important parts of the scene in one sentence of at least 6 words.",
    "Leave out unimportant details, and do not guess what happened before or after.",
    'Do not begin with "There is" or "There are", and do not write "an image of" or "a photo of".',
    "Use no special characters and no proper names of people.",
)
CAPTION_PROMPT = "Look at the picture and write a caption for it.\n" + "\n".join(
    f"- {rule}" for rule in CAPTION_RULES
)
CAPTION_AGENT_SUFFIX = "\nReply with the caption only."

WORD_PROMPT = (
    "Name one word that you associate with the word '{cue}'. Answer with that one word only."
)
# The paper's prompt-based procedure: three worked examples first, so that chat and base
# models alike answer with a bare word.
WORD_EXAMPLES = (("sun", "moon"), ("cold", "ice"), ("teacher", "school"))
_WORD = re.compile(r"[A-Za-z'-]+")


def association_history(cue: str) -> list[ChatMessage]:
    history: list[ChatMessage] = []
    for example_cue, answer in WORD_EXAMPLES:
        history += [
            ChatMessage("user", WORD_PROMPT.format(cue=example_cue)),
            ChatMessage("assistant", answer),
        ]
    return [*history, ChatMessage("user", WORD_PROMPT.format(cue=cue))]


@dataclass(frozen=True)
class Checked:
    """An answer after the task's controls: `text` is what is stored (the post-processed word,
    the trimmed caption); None, with the broken rules, when it is refused."""

    text: str | None
    violations: list[Violation] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.text is not None


def check_person(
    task: str, stimulus: str | None, typed: str, *, seconds: float, previous: str | None
) -> Checked:
    """A person's answer: every rule it breaks, or the text to store."""
    text = " ".join(typed.split())
    if task == "captioning":
        broken = check_caption(text, seconds=seconds, previous=previous)
        return Checked(None, broken) if broken else Checked(text)
    if task == "word-association":
        words = _WORD.findall(text)
        if len(words) != 1 or words[0] != text:
            return Checked(None, [Violation("one-word", "type exactly one word, letters only")])
        return _association(stimulus or "", text)
    raise ValueError(f"task {task!r} takes no typed answers")


def check_agent(task: str, stimulus: str | None, reply: str) -> Checked:
    """An agent's reply under the controls that apply to machines."""
    if task == "captioning":
        text = " ".join(reply.split())
        broken = check_caption(text)
        return Checked(None, broken) if broken else Checked(text)
    if task == "word-association":
        first = (_WORD.findall(reply) or [""])[0]  # the first word said
        return _association(stimulus or "", first)
    raise ValueError(f"task {task!r} takes no single answers")


def _association(cue: str, word: str) -> Checked:
    assoc = postprocess_association(cue, word)
    if assoc.word is None:
        why = assoc.dropped or "not usable"
        return Checked(None, [Violation("association", f"choose another word: {why}")])
    return Checked(assoc.word)
