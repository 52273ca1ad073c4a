"""The live integrative Turing test (Zhang, Kreiman et al.; SPEC §4 "Live version") in the arena.

A judge (a person) asks questions; each question goes to a human agent (a person) and an AI
agent, who answer independently and see only the judge's questions and their own answers. The
judge sees both answers under fixed names, "A" and "B", for a number of exchanges drawn from
{1, 5, 10, 20}, then says which of A and B is the human. Two conditions, drawn per session:
"deceitful-ai" (the AI plays a person with a generated life story; the person is honest) and
"deceitful-human" (the person tries to pass as the AI; the AI is honest about being one).
Every draw (sides, limit, condition, life story) comes from the session's seed.

The game is arena-only (people in two of its three seats), so it lives here; its transport is
the Strong Turing Test's (`StrongLiveGame`): the same state frame, with fixed labels and a verdict.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from turinglab.agents.base import Agent, ChatMessage
from turinglab.agents.human import MESSAGE, HumanAgent, HumanInput
from turinglab.arena import frames as F
from turinglab.arena.live import InputRejected, LiveGame, PersonView
from turinglab.arena.modes import ArenaMode
from turinglab.arena.strong_mode import PERSON, StrongLiveGame
from turinglab.games.live import call_seat
from turinglab.games.spec import FINISHED, FLAGGED, GameResult, Judgement, TrialSpec
from turinglab.games.table import Seat, Table

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
    return (
        f"You are {name}, {rng.randint(22, 64)}, a {job} living in {place}. "
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

    ai_agents: list[str] = Field(min_length=1)
    conditions: list[Condition] = Field(default_factory=lambda: list(CONDITIONS), min_length=1)
    exchange_limits: list[int] = Field(default_factory=lambda: list(EXCHANGE_LIMITS), min_length=1)
    max_words: int = Field(default=15, ge=1)
    max_chars: int = Field(default=300, ge=1)
    message_deadline_s: float = Field(default=120.0, gt=0)
    input_timeout_s: float = Field(default=600.0, gt=0)


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
            out[seat] = Seat(
                seat, name, agent, "human" if isinstance(agent, HumanAgent) else "agent"
            )
        return out

    async def play(self, table: Table, spec: TrialSpec) -> GameResult:
        p = spec.params
        human, ai, limit = p["human_seat"], p["ai_seat"], int(p["exchanges"])
        judge = table.seats[JUDGE].agent
        assert isinstance(judge, HumanAgent)
        table.tell(human, human_brief(p["condition"], self.cfg.max_words), phase="brief")
        prompt = ChatMessage(
            "system", ai_prompt(p["condition"], p["life_story"], self.cfg.max_words)
        )
        for turn in range(1, limit + 1):
            item = await self._input(judge, MESSAGE)
            if item is None:
                return GameResult(FLAGGED, flags=["live-itt: the judge stopped"])
            table.post(JUDGE, item.text, visible_to=(JUDGE, *SIDES), phase=f"turn-{turn}")
            answers = await asyncio.gather(
                self._person_answer(table, human), self._ai_answer(table, ai, prompt)
            )
            if answers[0] is None:
                return GameResult(FLAGGED, flags=["live-itt: the human agent stopped"])
            by_seat = {human: answers[0], ai: answers[1]}
            for seat in SIDES:
                table.post(seat, by_seat[seat], visible_to=(JUDGE, seat), phase=f"turn-{turn}")
            judge.deliver(
                {"type": "replies", "turn": turn, "order": list(SIDES), "replies": by_seat}
            )
        judge.deliver({"type": "verdict-request"})
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
            created_at=table.clock.now(),
            details={"condition": p["condition"], "exchanges": limit},
        )
        return GameResult(
            FINISHED,
            correct=chosen == human,
            judgements=[verdict],
            details={"condition": p["condition"], "exchanges": limit, "human_seat": human},
        )

    async def _input(self, person: HumanAgent, kind: str) -> HumanInput | None:
        while True:
            try:
                item = await asyncio.wait_for(person.next_input(), self.cfg.input_timeout_s)
            except TimeoutError:
                return None
            if item.kind == kind:
                return item

    async def _person_answer(self, table: Table, seat: str) -> str | None:
        person = table.seats[seat].agent
        assert isinstance(person, HumanAgent)
        item = await self._input(person, MESSAGE)
        return None if item is None else item.text

    async def _ai_answer(self, table: Table, seat: str, prompt: ChatMessage) -> str:
        history = [prompt, *table.view(seat)]
        reply = await call_seat(table, seat, history, deadline_s=self.cfg.message_deadline_s)
        return reply.text.strip()


class LiveITTLiveGame(StrongLiveGame):
    """The STT transport with fixed labels A/B, no per-turn choice and a verdict at the end."""

    def _phase(self, view: PersonView) -> str:
        if view.seat != self.mode.judge:
            return super()._phase(view)
        if self.result is not None:
            return "ended"
        turn = self.turns.get(self.current)
        limit = int(self.spec.params["exchanges"])
        if turn is not None and turn.order and self.current >= limit:
            return "waiting" if self.chose else "verdict"
        if turn is None or turn.order:
            return "waiting" if self.sent.get(view.seat) == self.current + 1 else "asking"
        return "waiting"

    def _state(self, view: PersonView) -> F.StrongState:
        state = super()._state(view)
        outcome = None
        if self.result is not None and self.result.correct is not None:
            human = LABELS[SIDES.index(self.spec.params["human_seat"])]
            right = "right" if self.result.correct else "wrong"
            outcome = f"The judge was {right}: {human} was the person."
        brief = None
        if view.seat != self.mode.judge:
            brief = human_brief(self.spec.params["condition"], self.mode_words)
        return state.model_copy(
            update={
                "brief": brief,
                "labels": list(LABELS),
                "turns": int(self.spec.params["exchanges"]),
                "can_end": False,
                "scores": None,
                "outcome": outcome,
            }
        )

    @property
    def mode_words(self) -> int:
        return int(getattr(getattr(self.mode.game, "cfg", None), "max_words", 15))

    def _side(self, seat: str) -> tuple[Any, str]:
        if seat in self.views:
            return "human", "a person"
        agent = self.spec.seats[seat]
        return "ai", self.display_names.get(agent, agent)

    def handle(self, participant: Any, frame: F.ClientFrame) -> None:
        view = self.view_of(participant)
        if isinstance(frame, F.Verdict):
            if view.seat != self.mode.judge or self._phase(view) != "verdict":
                raise InputRejected("not-now", "The verdict comes after the last exchange.")
            if frame.choice not in LABELS:
                raise InputRejected("bad-verdict", "Choose A or B.")
            seat = SIDES[LABELS.index(frame.choice)]
            self.chose = self.current
            data = {"human": seat, "confidence": frame.confidence, "reason": frame.reason}
            view.agent.push(HumanInput("verdict", data=data))
            self._push((view.seat,))
            return
        if isinstance(frame, F.SendMessage) and frame.image is not None:
            raise InputRejected("no-images", "This game takes text only.")
        if isinstance(frame, F.Preference | F.EndGame):
            raise InputRejected("not-now", "That is not part of this game.")
        super().handle(participant, frame)

    def _time_limit(self) -> float:
        cfg = getattr(self.mode.game, "cfg", None)
        per_turn = getattr(cfg, "input_timeout_s", 600.0) * 2
        return per_turn * (int(self.spec.params["exchanges"]) + 1) + 60.0


@dataclass(frozen=True)
class LiveITTArenaMode(ArenaMode):
    live_game: ClassVar[type[LiveGame]] = LiveITTLiveGame


def live_itt_mode(name: str, title: str, cfg: LiveITTExperiment) -> LiveITTArenaMode:
    """Two matched people: one judges, the other is the human agent; an AI from `cfg`."""
    game = LiveITTGame(cfg)

    def spec_for(index: int, assigned: dict[str, str], seed: int) -> TrialSpec:
        rng = random.Random(seed)
        person = next(a for s, a in assigned.items() if s != JUDGE and a.startswith(PERSON))
        sides = list(SIDES)
        rng.shuffle(sides)
        human_seat, ai_seat = sides
        return TrialSpec(
            index=index,
            key=f"arena:{name}#{index}",
            game=game.name,
            seed=seed,
            seats={JUDGE: assigned[JUDGE], human_seat: person, ai_seat: rng.choice(cfg.ai_agents)},
            params={
                "exchanges": rng.choice(cfg.exchange_limits),
                "condition": rng.choice(cfg.conditions),
                "life_story": life_story(rng),
                "human_seat": human_seat,
                "ai_seat": ai_seat,
            },
        )

    return LiveITTArenaMode(
        name=name,
        title=title,
        game=game,
        judge=JUDGE,
        channel_of={seat: "main" for seat in SIDES},
        ai_agents=tuple(cfg.ai_agents),
        verdict="which",
        duration_s=None,
        max_chars=cfg.max_chars,
        spec_for=spec_for,
    )
