"""Judging batches for human judges (the arena page draws one per judge) and their exclusions.

A batch is half human and half machine responses; the machine side picks a model uniformly
first and then one of its responses, so every model is judged about equally often whatever its
share of the dataset. Order is shuffled; no feedback is given. Each trial may carry a control
question (conversations: the topic, from five choices; images: a true/false question); judges
below the control threshold are excluded, and trials whose control was missed are dropped
(Zhang et al.: at least 15 of 20 topics right)."""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from turinglab.games.conversation import TOPICS
from turinglab.itt.dataset import Response, conversations
from turinglab.itt.judgements import JudgementRow, Source

CONVERSATION_LENGTHS = (3, 6, 9, 12, 15, 18, 21, 24)
CONTROL_CHOICES = 5


@dataclass(frozen=True)
class Candidate:
    """A response that may be shown: one stimulus + response, or one conversation."""

    item: str
    source: Source
    model: str | None
    task: str | None = None
    topic: str | None = None  # conversations: the control question's answer
    control_question: str | None = None  # other tasks: a true/false question and its answer
    control_answer: str | None = None
    max_length: int | None = None  # conversations: exchanges available


@dataclass(frozen=True)
class ControlQuestion:
    question: str
    options: tuple[str, ...]
    answer: str


@dataclass(frozen=True)
class BatchTrial:
    position: int
    item: str
    source: Source
    model: str | None
    task: str | None
    length: int | None
    control: ControlQuestion | None


@dataclass(frozen=True)
class Batch:
    judge: str
    seed: int
    trials: tuple[BatchTrial, ...]


def _control(c: Candidate, rng: random.Random) -> ControlQuestion | None:
    if c.topic is not None:
        others = [t for t in TOPICS if t != c.topic]
        options = [c.topic, *rng.sample(others, min(CONTROL_CHOICES - 1, len(others)))]
        rng.shuffle(options)
        return ControlQuestion("What was the conversation mainly about?", tuple(options), c.topic)
    if c.control_question and c.control_answer:
        return ControlQuestion(c.control_question, ("true", "false"), c.control_answer)
    return None


def build_batch(
    candidates: Sequence[Candidate],
    size: int,
    *,
    judge: str,
    seed: int,
    lengths: Sequence[int] = CONVERSATION_LENGTHS,
) -> Batch:
    """`size` trials (even), half human, half machine; no response shown twice to a judge."""
    if size < 2 or size % 2:
        raise ValueError("a batch needs an even number of trials (half human, half machine)")
    rng = random.Random(seed)
    humans = [c for c in candidates if c.source == "human"]
    by_model: dict[str, list[Candidate]] = defaultdict(list)
    for c in candidates:
        if c.source == "machine" and c.model:
            by_model[c.model].append(c)
    half = size // 2
    if len(humans) < half or sum(map(len, by_model.values())) < half:
        raise ValueError(f"not enough human or machine responses for a batch of {size}")
    chosen = rng.sample(humans, half)
    pools = {m: rng.sample(v, len(v)) for m, v in sorted(by_model.items())}
    for _ in range(half):
        models = [m for m, pool in pools.items() if pool]
        chosen.append(pools[rng.choice(models)].pop())
    rng.shuffle(chosen)
    # A control shown only on some trials could hint at the source (e.g. imported human chats
    # without a topic): ask controls on every trial or on none.
    with_controls = all(c.topic is not None or c.control_question for c in chosen)
    trials = []
    for position, c in enumerate(chosen):
        length = None
        if c.max_length is not None:
            usable = [n for n in lengths if n <= c.max_length] or [c.max_length]
            length = rng.choice(usable)
        trials.append(
            BatchTrial(
                position,
                c.item,
                c.source,
                c.model,
                c.task,
                length,
                _control(c, rng) if with_controls else None,
            )
        )
    return Batch(judge, seed, tuple(trials))


@dataclass(frozen=True)
class Answer:
    """What a judge answered on one trial of a batch."""

    trial: BatchTrial
    label: str  # "H" | "M"
    control_answer: str | None = None
    # Seconds from the trial being shown to the answer (the judge page measures it), so the
    # paper's rule of keeping responses over 3 s (`itt score --min-rt 3`) applies.
    seconds: float | None = None


@dataclass
class Screened:
    judgements: list[JudgementRow]
    excluded_judges: dict[str, float] = field(default_factory=dict)  # judge -> control accuracy
    dropped_trials: int = 0


def screen(
    answers_by_judge: dict[str, Sequence[Answer]],
    *,
    min_control_accuracy: float = 0.75,
    demographics: dict[str, dict[str, str]] | None = None,
) -> Screened:
    """Apply the exclusions and turn the kept answers into judgement rows."""
    out = Screened([])
    for judge, answers in sorted(answers_by_judge.items()):
        with_control = [a for a in answers if a.trial.control is not None]
        if with_control:
            right = sum(a.control_answer == a.trial.control.answer for a in with_control)  # type: ignore[union-attr]
            accuracy = right / len(with_control)
            if accuracy < min_control_accuracy:
                out.excluded_judges[judge] = accuracy
                continue
        for a in answers:
            if a.trial.control is not None and a.control_answer != a.trial.control.answer:
                out.dropped_trials += 1
                continue
            out.judgements.append(
                JudgementRow.model_validate(
                    {
                        "judge": judge,
                        "judge_type": "human",
                        "item": a.trial.item,
                        "source": a.trial.source,
                        "model": a.trial.model,
                        "label": a.label,
                        "task": a.trial.task,
                        "length": a.trial.length,
                        "rt": a.seconds,
                        **((demographics or {}).get(judge, {})),
                    }
                )
            )
    return out


def candidates(rows: Sequence[Response]) -> list[Candidate]:
    """One candidate per conversation side and per other response. Image tasks may carry a
    true/false control question in extra columns `control_question` / `control_answer`."""
    out = [
        Candidate(
            f"{c.id}:{side}",
            c.side(side)[0],
            c.side(side)[1] if c.side(side)[0] == "machine" else None,
            "conversation",
            c.topic,
            max_length=len(c.messages),
        )
        for c in conversations(rows)
        for side in ("A", "B")
    ]
    for r in rows:
        if r.task == "conversation":
            continue
        extra = r.model_extra or {}
        question, answer = extra.get("control_question"), extra.get("control_answer")
        out.append(
            Candidate(
                r.item,
                r.source,
                r.agent if r.source == "machine" else None,
                r.task,
                control_question=str(question) if question else None,
                control_answer=str(answer).lower() if answer else None,
            )
        )
    return out
