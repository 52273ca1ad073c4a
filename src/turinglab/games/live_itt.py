"""The live integrative Turing test (Zhang, Kreiman et al.; SPEC §4 "Live version").

A judge (a person) asks questions; each question goes to a human agent and an AI agent, who
answer independently and see only the judge's questions and their own answers. The judge sees
both answers under fixed names, "A" and "B", for a number of exchanges drawn from {1, 5, 10, 20},
then says which of A and B is the human. Two conditions, drawn per session: "deceitful-ai" (the AI
plays a person with a generated life story; the person is honest) and "deceitful-human" (the
person tries to pass as the AI; the AI is honest about being one). Every draw (sides, limit,
condition, life story) comes from the session's seed.

The game needs people (the judge always, the human agent outside practice), so it is played
only in the arena (arena/modes/live_itt_mode.py); `turinglab run` refuses it. In practice a stand-in
agent (e.g. replayed human chat lines) takes the human agent's seat.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from turinglab.agents.base import Agent, ChatMessage
from turinglab.agents.human import MESSAGE, HumanInput
from turinglab.games.events import RepliesGiven, VerdictAsked
from turinglab.games.kinds import RESUMABLE, GameContext, GameKind, register
from turinglab.games.live import call_seat
from turinglab.games.people import Person, is_person, person_at
from turinglab.games.spec import FINISHED, FLAGGED, GameResult, Judgement, TrialSpec
from turinglab.games.table import Diverged, Seat, Table

JUDGE = "judge"
SIDES = ("agent_a", "agent_b")
LABELS = ("A", "B")
EXCHANGE_LIMITS = (1, 5, 10, 20)
Condition = Literal["deceitful-ai", "deceitful-human"]
CONDITIONS: tuple[Condition, ...] = ("deceitful-ai", "deceitful-human")

_NAMES = ("Maya", "Tomas", "Ines", "Kwame", "Hana", "Lucas", "Priya", "Owen", "Sofia", "Jonas")
_JOBS = (
    "primary-school teacher", "bicycle mechanic", "hospital nurse", "bookshop owner",
    "bus driver", "physiotherapist", "sound engineer", "baker", "accountant", "gardener",
)  # fmt: skip
_PLACES = ("Leeds", "Porto", "Tampere", "Lyon", "Graz", "Cork", "Gdansk", "Bilbao", "Utrecht")
_FAMILY = (
    "a younger sister who studies law", "two kids in primary school", "a partner who plays "
    "the cello", "a retired father who still fixes old radios", "an older brother abroad",
)  # fmt: skip
_HOBBIES = (
    "trail running", "growing tomatoes on the balcony", "board games with friends",
    "learning the guitar, badly", "open-water swimming", "baking sourdough", "birdwatching",
)  # fmt: skip


def life_story(rng: random.Random) -> str:
    """A short invented biography the deceitful AI speaks from (the paper gave its AI one)."""
    name, job, place = rng.choice(_NAMES), rng.choice(_JOBS), rng.choice(_PLACES)
    article = "an" if job[0] in "aeiou" else "a"
    return (
        f"You are {name}, {rng.randint(22, 64)}, {article} {job} living in {place}. "
        f"You have {rng.choice(_FAMILY)}. In your free time you enjoy {rng.choice(_HOBBIES)}."
    )


def ai_prompt(condition: str, story: str, max_words: int) -> str:
    if condition == "deceitful-ai":
        return (
            f"{story} Stay in this role: a judge is asking you and one other respondent "
            "questions and will decide which of you is the human. Answer like a real person "
            f"would in a chat: short, plain, spoken. At most {max_words} words per answer. "
            "If you do not know something about your life, make up a plausible answer. "
            "Never say or hint that you are an AI."
        )
    return (
        "You are an AI. A judge is asking you and one human respondent questions and knows "
        "one of you is an AI. Answer honestly as yourself and help the judge see that you "
        f"are the AI. Short, plain answers of at most {max_words} words."
    )


def human_brief(condition: str, max_words: int) -> str:
    if condition == "deceitful-human":
        return (
            "You answer the judge's questions beside an AI. Your task: make the judge believe "
            f"that YOU are the AI. Keep answers short (about {max_words} words)."
        )
    return (
        "You answer the judge's questions beside an AI that pretends to be a person. Your task: "
        f"convince the judge that you are the human. Keep answers short (about {max_words} words)."
    )


class LiveITTExperiment(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    game: Literal["live-itt"]
    ai_agents: list[str] = Field(min_length=1, description="the AI agents; one per session")
    stand_ins: list[str] = Field(
        default_factory=list,
        description="agents that answer as the human in solo practice (none: no practice mode)",
    )
    conditions: list[Condition] = Field(default_factory=lambda: list(CONDITIONS), min_length=1)
    exchange_limits: list[int] = Field(
        default_factory=lambda: list(EXCHANGE_LIMITS),
        min_length=1,
        description="exchanges per session, one drawn per session; from 1, 5, 10, 20",
    )
    max_words: int = Field(default=15, ge=1, description="words per answer asked of the sides")
    max_chars: int = Field(default=300, ge=1, description="characters per message people type")
    message_deadline_s: float = Field(default=120.0, gt=0, description="per AI answer")
    input_timeout_s: float = Field(default=600.0, gt=0, description="wait for a person")
    seed: int = Field(default=0, description="the arena's seed: matching and session draws")

    @model_validator(mode="after")
    def _consistent(self) -> LiveITTExperiment:
        odd = sorted(set(self.exchange_limits) - set(EXCHANGE_LIMITS))
        if odd:
            raise ValueError(
                f"exchange_limits: {odd} not allowed (the paper's limits are 1, 5, 10 and 20)"
            )
        for name in ("ai_agents", "stand_ins", "conditions", "exchange_limits"):
            values = getattr(self, name)
            if len(set(values)) != len(values):
                raise ValueError(f"{name}: a value is listed twice")
        clash = set(self.ai_agents) & set(self.stand_ins)
        if clash:
            raise ValueError(f"agents both AI and stand-in: {', '.join(sorted(clash))}")
        return self

    def agent_names(self) -> list[str]:
        return list(dict.fromkeys([*self.ai_agents, *self.stand_ins]))


class LiveITTGame:
    name = "live-itt"

    def __init__(self, cfg: LiveITTExperiment) -> None:
        self.cfg = cfg

    def plan(self) -> list[TrialSpec]:
        return []  # played only live; sessions are planned as people are matched (spec_for)

    def identity(self) -> dict[str, Any]:
        return {"game": self.name, "cfg": self.cfg.model_dump()}

    def seats(self, spec: TrialSpec, agents: Mapping[str, Agent]) -> dict[str, Seat]:
        out = {}
        for seat, name in spec.seats.items():
            agent = agents[name]
            out[seat] = Seat(seat, name, agent, "human" if is_person(agent) else "agent")
        return out

    async def play(self, table: Table, spec: TrialSpec) -> GameResult:
        p = spec.params
        human, limit = p["human_seat"], int(p["exchanges"])
        judge = person_at(table.seats, JUDGE)
        assert judge is not None
        table.tell(human, human_brief(p["condition"], self.cfg.max_words), phase="brief")
        prompt = ChatMessage(
            "system", ai_prompt(p["condition"], p["life_story"], self.cfg.max_words)
        )
        for turn in range(1, limit + 1):
            question = await self._said(table, JUDGE, judge)
            if question is None:
                return GameResult(FLAGGED, flags=["live-itt: the judge stopped"])
            table.post(JUDGE, question, visible_to=(JUDGE, *SIDES), phase=f"turn-{turn}")
            by_seat = await self._answers(table, human, prompt, turn)
            if by_seat is None:
                return GameResult(FLAGGED, flags=["live-itt: the human agent stopped"])
            table.show(RepliesGiven(turn, SIDES, by_seat), JUDGE)
        table.show(VerdictAsked(), JUDGE)
        item = await self._input(judge, "verdict")
        if item is None:
            return GameResult(FLAGGED, flags=["live-itt: no verdict in time"])
        chosen = str(item.data["human"])
        verdict = Judgement(
            judge=JUDGE,
            kind="verdict",
            verdict=chosen,
            confidence=float(item.data.get("confidence", 0)),
            reason=str(item.data.get("reason", "")),
            # When the judge gave it (a game resumed after a takeover is given it again).
            created_at=float(item.data.get("at", table.clock.now())),
            details={"condition": p["condition"], "exchanges": limit},
        )
        return GameResult(
            FINISHED,
            correct=chosen == human,
            judgements=[verdict],
            details={"condition": p["condition"], "exchanges": limit, "human_seat": human},
        )

    async def resume(self, table: Table, spec: TrialSpec, *, started_at: float) -> GameResult:
        """Go on with a live session from the messages at its table (the arena's takeover of a
        game whose process died): played again from its start over them (the table's catch-up:
        each is checked to be what the game says there; no person or agent is asked for a
        stored one, and calls are counted as when first made), then on as usual. Its draws
        are in its spec; its turns follow from who said what; the verdict, not a message, is
        the live game's to give again (arena/modes/live_itt_mode.py, from the control log)."""
        table.catch_up()
        result = await self.play(table, spec)
        if table.catching_up:
            raise Diverged("the session ended before the history it was resumed from")
        return result

    async def _said(self, table: Table, seat: str, person: Person) -> str | None:
        """A person's next message: the stored one while catching up, else what they type
        (None: they stopped)."""
        if table.catching_up:
            return table.stored_input(seat)
        item = await self._input(person, MESSAGE)
        return None if item is None else item.text

    async def _answers(
        self, table: Table, human: str, prompt: ChatMessage, turn: int
    ) -> dict[str, str] | None:
        """Both sides' answers to the judge's question, said in the order of SIDES once both
        are in (the sides answer at once; the order says nothing about who was faster). While
        catching up they are the stored ones, in that order; what is not stored is asked
        (None: the human agent stopped)."""
        phase = f"turn-{turn}"
        by_seat: dict[str, str] = {}
        for seat in SIDES:
            if not table.catching_up:
                break
            text = await self._answer(table, seat, human, prompt)
            assert text is not None  # a stored answer
            by_seat[seat] = text
            table.post(seat, text, visible_to=(JUDGE, seat), phase=phase)
        rest = [seat for seat in SIDES if seat not in by_seat]
        got = await asyncio.gather(*(self._answer(table, seat, human, prompt) for seat in rest))
        for seat, text in zip(rest, got, strict=True):
            if text is None:
                return None
            by_seat[seat] = text
        for seat in rest:
            table.post(seat, by_seat[seat], visible_to=(JUDGE, seat), phase=phase)
        return by_seat

    async def _answer(self, table: Table, seat: str, human: str, prompt: ChatMessage) -> str | None:
        if seat == human:
            return await self._human_answer(table, seat)
        return await self._agent_answer(table, seat, prompt)

    async def _input(self, person: Person, kind: str) -> HumanInput | None:
        while True:
            try:
                item = await asyncio.wait_for(person.next_input(), self.cfg.input_timeout_s)
            except TimeoutError:
                return None
            if item.kind == kind:
                return item

    async def _human_answer(self, table: Table, seat: str) -> str | None:
        """A person's typed answer (None: they stopped), or a practice stand-in's."""
        person = person_at(table.seats, seat)
        if person is None:  # the brief was told: it is in the stand-in's view
            return await self._agent_answer(table, seat, None)
        return await self._said(table, seat, person)

    async def _agent_answer(self, table: Table, seat: str, prompt: ChatMessage | None) -> str:
        history = [*([prompt] if prompt else []), *table.view(seat)]
        reply = await call_seat(table, seat, history, deadline_s=self.cfg.message_deadline_s)
        return reply.text.strip()


def _live_itt_game(cfg: LiveITTExperiment, context: GameContext) -> LiveITTGame:
    return LiveITTGame(cfg)


KIND = register(
    GameKind(
        "live-itt",
        LiveITTExperiment,
        _live_itt_game,
        arena_modes=("live-itt", "live-itt-practice"),
        needs_people=True,
        capabilities=frozenset({RESUMABLE}),
    )
)
