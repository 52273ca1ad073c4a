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
- Colour estimation: "What is the dominant color in this image?", one of the paper's 11
  colours (people picked from a drop-down list; an agent's first colour word is taken).
- Object detection: "What do you see in this image?", three single words, all distinct (the
  paper's rules: no empty answer, three distinct valid words; its spell checker is our
  letters-only rule). Agents are asked for three words separated by commas.
Colour estimation and object detection answers come from vision agents (`game: itt-response`
with an OpenAI-compatible vision model); the /respond page collects captions and words only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from turinglab.agents.base import ChatMessage
from turinglab.itt.controls import Violation, check_caption
from turinglab.itt.word_rules import echoes_instruction, postprocess_association

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

COLOURS = (
    *("red", "pink", "orange", "yellow", "purple", "green"),
    *("blue", "brown", "gray", "black", "white"),
)
COLOUR_PROMPT = (
    "What is the dominant color in this image? Choose one of: " + ", ".join(COLOURS) + "."
)
COLOUR_AGENT_SUFFIX = "\nAnswer with the color only."
_COLOUR_WORDS = {"grey": "gray", **{c: c for c in COLOURS}}
OBJECTS_PROMPT = "What do you see in this image? Name three different things, one word each."
OBJECTS_AGENT_SUFFIX = "\nAnswer with the three words only, separated by commas."
VISION_TASKS = ("color-estimation", "object-detection")


def image_prompt(task: str) -> str:
    """What an agent is asked beside the image of an image task."""
    if task == "color-estimation":
        return COLOUR_PROMPT + COLOUR_AGENT_SUFFIX
    if task == "object-detection":
        return OBJECTS_PROMPT + OBJECTS_AGENT_SUFFIX
    return CAPTION_PROMPT + CAPTION_AGENT_SUFFIX


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
    if task == "color-estimation":
        return _colour(text.lower(), first_only=False)
    if task == "object-detection":
        return _objects(text)
    raise ValueError(f"task {task!r} takes no typed answers")


def check_agent(task: str, stimulus: str | None, reply: str) -> Checked:
    """An agent's reply under the controls that apply to machines."""
    if task == "captioning":
        text = " ".join(reply.split())
        broken = check_caption(text)
        return Checked(None, broken) if broken else Checked(text)
    if task == "word-association":
        if echoes_instruction(reply, WORD_PROMPT.format(cue=stimulus or "")):
            rule = Violation("association", "choose another word: echoed the instruction")
            return Checked(None, [rule])
        first = (_WORD.findall(reply) or [""])[0]  # the first word said
        return _association(stimulus or "", first)
    if task == "color-estimation":
        return _colour(reply.lower(), first_only=True)
    if task == "object-detection":
        return _objects(reply)
    raise ValueError(f"task {task!r} takes no single answers")


def _colour(text: str, *, first_only: bool) -> Checked:
    """One of the 11 colours ("grey" is gray); an agent's first colour word is its answer."""
    words = _WORD.findall(text)
    named = [_COLOUR_WORDS[w] for w in words if w in _COLOUR_WORDS]
    if named and (first_only or (len(words) == 1 and len(named) == 1)):
        return Checked(named[0])
    rule = Violation("colour", "name one of the colours: " + ", ".join(COLOURS))
    return Checked(None, [rule])


def _objects(text: str) -> Checked:
    """Three distinct single words (letters only), stored lower-case as "a, b, c"."""
    parts = [p.strip() for p in re.split(r"[,;\n]+", text.strip().rstrip(".")) if p.strip()]
    words = [p.lower() for p in parts]
    broken = []
    if len(words) != 3:
        broken.append(Violation("three-words", "give exactly three answers"))
    if any(not re.fullmatch(r"[a-z'-]+", w) for w in words):
        broken.append(Violation("one-word", "each answer is one word, letters only"))
    if len(set(words)) != len(words):
        broken.append(Violation("distinct", "the three answers must differ"))
    return Checked(None, broken) if broken else Checked(", ".join(words))


def _association(cue: str, word: str) -> Checked:
    assoc = postprocess_association(cue, word)
    if assoc.word is None:
        why = assoc.dropped or "not usable"
        return Checked(None, [Violation("association", f"choose another word: {why}")])
    return Checked(assoc.word)
