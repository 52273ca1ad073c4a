"""Agent–agent conversation on a topic (Zhang et al., conversation task): the machine side of
an ITT conversation dataset, and the H–M conversations when a seat is a person.

Two seats, A (opens) and B, alternate for `exchanges` messages (24 by default) on a topic drawn
from the paper's list. Chat models get a role prompt as an ordinary user message. Base models
(completion mode: the embedded Gemma 3 270M) get the paper's transcript framing instead —
"A greets B. B starts to talk about <topic> ... The conversation never ends." — and continue
the chat log, with the speaker names as stop sequences.

Small models degenerate: they repeat a line, go silent, or say goodbye after three messages.
A machine reply that is empty, repeats an earlier message, or ends the chat before the last
two exchanges is sampled again (a fresh seed), up to `max_resamples` times; every re-sample is
recorded with its reason, and a conversation that kept a degenerate reply is flagged.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping
from difflib import SequenceMatcher
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from turinglab.agents.base import Agent, AgentReply, ChatMessage
from turinglab.agents.local_gguf import OTHER_NAME, SELF_NAME
from turinglab.games.kinds import RESUMABLE, GameContext, GameKind, register
from turinglab.games.spec import FINISHED, FLAGGED, GameResult, TrialSpec, trial_seed
from turinglab.games.table import Diverged, Seat, Table

TOPICS = (
    "fashion",
    "politics",
    "books",
    "sports",
    "general entertainment",
    "music",
    "science",
    "technology",
    "movies",
)
SEATS = ("A", "B")

CHAT_ROLE_PROMPT = (
    "You are texting with a friend. {opening} The topic is {topic}. Write like a real person "
    "in a chat: one or two short sentences, casual, your own opinions, sometimes a question "
    "back. Do not say you are an AI and do not end the conversation. Reply with your message "
    "only."
)
CHAT_OPENS = "You write first: greet your friend and bring up the topic."
CHAT_ANSWERS = "Your friend wrote first; their message follows."
HUMAN_BRIEF = (
    "Chat with your partner about {topic}. Write one message at a time; the chat ends "
    "after {n} messages in all."
)
# The paper's base-model framing, in our words, from the speaking model's side (it is SELF_NAME).
TRANSCRIPT_FRAMING = (
    "{other} greets {me}. {me} starts to talk about {topic}. Both ask long questions, give "
    "long responses and often disagree. Then the topic changes. The conversation never ends."
    "\n\n"
)
_GOODBYE = re.compile(
    r"\b(good ?bye|bye|see you|see ya|talk (to you )?later|gotta go|have to go|good night|"
    r"nice (talking|chatting))\b",
    re.IGNORECASE,
)


class ConversationExperiment(BaseModel):
    """`game: conversation` in an experiment config."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    game: Literal["conversation"]
    pairs: list[tuple[str, str]] = Field(min_length=1, description="[agent A, agent B] pairs")
    conversations_per_pair: int = Field(default=10, ge=1)
    exchanges: int = Field(default=24, ge=2, description="messages in all, A and B alternating")
    topics: list[str] = Field(default_factory=lambda: list(TOPICS), min_length=1)
    base_models: list[str] = Field(
        default_factory=lambda: ["gemma3-base"],
        description="agents driven by the transcript prompt (any local agent in completion "
        "mode is too)",
    )
    max_resamples: int = Field(default=3, ge=0)
    seed: int = 0

    @model_validator(mode="after")
    def _distinct_topics(self) -> ConversationExperiment:
        if len(set(self.topics)) != len(self.topics):
            raise ValueError("topics must be distinct")
        return self

    def agent_names(self) -> list[str]:
        return sorted({a for pair in self.pairs for a in pair})


def degenerate(text: str, earlier: list[str], turn: int, exchanges: int) -> str | None:
    """Why a machine reply must be sampled again, or None when it is usable."""
    clean = " ".join(text.lower().split())
    if len(re.sub(r"[^a-z0-9]", "", clean)) < 2:
        return "empty"
    for prior in earlier:
        other = " ".join(prior.lower().split())
        if clean == other or SequenceMatcher(None, clean, other).ratio() > 0.9:
            return "repeat"
    if turn < exchanges - 2 and _GOODBYE.search(clean):
        return "early-exit"
    return None


class ConversationGame:
    name = "conversation"

    def __init__(self, config: ConversationExperiment, context: GameContext) -> None:
        self.config = config
        self.context = context

    def plan(self) -> list[TrialSpec]:
        specs: list[TrialSpec] = []
        rng = random.Random(self.config.seed)
        for a, b in self.config.pairs:
            for i in range(self.config.conversations_per_pair):
                key = f"{a}~{b}#{i}"
                specs.append(
                    TrialSpec(
                        index=len(specs),
                        key=key,
                        game=self.name,
                        seed=trial_seed(self.config.seed, key),
                        seats={"A": a, "B": b},
                        params={
                            "topic": rng.choice(self.config.topics),
                            "exchanges": self.config.exchanges,
                        },
                    )
                )
        return specs

    def seats(self, spec: TrialSpec, agents: Mapping[str, Agent]) -> dict[str, Seat]:
        return {
            s: Seat(
                s,
                spec.seats[s],
                agents[spec.seats[s]],
                self.context.agent_kinds.get(spec.seats[s], "agent"),
            )
            for s in SEATS
        }

    def identity(self) -> dict[str, Any]:
        return {
            "chat_role_prompt": CHAT_ROLE_PROMPT,
            "chat_opens": CHAT_OPENS,
            "chat_answers": CHAT_ANSWERS,
            "transcript_framing": TRANSCRIPT_FRAMING,
            "human_brief": HUMAN_BRIEF,
        }

    def is_transcript_agent(self, seat: Seat) -> bool:
        return seat.agent_name in self.config.base_models or (
            getattr(seat.agent, "mode", None) == "completion"
        )

    def history_for(self, table: Table, seat_id: str, topic: str) -> list[ChatMessage]:
        """The seat's view of the conversation, framed for its kind of model."""
        said = [(m.sender == seat_id, m.text) for m in table.messages if m.sender in SEATS]
        if self.is_transcript_agent(table.seats[seat_id]):
            framing = TRANSCRIPT_FRAMING.format(other=OTHER_NAME, me=SELF_NAME, topic=topic)
            # A leading system message is the transcript's preamble (agents/local_gguf.py).
            return [
                ChatMessage("system", framing),
                *(ChatMessage("assistant" if own else "user", text) for own, text in said),
            ]
        opening = CHAT_OPENS if seat_id == SEATS[0] else CHAT_ANSWERS
        instruction = CHAT_ROLE_PROMPT.format(opening=opening, topic=topic)
        history = [ChatMessage("user", instruction)]
        for own, text in said:
            if not own and history[-1].role == "user":  # keep roles alternating
                last = history.pop()
                history.append(ChatMessage("user", f"{last.content}\n\n{text}"))
            else:
                history.append(ChatMessage("assistant" if own else "user", text))
        return history

    async def play(self, table: Table, spec: TrialSpec) -> GameResult:
        topic = str(spec.params["topic"])
        exchanges = int(spec.params.get("exchanges", self.config.exchanges))
        stops = (f"{OTHER_NAME}:", f"{SELF_NAME}:")
        resamples: list[dict[str, Any]] = []
        kept_degenerate: list[int] = []
        for seat_id in SEATS:
            if table.seats[seat_id].kind == "human":  # a person is told the topic once
                table.tell(seat_id, HUMAN_BRIEF.format(topic=topic, n=exchanges), phase="brief")
        for turn in range(exchanges):
            seat_id = SEATS[turn % 2]
            seat = table.seats[seat_id]
            earlier = [m.text for m in table.said if m.sender in SEATS]  # said before this
            reply: AgentReply | None = None
            for attempt in range(self.config.max_resamples + 1):
                reply = await table.ask(
                    seat_id, self.history_for(table, seat_id, topic), stop=stops
                )
                if seat.kind == "human":
                    break  # people are never re-sampled
                reason = degenerate(reply.text, earlier, turn, exchanges)
                if reason is None:
                    break
                table.discard(seat_id, reply)  # stored as drawn: a resumed game gets it again
                resamples.append(
                    {
                        "turn": turn,
                        "seat": seat_id,
                        "attempt": attempt,
                        "reason": reason,
                        "text": reply.text,
                    }
                )
            else:
                kept_degenerate.append(turn)
            assert reply is not None
            table.post(seat_id, reply.text, visible_to=SEATS, reply=reply)
        details = {
            "topic": topic,
            "exchanges": exchanges,
            "resamples": resamples,
            "kept_degenerate_turns": kept_degenerate,
            "transcript": [
                {"turn": i, "speaker": m.sender, "text": m.text}
                for i, m in enumerate(x for x in table.messages if x.sender in SEATS)
            ],
        }
        if kept_degenerate:
            return GameResult(FLAGGED, details=details, flags=["degenerate-reply-kept"])
        return GameResult(FINISHED, details=details)

    async def resume(self, table: Table, spec: TrialSpec, *, started_at: float) -> GameResult:
        """Go on with a live conversation from the messages at its table (the arena's takeover
        of a game whose process died): played again from its start over them (the table's
        catch-up: each is checked to be what the game says there; no person or model is asked
        for a stored one, and calls are counted as when first made), then on as usual. Its
        topic is in its spec; whose turn it is follows from the messages; a machine reply it
        sampled again is given again from the table's `unsaid` (the live game's control log),
        so it is rejected again, recorded in `resamples`, and its call counted."""
        table.catch_up()
        result = await self.play(table, spec)
        if table.catching_up:
            raise Diverged("the conversation ended before the history it was resumed from")
        return result


def _conversation_game(config: Any, context: GameContext) -> ConversationGame:
    if not isinstance(config, ConversationExperiment):
        config = ConversationExperiment.model_validate(config)
    return ConversationGame(config, context)


KIND = register(
    GameKind(
        "conversation",
        ConversationExperiment,
        _conversation_game,
        arena_modes=("itt-conversation",),  # people in conversations (arena/modes/itt_chat_mode.py)
        capabilities=frozenset({RESUMABLE}),
    )
)
