"""Multi-label tagging of texts against a codebook by any agent (hosted or embedded).

Two ways to ask:
- forced choice ("per-code", "by-category"): one yes/no question per code (or per category, then
  per code of each category answered yes) with `CallContext(choices=("yes", "no"))`. Local GGUF
  models decode under a grammar that admits only those words, so even a 135M model yields valid
  labels; hosted models get the same prompt and are parsed leniently. A reply that is neither
  yes nor no is recorded as unparseable, and its code is left out of `codes`.
- "batch": one question per text asking for a JSON list of code ids, for capable hosted models.
  Ids outside the codebook are recorded in `invalid`; a reply without a JSON list is unparseable.

Every call goes through `Caller` (the project's one retry loop), with a seed derived from the
base seed, the item id and the question, so results do not depend on scheduling order.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from turinglab.agents.base import Agent, CallContext, ChatMessage
from turinglab.agents.errors import AgentError
from turinglab.agents.retry import Caller, RetryPolicy
from turinglab.tagging.codebooks import Code, Codebook

TaggerMode = Literal["per-code", "by-category", "batch"]
TAGGER_MODES: tuple[TaggerMode, ...] = ("per-code", "by-category", "batch")
YES_NO = ("yes", "no")
DEFAULT_MAX_TEXT_CHARS = 2500  # keeps one prompt inside a 2048-token local context window
TRUNCATION_MARK = "\n[… text cut here …]"


@dataclass(frozen=True, slots=True)
class TagItem:
    """One text to tag; `id` names it in results and seeds its calls."""

    id: str
    text: str


@dataclass(frozen=True, slots=True)
class TagAnswer:
    """One question put to the agent and what came back. `question` is a code id, a category
    name (by-category gate) or "*" (batch). `parsed` is None when the reply was unparseable."""

    question: str
    reply: str
    parsed: bool | tuple[str, ...] | None


@dataclass(frozen=True, slots=True)
class TagResult:
    item_id: str
    codes: tuple[str, ...]  # in codebook order
    answers: tuple[TagAnswer, ...] = ()
    unparseable: tuple[str, ...] = ()  # questions whose reply could not be read
    invalid: tuple[str, ...] = ()  # batch mode: ids the agent named that the codebook lacks
    error: str | None = None  # the agent failed even after retries: no codes at all

    @property
    def complete(self) -> bool:
        """Every question got a readable answer."""
        return self.error is None and not self.unparseable

    def unreadable_codes(self, codebook: Codebook) -> frozenset[str]:
        """The codes this result says nothing about: all of them after an error or an
        unreadable batch reply, else those whose own question got an unreadable reply."""
        if self.error is not None or "*" in self.unparseable:
            return frozenset(codebook.ids)
        return frozenset(q for q in self.unparseable if q in codebook.ids)


@dataclass
class TaggerConfig:
    mode: TaggerMode = "per-code"
    seed: int = 0
    max_concurrency: int = 8
    max_text_chars: int = DEFAULT_MAX_TEXT_CHARS
    extra_instructions: str = ""  # appended to every prompt (e.g. a study's context)
    retry: RetryPolicy = field(default_factory=RetryPolicy)

    def __post_init__(self) -> None:
        if self.mode not in TAGGER_MODES:
            raise ValueError(f"tagger mode {self.mode!r}: expected one of {TAGGER_MODES}")
        if self.max_concurrency < 1:
            raise ValueError(f"max_concurrency must be at least 1, got {self.max_concurrency}")
        if self.max_text_chars < 100:
            raise ValueError(f"max_text_chars must be at least 100, got {self.max_text_chars}")


def derive_seed(seed: int, item_id: str, question: str) -> int:
    digest = hashlib.sha256(f"{seed}\x1f{item_id}\x1f{question}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


def clip_text(text: str, max_chars: int) -> str:
    if len(text) <= max_chars:
        return text
    return text[: max_chars - len(TRUNCATION_MARK)] + TRUNCATION_MARK


# --- prompts ---------------------------------------------------------------------------------


def _frame(codebook: Codebook, text: str, cfg: TaggerConfig) -> str:
    extra = f"\n{cfg.extra_instructions.strip()}" if cfg.extra_instructions.strip() else ""
    body = clip_text(text, cfg.max_text_chars)
    return f"{codebook.task}{extra}\n\n--- TEXT ---\n{body}\n--- END ---\n\n"


def code_prompt(codebook: Codebook, code: Code, text: str, cfg: TaggerConfig) -> str:
    return (
        _frame(codebook, text, cfg)
        + f'Question: does "{code.label}" apply? ({code.description})\n'
        + "Answer with a single word: yes or no."
    )


def category_prompt(codebook: Codebook, category: str, text: str, cfg: TaggerConfig) -> str:
    options = "; ".join(f"{c.label} ({c.description})" for c in codebook.in_category(category))
    return (
        _frame(codebook, text, cfg)
        + f'Question: does anything from the group "{category}" apply? The group covers: '
        + f"{options}.\nAnswer with a single word: yes or no."
    )


def batch_prompt(codebook: Codebook, text: str, cfg: TaggerConfig) -> str:
    lines = [f"- {c.id}: {c.label} ({c.category}): {c.description}" for c in codebook.codes]
    return (
        _frame(codebook, text, cfg)
        + "Codes:\n"
        + "\n".join(lines)
        + "\n\nList every code that applies. Reply with a JSON list of code ids and nothing "
        + 'else, for example ["'
        + codebook.codes[0].id
        + '"], or [] if none applies.'
    )


# --- parsing ---------------------------------------------------------------------------------

_WORD = re.compile(r"[a-z]+")


def parse_yes_no(reply: str) -> bool | None:
    """Lenient: the first word if it is yes/no (y/n, true/false), else a lone yes or no
    anywhere in the reply; None when it says neither or both."""
    words = _WORD.findall(reply.lower())
    if not words:
        return None
    first = words[0]
    if first in ("yes", "y", "true"):
        return True
    if first in ("no", "n", "false"):
        return False
    has_yes, has_no = "yes" in words, "no" in words
    if has_yes != has_no:
        return has_yes
    return None


_JSON_LIST = re.compile(r"\[[^\[\]]*\]", re.DOTALL)


def parse_code_list(
    reply: str, codebook: Codebook
) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """(valid ids in codebook order, unknown names) from the first JSON list of strings in the
    reply; labels are accepted case-insensitively for ids. None when no such list exists."""
    by_name: dict[str, str] = {}
    for c in codebook.codes:
        by_name[c.id.lower()] = c.id
        by_name[c.label.lower()] = c.id
    for match in _JSON_LIST.finditer(reply):
        try:
            items: Any = json.loads(match.group(0))
        except json.JSONDecodeError:
            continue
        if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
            continue
        found = {by_name[i.strip().lower()] for i in items if i.strip().lower() in by_name}
        unknown = tuple(i for i in items if i.strip().lower() not in by_name)
        return tuple(cid for cid in codebook.ids if cid in found), unknown
    return None


# --- the tagger ------------------------------------------------------------------------------


class LLMTagger:
    """Tags items with one agent; `await tagger.tag(items)` returns one TagResult per item."""

    def __init__(
        self,
        agent: Agent,
        codebook: Codebook,
        config: TaggerConfig | None = None,
        caller: Caller | None = None,
    ) -> None:
        self.agent = agent
        self.codebook = codebook
        self.config = config or TaggerConfig()
        self.caller = caller or Caller(self.config.retry, self.config.max_concurrency)

    async def _ask(self, item: TagItem, question: str, prompt: str, forced: bool) -> str:
        ctx = CallContext(
            seed=derive_seed(self.config.seed, item.id, question),
            participant="tagger",
            choices=YES_NO if forced else (),
        )
        reply = await self.caller(self.agent, [ChatMessage("user", prompt)], ctx)
        return reply.text

    async def _yes_no(self, item: TagItem, question: str, prompt: str) -> TagAnswer:
        text = await self._ask(item, question, prompt, forced=True)
        return TagAnswer(question, text, parse_yes_no(text))

    async def _forced_choice(self, item: TagItem) -> list[TagAnswer]:
        book, cfg = self.codebook, self.config
        if cfg.mode == "per-code":
            candidates = list(book.codes)
            answers: list[TagAnswer] = []
        else:
            answers = []
            candidates = []
            for cat in book.categories:
                gate = await self._yes_no(item, cat, category_prompt(book, cat, item.text, cfg))
                answers.append(gate)
                # An unreadable gate opens the category: its codes are asked, not skipped.
                if gate.parsed is not False:
                    candidates.extend(book.in_category(cat))
        for code in candidates:
            prompt = code_prompt(book, code, item.text, cfg)
            answers.append(await self._yes_no(item, code.id, prompt))
        return answers

    async def tag_one(self, item: TagItem) -> TagResult:
        book = self.codebook
        try:
            if self.config.mode == "batch":
                text = await self._ask(item, "*", batch_prompt(book, item.text, self.config), False)
                parsed = parse_code_list(text, book)
                if parsed is None:
                    return TagResult(item.id, (), (TagAnswer("*", text, None),), ("*",))
                codes, unknown = parsed
                return TagResult(item.id, codes, (TagAnswer("*", text, codes),), (), unknown)
            answers = await self._forced_choice(item)
        except AgentError as err:
            return TagResult(item.id, (), error=f"{type(err).__name__}: {err}")
        yes = {a.question for a in answers if a.parsed is True}
        return TagResult(
            item.id,
            tuple(cid for cid in book.ids if cid in yes),
            tuple(answers),
            tuple(a.question for a in answers if a.parsed is None),
        )

    async def tag(self, items: Sequence[TagItem]) -> list[TagResult]:
        ids = [i.id for i in items]
        if len(set(ids)) != len(ids):
            dupes = sorted({i for i in ids if ids.count(i) > 1})
            raise ValueError(f"tag items need unique ids; repeated: {dupes[:5]}")
        gate = asyncio.Semaphore(self.config.max_concurrency)

        async def bounded(item: TagItem) -> TagResult:
            async with gate:
                return await self.tag_one(item)

        return list(await asyncio.gather(*(bounded(i) for i in items)))


def game_text(transcript: str | Sequence[dict[str, Any]] | None, reason: str | None = None) -> str:
    """A human-judged game (rows.txt §2 `transcript`: JSON list of {sender, text, t}) and the
    interrogator's reason, as text for a tagger."""
    if isinstance(transcript, str):
        try:
            transcript = json.loads(transcript)
        except json.JSONDecodeError as err:
            raise ValueError(f"transcript is not valid JSON: {err}") from None
    lines = []
    for i, msg in enumerate(transcript or []):
        if not isinstance(msg, dict) or "sender" not in msg or "text" not in msg:
            raise ValueError(f"transcript message {i}: expected {{sender, text}}, got {msg!r}")
        who = "Interrogator" if msg["sender"] == "interrogator" else "Witness"
        lines.append(f"{who}: {msg['text']}")
    body = "\n".join(lines) if lines else "(no messages were exchanged)"
    if reason is not None:
        body += f"\n\nInterrogator's reason for the verdict: {reason.strip() or '(none given)'}"
    return body
