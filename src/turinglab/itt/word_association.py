"""Word association responses from any agents (Zhang et al., free association): "name a word you
associate with <cue>", one word, post-processed as the paper did (controls.py). Agents are
called through the retrying Caller with a seed per (agent, cue). The built-in cue list is ours
(nouns, verbs and adjectives of varied frequency); no shipped package holds human association
norms, so the demo dataset is machine-only (see human_sources.py)."""

from __future__ import annotations

import asyncio
import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from turinglab.agents.base import Agent, CallContext, ChatMessage
from turinglab.agents.errors import AgentError
from turinglab.agents.retry import Caller, RetryPolicy
from turinglab.itt.controls import postprocess_association
from turinglab.itt.dataset import Response

DEMO_CUES = (
    "apple", "river", "doctor", "window", "music", "winter", "garden", "money", "bread", "train",
    "run", "sing", "build", "forget", "climb", "teach", "break", "listen", "grow", "drive",
    "happy", "dark", "soft", "ancient", "brave", "empty", "quiet", "bitter", "bright", "strange",
)  # fmt: skip
PROMPT = "Name one word that you associate with the word '{cue}'. Answer with that one word only."
# Prompt-based association (the paper's second procedure): a few worked examples first, so
# that chat and base models alike answer with a bare word.
EXAMPLES = (("sun", "moon"), ("cold", "ice"), ("teacher", "school"))


def association_history(cue: str) -> list[ChatMessage]:
    history: list[ChatMessage] = []
    for example_cue, answer in EXAMPLES:
        history += [
            ChatMessage("user", PROMPT.format(cue=example_cue)),
            ChatMessage("assistant", answer),
        ]
    return [*history, ChatMessage("user", PROMPT.format(cue=cue))]


@dataclass(frozen=True)
class AssociationRun:
    rows: list[Response]
    dropped: list[dict[str, str]]  # agent, cue, raw answer, why it was dropped
    errors: list[dict[str, str]]


async def generate_associations(
    agents: Mapping[str, Agent], cues: Sequence[str] = DEMO_CUES, *, seed: int = 0
) -> AssociationRun:
    caller = Caller(RetryPolicy(retries=3), default_limit=2, seed=seed)
    rows: list[Response] = []
    dropped: list[dict[str, str]] = []
    errors: list[dict[str, str]] = []

    async def one(name: str, agent: Agent, cue: str) -> None:
        digest = hashlib.sha256(f"{seed}:{name}:{cue}".encode()).digest()
        ctx = CallContext(seed=int.from_bytes(digest[:4], "big"), stop=("\n",))
        try:
            reply = await caller(agent, association_history(cue), ctx)
        except AgentError as err:
            errors.append({"agent": name, "cue": cue, "error": str(err)})
            return
        raw = (re.findall(r"[A-Za-z'-]+", reply.text) or [""])[0]  # the first word said
        assoc = postprocess_association(cue, raw)
        if assoc.word is None:
            dropped.append(
                {"agent": name, "cue": cue, "raw": reply.text, "why": assoc.dropped or ""}
            )
            return
        rows.append(
            Response(
                item=f"wa-{name}-{cue}",
                task="word-association",
                stimulus_id=f"cue-{cue}",
                stimulus=cue,
                source="machine",
                agent=name,
                text=assoc.word,
            )
        )

    await asyncio.gather(*(one(n, a, c) for n, a in agents.items() for c in cues))
    rows.sort(key=lambda r: r.item)
    return AssociationRun(rows, dropped, errors)
