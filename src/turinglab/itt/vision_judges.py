"""An AI judge that looks at the image: any agent that sees images (an OpenAI-compatible vision
model, `kind: openai`) is shown each image task's picture and one answer to it (a caption, a
dominant colour, three things seen) and says whether a human or a machine gave it.

The paper's AI judges for these tasks are classifiers (itt/ai_judges.py: the answer's text
embedding; for colours it added ResNet image features); this judge is the vision-model
counterpart of the conversation LLM judges (itt/llm_judges.py), useful where a lab has a
vision endpoint. Nothing here runs a vision model locally: no embedded vision model ships with
Turing Lab. Calls go through the retrying Caller; API failures are recorded as errors and
replies that name neither "human" nor "machine" as unparsed — neither becomes a verdict."""

from __future__ import annotations

import asyncio
import hashlib
import random
import re
from collections.abc import Sequence
from pathlib import Path

from turinglab.agents.base import Agent, CallContext, ChatMessage, ImagePart
from turinglab.agents.errors import AgentError
from turinglab.agents.retry import Caller, RetryPolicy
from turinglab.itt.dataset import Response
from turinglab.itt.judgements import JudgementRow
from turinglab.itt.llm_judges import LLMJudgeRun
from turinglab.itt.tasks import COLOUR_PROMPT, OBJECTS_PROMPT

QUESTIONS = {
    "captioning": "Describe the important parts of the scene in one sentence.",
    "color-estimation": COLOUR_PROMPT,
    "object-detection": OBJECTS_PROMPT,
}
PROMPT = (
    "People and machines were shown this image and asked: “{question}”\n"
    "Below is one of the answers. Was it given by a human or a machine? Reply with one "
    "word: human or machine.\n\nAnswer: {answer}"
)
CHOICES = ("human", "machine")
_VERDICT = re.compile(r"\b(human|machine|ai|computer)\b", re.IGNORECASE)


def parse_verdict(text: str) -> str | None:
    """ "H" or "M" from the first verdict word of a reply; None when there is none."""
    found = _VERDICT.search(text)
    if found is None:
        return None
    return "H" if found.group(1).lower() == "human" else "M"


def image_rows(rows: Sequence[Response]) -> list[Response]:
    """The responses this judge can see: image tasks with an image file."""
    return [r for r in rows if r.task in QUESTIONS and r.stimulus_file is not None]


def balanced(rows: Sequence[Response], limit: int, seed: int = 0) -> list[Response]:
    """At most `limit` responses, human and machine in turn (each shuffled with `seed`), so a
    small budget still scores both sources."""
    rng = random.Random(seed)
    queues = [rng.sample(q, len(q)) for q in (
        [r for r in rows if r.source == "human"], [r for r in rows if r.source == "machine"]
    )]  # fmt: skip
    chosen: list[Response] = []
    while len(chosen) < limit and any(queues):
        for q in queues:
            if q and len(chosen) < limit:
                chosen.append(q.pop())
    return sorted(chosen, key=lambda r: r.item)


async def judge_images(
    agent: Agent,
    rows: Sequence[Response],
    root: Path,
    *,
    seed: int = 0,
    concurrency: int = 2,
) -> LLMJudgeRun:
    """Ask `agent` about each image-task response (images relative to `root`); the run's
    `unparsed` and `errors` name response items."""
    if not getattr(agent, "sees_images", False):
        raise ValueError(
            f"agent {agent.name!r} cannot see images; use an OpenAI-compatible vision model "
            "(kind: openai)"
        )
    caller = Caller(RetryPolicy(retries=3), default_limit=concurrency, seed=seed)
    run = LLMJudgeRun()
    judge = f"{agent.name}/vision"
    base = root.resolve()

    async def one(row: Response) -> None:
        path = (base / str(row.stimulus_file)).resolve()
        if not path.is_relative_to(base) or not path.is_file():
            run.errors[row.item] = f"image {row.stimulus_file} not found under {root}"
            return
        image = ImagePart.from_bytes(path.read_bytes())
        prompt = PROMPT.format(question=QUESTIONS[row.task], answer=row.text)
        digest = hashlib.sha256(f"{seed}:{row.item}".encode()).digest()
        ctx = CallContext(seed=int.from_bytes(digest[:4], "big"), choices=CHOICES)
        try:
            reply = await caller(agent, [ChatMessage("user", prompt, (image,))], ctx)
        except AgentError as err:
            run.errors[row.item] = str(err)
            return
        label = parse_verdict(reply.text)
        if label is None:
            run.unparsed.append(row.item)
            return
        run.judgements.append(
            JudgementRow(
                judge=judge,
                judge_type="ai",
                item=row.item,
                source=row.source,
                model=row.agent if row.source == "machine" else None,
                label=label,  # type: ignore[arg-type]
                task=row.task,
                unit=row.stimulus_id,
            )
        )

    await asyncio.gather(*(one(r) for r in rows))
    run.judgements.sort(key=lambda j: j.item)
    return run
