"""What three- and two-party games share above the play itself: the experiment fields, AI
witness entries, seat kinds, seeds, and what a finished game is to the study file
(`study_game`; games/study_rows.py writes the rows, for batch runs and arena studies alike).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from turinglab.agents.base import Agent
from turinglab.games.clock import REAL_CLOCK, Clock, SimulatedClock
from turinglab.games.interrogation import Interrogation, InterrogationRules, WitnessSide
from turinglab.games.interrogation_text import INTERROGATOR
from turinglab.games.kinds import GameContext
from turinglab.games.people import is_person
from turinglab.games.spec import GameResult, TrialSpec
from turinglab.games.study_rows import Said, Spoken, StudyGame, StudyWitness, between
from turinglab.games.table import Seat, Table
from turinglab.games.typing_delay import TypingDelay
from turinglab.games.witness import Persona, WitnessFacts, WitnessPrompt
from turinglab.games.witness import identity as witness_identity
from turinglab.prompts import builtin_prompt

PERSONA_LABELS = {"persona": "PERSONA", "no-persona": "NO-PERSONA", "none": ""}


class AIWitness(BaseModel):
    """An AI witness: an agent and its prompt condition."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    agent: str
    persona: Persona = Field(
        default="persona", description='"persona", "no-persona", or "none" (no prompt: ELIZA)'
    )
    label: str | None = Field(
        default=None, description='name in the study file, e.g. "SMOLLM2-PERSONA"'
    )

    def name(self) -> str:
        if self.label:
            return self.label
        suffix = PERSONA_LABELS[self.persona]
        return f"{self.agent.upper()}-{suffix}" if suffix else self.agent.upper()


class InterrogationExperiment(BaseModel):
    """Fields every interrogation game has; each game adds `game: Literal[...]`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    interrogators: list[str] = Field(min_length=1, description="agents that judge")
    ai_witnesses: list[AIWitness] = Field(default_factory=list)
    human_witnesses: list[str] = Field(
        default_factory=list, description="agents playing the human side: people or stand-ins"
    )
    stand_ins: list[str] = Field(
        default_factory=list, description="agents (among the above) that stand in for people"
    )
    n: int = Field(default=1, ge=1, description="games per design cell")
    seed: int = 0
    time_limit_s: float = Field(default=300.0, gt=0)
    max_chars: int = Field(default=300, ge=1)
    message_deadline_s: float = Field(default=60.0, gt=0, description="per AI call in live games")
    max_interrogator_messages: int = Field(default=10, ge=1, description="AI interrogators only")
    addressing: Literal["free", "alternate"] = Field(
        default="free",
        description="AI interrogators, three-party: 'free' (they pick the witness, as in the "
        "studies) or 'alternate' (the game sends each message to the waiting witness written "
        "to least; for models too small to pick)",
    )
    min_messages_each: int = Field(
        default=0,
        ge=0,
        description="AI interrogators, three-party: messages each witness must get before END "
        "(2 keeps games inside the studies' exclusion rule; 0: no rule)",
    )
    verdict_timeout_s: float = Field(default=120.0, gt=0)
    typing_delay: bool | None = Field(
        None, description="delay AI messages as typed; default: on when a person plays"
    )
    delay: TypingDelay = TypingDelay()  # frozen: one shared default is safe

    @model_validator(mode="before")
    @classmethod
    def _witness_shorthand(cls, data: Any) -> Any:
        # `ai_witnesses: [eliza]` is shorthand for {agent: eliza}.
        if isinstance(data, dict) and isinstance(data.get("ai_witnesses"), list):
            data = dict(data)
            data["ai_witnesses"] = [
                {"agent": w} if isinstance(w, str) else w for w in data["ai_witnesses"]
            ]
        return data

    @model_validator(mode="after")
    def _stand_ins_are_witnesses(self) -> InterrogationExperiment:
        players = set(self.human_witnesses) | set(self.interrogators)
        unknown = [s for s in self.stand_ins if s not in players]
        if unknown:
            raise ValueError(
                f"stand_ins: {', '.join(unknown)} neither a human witness nor an interrogator"
            )
        return self

    def agent_names(self) -> set[str]:
        return {*self.interrogators, *(w.agent for w in self.ai_witnesses), *self.human_witnesses}


def seed_of(*parts: object) -> int:
    """A trial seed from its design coordinates (as runner/plan.py derives GTT seeds)."""
    digest = hashlib.sha256(":".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1  # fits a signed 64-bit column


def seat_kind(agent_name: str, agent: Agent, cfg: InterrogationExperiment, ctx: GameContext) -> str:
    if is_person(agent):
        return "human"
    if agent_name in cfg.stand_ins or ctx.agent_kinds.get(agent_name) == "stand-in":
        return "stand-in"
    return ctx.agent_kinds.get(agent_name, "agent")


def make_seats(
    spec: TrialSpec, agents: Mapping[str, Agent], cfg: InterrogationExperiment, ctx: GameContext
) -> dict[str, Seat]:
    seats = {}
    for seat_id, name in spec.seats.items():
        agent = agents[name]
        seats[seat_id] = Seat(seat_id, name, agent, seat_kind(name, agent, cfg, ctx))
    return seats


def study_game(
    spec: TrialSpec,
    result: GameResult,
    *,
    seat_kinds: Mapping[str, str],
    messages: Sequence[Spoken],
    started_at: float | None = None,
) -> StudyGame:
    """A played three- or two-party trial as the study file sees it (games/study_rows.py
    writes its rows). Times are on the game's own clock (simulated in batch runs), from its
    start (`details.started_at`, else `started_at`)."""
    start = result.details.get("started_at", started_at if started_at is not None else 0.0)
    witnesses = []
    for seat, info in spec.params["witnesses"].items():  # seat -> label, human, name, persona
        said = tuple(
            Said(m.sender == INTERROGATOR, m.text, m.created_at - start)
            for m in messages
            if between(m.sender, m.visible_to, INTERROGATOR, seat)
        )
        human = bool(info["human"])
        witnesses.append(
            StudyWitness(
                seat=seat,
                human=human,
                label="human" if human else str(info["name"]),
                model="" if human else spec.seats[seat],
                persona=str(info.get("persona") or ""),
                kind=seat_kinds.get(seat, "agent"),
                said=said,
            )
        )
    return StudyGame(
        game=spec.key,
        interrogator=spec.seats[INTERROGATOR],
        interrogator_kind=seat_kinds.get(INTERROGATOR, "agent"),
        witnesses=tuple(witnesses),
        status=result.status,
        flags=tuple(result.flags),
        judgements=tuple(result.judgements),
        started_at=start,
        duration_s=result.details.get("duration_s"),
    )


def _is_eliza(agent: Agent) -> bool:
    # ELIZA plays unchanged (the paper's baseline): a prompt would only be text it echoes.
    from turinglab.agents.eliza import ElizaAgent

    return isinstance(agent, ElizaAgent)


def witness_entry(
    label: str, *, human: bool, name: str, persona: str, facts: WitnessFacts
) -> dict[str, Any]:
    """One witness as recorded in a trial's params."""
    return {
        "label": label,
        "human": human,
        "name": name,
        "persona": persona,
        "facts": facts.to_json(),
    }


class InterrogationGame:
    """The parts of three- and two-party games that do not depend on the number of witnesses."""

    name = ""
    cfg: InterrogationExperiment

    def __init__(self, cfg: InterrogationExperiment, context: GameContext) -> None:
        self.cfg = cfg
        self.context = context

    def seats(self, spec: TrialSpec, agents: Mapping[str, Agent]) -> dict[str, Seat]:
        return make_seats(spec, agents, self.cfg, self.context)

    def clock_for(self, seats: Mapping[str, Seat]) -> Clock:
        """Real time when a person plays, simulated time for batch runs."""
        if any(is_person(s.agent) for s in seats.values()):
            return REAL_CLOCK
        return SimulatedClock()

    def rules(self, live: bool) -> InterrogationRules:
        cfg = self.cfg
        delayed = live if cfg.typing_delay is None else cfg.typing_delay
        return InterrogationRules(
            time_limit_s=cfg.time_limit_s,
            max_chars=cfg.max_chars,
            deadline_s=cfg.message_deadline_s,
            typing_delay=cfg.delay if delayed else None,
            max_interrogator_messages=cfg.max_interrogator_messages,
            min_messages_each=cfg.min_messages_each,
            addressing=cfg.addressing,
            verdict_timeout_s=cfg.verdict_timeout_s,
        )

    async def play(self, table: Table, spec: TrialSpec) -> GameResult:
        return await self._interrogation(table, spec).run()

    async def resume(self, table: Table, spec: TrialSpec, *, started_at: float) -> GameResult:
        """Go on with a live game whose table holds what was said so far (the arena's takeover
        of a game whose server process died): turns and the clock follow from that."""
        return await self._interrogation(table, spec).run(resume_from=started_at)

    def _interrogation(self, table: Table, spec: TrialSpec) -> Interrogation:
        sides = []
        for seat, info in spec.params["witnesses"].items():
            agent = table.seats[seat].agent
            facts = WitnessFacts.from_json(info["facts"])
            prompt: WitnessPrompt | None = None
            common = dict(
                facts=facts,
                time_limit_s=self.cfg.time_limit_s,
                max_chars=self.cfg.max_chars,
                three_party=len(spec.params["witnesses"]) == 2,
            )
            if info["human"] and not is_person(agent):
                prompt = WitnessPrompt(persona="none", stand_in=True, **common)  # type: ignore[arg-type]
            elif not info["human"] and info["persona"] != "none" and not _is_eliza(agent):
                prompt = WitnessPrompt(persona=info["persona"], **common)  # type: ignore[arg-type]
            sides.append(WitnessSide(seat, info["label"], bool(info["human"]), prompt))
        live = any(is_person(s.agent) for s in table.seats.values())
        return Interrogation(table, self.rules(live), sides, seed=spec.seed)

    def identity(self) -> dict[str, Any]:
        prompts = {
            name: builtin_prompt(name)
            for name in (
                "interrogator_three_party",
                "interrogator_two_party",
                "interrogator_verdict_side",
                "interrogator_verdict_kind",
                "interrogator_confidence",
            )
        }
        return {"game": self.name, "prompts": prompts, "witness": witness_identity()}

    def study_game(
        self,
        spec: TrialSpec,
        result: GameResult,
        *,
        seat_kinds: Mapping[str, str],
        messages: Sequence[Spoken],
        started_at: float | None = None,
    ) -> StudyGame:
        return study_game(
            spec, result, seat_kinds=seat_kinds, messages=messages, started_at=started_at
        )
