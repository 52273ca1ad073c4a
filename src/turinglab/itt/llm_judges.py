"""Zero- and one-shot LLM judges for conversations (Zhang et al., Fig. S11): any configured agent
reads a conversation between A and B and says whether each is a human or an AI. Prompts are
our wording of the paper's. Calls go through the retrying Caller; an API failure is recorded as
an error, and a reply we cannot parse as "unparsed" — neither becomes a verdict.

The answer is asked for as one of four fixed strings, which agents that constrain decoding
(local GGUF models) are held to; others are parsed leniently."""

from __future__ import annotations

import asyncio
import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from turinglab.agents.base import Agent, CallContext, ChatMessage
from turinglab.agents.errors import AgentError
from turinglab.agents.retry import Caller, RetryPolicy
from turinglab.itt.dataset import Conversation
from turinglab.itt.judgements import JudgementRow

ZERO_SHOT = (
    "Below is a text conversation between agent A and agent B. Read it and decide, for each of "
    "A and B, whether it is a human or an AI. Answer with exactly one line of the form "
    '"A: human, B: AI" (each one either human or AI).\n\nConversation:\n{test}'
)
ONE_SHOT = (
    "Below is a text conversation between agent A and agent B. Read it and decide, for each of "
    "A and B, whether it is a human or an AI. Answer with exactly one line of the form "
    '"A: human, B: AI" (each one either human or AI). First, an example:\n\n{example}\n\n'
    "In this example, {example_answer}. Now answer for this conversation:\n\n{test}"
)
CHOICES = tuple(f"A: {a}, B: {b}" for a in ("human", "AI") for b in ("human", "AI"))
_SIDE = re.compile(r"\b([AB])\s*(?::|is|=|-)\s*(?:an?\s+)?(human|ai)\b", re.IGNORECASE)


def parse_answer(text: str) -> dict[str, str] | None:
    """{"A": "H"|"M", "B": ...} or None when the reply does not name both sides."""
    found: dict[str, str] = {}
    for side, what in _SIDE.findall(text):
        found.setdefault(side.upper(), "H" if what.lower() == "human" else "M")
    return found if set(found) == {"A", "B"} else None


def stratified(convs: Sequence[Conversation], limit: int, seed: int = 0) -> list[Conversation]:
    """At most `limit` conversations drawn across kinds (H-H, H-M, M-M) in turn, each kind
    shuffled with `seed`, so a small budget still has human and machine sides to score."""
    import random

    rng = random.Random(seed)
    by_kind: dict[str, list[Conversation]] = {}
    for c in convs:
        by_kind.setdefault(c.kind, []).append(c)
    queues = [rng.sample(v, len(v)) for _, v in sorted(by_kind.items())]
    chosen: list[Conversation] = []
    while len(chosen) < limit and any(queues):
        for q in queues:
            if q and len(chosen) < limit:
                chosen.append(q.pop())
    return sorted(chosen, key=lambda c: c.id)


def _answer_line(conv: Conversation) -> str:
    a = "human" if conv.side("A")[0] == "human" else "AI"
    b = "human" if conv.side("B")[0] == "human" else "AI"
    return f"A is {a}; B is {b}"


@dataclass
class LLMJudgeRun:
    judgements: list[JudgementRow] = field(default_factory=list)
    unparsed: list[str] = field(default_factory=list)  # conversation ids
    errors: dict[str, str] = field(default_factory=dict)  # conversation id -> error


async def judge_conversations(
    agent: Agent,
    conversations: Sequence[Conversation],
    *,
    shots: int,
    example: Conversation | None = None,
    exchanges: int | None = None,
    seed: int = 0,
    concurrency: int = 2,
) -> LLMJudgeRun:
    """Ask `agent` about each conversation (cut to `exchanges` when given)."""
    if shots not in (0, 1):
        raise ValueError("shots must be 0 or 1")
    if shots == 1 and example is None:
        raise ValueError("a one-shot judge needs an example conversation")
    caller = Caller(RetryPolicy(retries=3), default_limit=concurrency, seed=seed)
    run = LLMJudgeRun()
    judge = f"{agent.name}/{'one' if shots else 'zero'}-shot"

    async def one(conv: Conversation) -> None:
        test = conv.transcript(exchanges)
        if shots == 0:
            prompt = ZERO_SHOT.format(test=test)
        else:
            assert example is not None
            prompt = ONE_SHOT.format(
                example=example.transcript(), example_answer=_answer_line(example), test=test
            )
        digest = hashlib.sha256(f"{seed}:{conv.id}".encode()).digest()
        ctx = CallContext(seed=int.from_bytes(digest[:4], "big"), choices=CHOICES)
        try:
            reply = await caller(agent, [ChatMessage("user", prompt)], ctx)
        except AgentError as err:
            run.errors[conv.id] = str(err)
            return
        labels = parse_answer(reply.text)
        if labels is None:
            run.unparsed.append(conv.id)
            return
        shown = len(conv.messages) if exchanges is None else min(exchanges, len(conv.messages))
        for side in ("A", "B"):
            source, agent_name = conv.side(side)
            run.judgements.append(
                JudgementRow(
                    judge=judge,
                    judge_type="ai",
                    item=f"{conv.id}:{side}",
                    source=source,
                    model=agent_name if source == "machine" else None,
                    label=labels[side],  # type: ignore[arg-type]
                    task="conversation",
                    length=shown,
                    unit=conv.id,
                )
            )

    await asyncio.gather(
        *(one(c) for c in conversations if c.id != (example.id if example else None))
    )
    return run
