"""The Strong Turing Test (Schrittwieser 2024; SPEC §3): each turn the investigator's message
goes to an AI system and one or more humans; each replies without seeing the others; the
investigator sees the replies in a seeded random order under neutral labels ("Reply 1", ...)
and prefers one, or declares a tie; then every participant is shown the chosen reply and all
replies. Any number of turns.

Seats: `investigator`, `system`, `human_1` … `human_k`. People (games/people.py) type their messages
and preferences; any agent can play any seat (stand-ins for humans are marked "stand-in").
A person investigator may end the session early with an "end" input. Live sessions flag on an
AI seat's missed deadline, as the interrogation games do; batch sessions propagate errors.

A session is a fold over its messages: each step of a turn is a message (the question, each
reply, the investigator's choice, the result), and the order is drawn from the trial's seed, so
`resume` (a live session taken over after its process died) plays the same loop over the
replayed table: every step already stored is taken from it, not asked again, and the session
goes on from the first step that is not.
"""

from __future__ import annotations

import asyncio
import itertools
import random
import re
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from turinglab.agents.base import Agent, ChatMessage, ImagePart
from turinglab.agents.human import MESSAGE, HumanInput
from turinglab.games.clock import REAL_CLOCK, Clock, SimulatedClock
from turinglab.games.events import (
    GameFlagged,
    InputRefused,
    PreferenceAsked,
    RepliesGiven,
    ReplyChosen,
    Revealed,
    SideRevealed,
)
from turinglab.games.interrogation import message_counts
from turinglab.games.interrogation_setup import seed_of
from turinglab.games.kinds import (
    CHOOSES_CLOCK,
    PREFERENCE_ROWS,
    RESUMABLE,
    GameContext,
    GameKind,
    register,
)
from turinglab.games.live import MissedCall, call_seat
from turinglab.games.people import Person, is_person, person_at
from turinglab.games.spec import FINISHED, FLAGGED, GameResult, Judgement, TrialSpec
from turinglab.games.table import GAME, Seat, Table, TranscriptMessage
from turinglab.prompts import builtin_prompt, render

INVESTIGATOR = "investigator"
SYSTEM = "system"
TIE = "tie"
NO_PREFERENCE = "no-preference"
UNPARSEABLE_PREFERENCE = "unparseable-preference"
PROMPTS = (
    "investigator_strong",
    "investigator_strong_next",
    "investigator_strong_choose",
    "respondent_strong",
    "respondent_strong_human",
)


class StrongExperiment(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    game: Literal["strong"]
    investigators: list[str] = Field(min_length=1)
    systems: list[str] = Field(min_length=1, description="the AI systems under test")
    humans: list[str] = Field(min_length=1, description="people or stand-ins; all in each session")
    stand_ins: list[str] = Field(default_factory=list)
    turns: int = Field(default=3, ge=1, description="turns per session (a person may end early)")
    n: int = Field(default=1, ge=1, description="sessions per investigator × system")
    seed: int = 0
    max_chars: int = Field(default=600, ge=1, description="length asked of AI replies")
    message_deadline_s: float = Field(default=120.0, gt=0, description="per AI call, live")
    input_timeout_s: float = Field(default=600.0, gt=0, description="wait for a person, live")

    @model_validator(mode="after")
    def _distinct(self) -> StrongExperiment:
        clash = set(self.systems) & set(self.humans)
        if clash:
            raise ValueError(f"agents both system and human: {', '.join(sorted(clash))}")
        if len(set(self.humans)) != len(self.humans):
            raise ValueError("humans: an agent is listed twice")
        return self

    def agent_names(self) -> list[str]:
        return list(dict.fromkeys([*self.investigators, *self.systems, *self.humans]))


class _Over(Exception):
    """The session ends before its last turn (a person ended it or stopped answering)."""

    def __init__(self, status: str, reason: str) -> None:
        super().__init__(reason)
        self.status = status


class StrongGame:
    name = "strong"

    def __init__(self, cfg: StrongExperiment, context: GameContext) -> None:
        self.cfg = cfg
        self.context = context

    def plan(self) -> list[TrialSpec]:
        cfg = self.cfg
        specs: list[TrialSpec] = []
        for investigator, system in itertools.product(cfg.investigators, cfg.systems):
            for i in range(cfg.n):
                seats = {INVESTIGATOR: investigator, SYSTEM: system}
                seats.update({f"human_{k + 1}": h for k, h in enumerate(cfg.humans)})
                specs.append(
                    TrialSpec(
                        index=len(specs),
                        key=f"{investigator}|{system}#{i}",
                        game=self.name,
                        seed=seed_of(self.name, cfg.seed, investigator, system, i),
                        seats=seats,
                        params={"turns": cfg.turns},
                    )
                )
        return specs

    def seats(self, spec: TrialSpec, agents: Mapping[str, Agent]) -> dict[str, Seat]:
        out = {}
        for seat_id, name in spec.seats.items():
            agent = agents[name]
            if is_person(agent):
                kind = "human"
            elif name in self.cfg.stand_ins:
                kind = "stand-in"
            else:
                kind = self.context.agent_kinds.get(name, "agent")
            out[seat_id] = Seat(seat_id, name, agent, kind)
        return out

    def clock_for(self, seats: Mapping[str, Seat]) -> Clock:
        if any(is_person(s.agent) for s in seats.values()):
            return REAL_CLOCK
        return SimulatedClock()

    def identity(self) -> dict[str, Any]:
        return {"game": self.name, "prompts": {p: builtin_prompt(p) for p in PROMPTS}}

    async def play(self, table: Table, spec: TrialSpec) -> GameResult:
        return await _Session(table, spec, self.cfg).run()

    async def resume(self, table: Table, spec: TrialSpec, *, started_at: float) -> GameResult:
        """Go on from the table's replayed messages (RESUMABLE): the turns they hold are taken
        as played (their events announced again, so a rebuilt page shows them), the rest
        played; the session's duration counts from its first start."""
        return await _Session(table, spec, self.cfg).run(started_at)

    def stt_rows(self, spec: TrialSpec, result: GameResult) -> list[dict[str, Any]]:
        """The session as rows of the STT preference file (turinglab.human.strong)."""
        respondents = [s for s in spec.seats if s != INVESTIGATOR]
        sides = ";".join(spec.seats[s] for s in respondents)
        rows = []
        for j in result.judgements:
            if j.kind != "preference":
                continue
            rows.append(
                {
                    "session": spec.key,
                    "turn": j.turn,
                    "investigator": spec.seats[INVESTIGATOR],
                    "system": spec.seats[SYSTEM],
                    "choice": TIE if j.tie else spec.seats[str(j.choice)],
                    "sides": sides,
                }
            )
        return rows


class _Session:
    def __init__(self, table: Table, spec: TrialSpec, cfg: StrongExperiment) -> None:
        self.table = table
        self.spec = spec
        self.cfg = cfg
        self.respondents = [s for s in table.seats if s != INVESTIGATOR]
        self.everyone = tuple(table.seats)
        self.live = any(is_person(s.agent) for s in table.seats.values())
        self.deadline = cfg.message_deadline_s if self.live else None

    def _person(self, seat: str) -> Person | None:
        return person_at(self.table.seats, seat)

    async def run(self, started_at: float | None = None) -> GameResult:
        started = self.table.clock.now() if started_at is None else started_at
        judgements: list[Judgement] = []
        orders: list[list[str]] = []
        status, reason = FINISHED, "turns"
        try:
            for turn in range(1, self.cfg.turns + 1):
                judgement, order = await self._turn(turn)
                judgements.append(judgement)
                orders.append(order)
        except _Over as over:
            status = over.status if over.status != FINISHED else FINISHED
            reason = str(over)
        except MissedCall as missed:
            self.table.announce(GameFlagged(f"the session was stopped: {missed}"))
            return GameResult(
                status=FLAGGED,
                judgements=judgements,
                flags=[str(missed)],
                details=self._details("flagged", started, orders),
            )
        sides = (SideRevealed(s, self.table.seats[s].kind) for s in self.respondents)
        self.table.announce(Revealed(tuple(sides)))
        return GameResult(
            status=status, judgements=judgements, details=self._details(reason, started, orders)
        )

    def _details(self, reason: str, started: float, orders: list[list[str]]) -> dict[str, Any]:
        return {
            "end_reason": reason,
            "turns_played": len(orders),
            "orders": orders,
            "duration_s": round(self.table.clock.now() - started, 3),
            "message_counts": message_counts(self.table),
        }

    def _stored(self, turn: int) -> dict[tuple[str, str], TranscriptMessage]:
        """The steps of `turn` already on the table (a resumed session's replayed messages),
        by (sender, phase); empty for a turn not yet played."""
        phases = (f"turn-{turn}", f"choose-{turn}", f"result-{turn}")
        return {(m.sender, m.phase): m for m in self.table.messages if m.phase in phases}

    async def _turn(self, turn: int) -> tuple[Judgement, list[str]]:
        stored = self._stored(turn)
        asked = stored.get((INVESTIGATOR, f"turn-{turn}"))
        if asked is not None:
            question, images = asked.text, asked.images
        else:
            question, images = await self._investigator_message(turn, stored)
            self.table.post(
                INVESTIGATOR, question, visible_to=self.everyone, phase=f"turn-{turn}",
                images=images,
            )  # fmt: skip
        before = {s: m.text for (s, p), m in stored.items() if p == f"turn-{turn}"}
        texts = await asyncio.gather(*(self._answer(seat, before) for seat in self.respondents))
        replies = dict(zip(self.respondents, texts, strict=True))
        for seat, text in replies.items():  # each reply, so far, seen by its author only
            if seat not in before:
                self.table.post(seat, text, visible_to=(seat,), phase=f"turn-{turn}")
        order = list(self.respondents)
        random.Random(seed_of(self.spec.seed, "order", turn)).shuffle(order)
        listing = "\n".join(f"Reply {k + 1}: {replies[s]}" for k, s in enumerate(order))
        # For a transport (the arena): the replies in the order shown, by seat (never sent on).
        self.table.announce(RepliesGiven(turn, tuple(order), replies))
        if (GAME, f"choose-{turn}") not in stored:
            ask = render(builtin_prompt("investigator_strong_choose"), turn=turn, replies=listing)
            self.table.tell(INVESTIGATOR, ask, phase=f"choose-{turn}")
        chose = stored.get((INVESTIGATOR, f"choose-{turn}"))
        labels = tuple(str(k) for k in range(1, len(order) + 1))
        choice = None if chose is None else _read_preference(chose.text, labels)
        if choice is None:  # not chosen before the takeover (or not readable): asked now
            choice, raw = await self._preference(turn, len(order))
            self.table.post(INVESTIGATOR, raw, visible_to=(INVESTIGATOR,), phase=f"choose-{turn}")
        chosen = None if choice == TIE else order[int(choice) - 1]
        outcome = "a tie" if chosen is None else f"Reply {choice}"
        self.table.announce(ReplyChosen(turn, choice, chosen))
        result = stored.get((GAME, f"result-{turn}"))
        if result is None:
            self.table.post(
                GAME,
                f"Turn {turn}: the investigator chose {outcome}.\n{listing}",
                visible_to=self.everyone,
                phase=f"result-{turn}",
            )
        judgement = Judgement(
            judge=INVESTIGATOR,
            kind="preference",
            choice=chosen,
            tie=chosen is None,
            turn=turn,
            created_at=self.table.clock.now() if result is None else result.created_at,
            details={"order": order, "label": choice},
        )
        return judgement, order

    async def _investigator_message(
        self, turn: int, stored: Mapping[tuple[str, str], TranscriptMessage]
    ) -> tuple[str, tuple[ImagePart, ...]]:
        person = self._person(INVESTIGATOR)
        if person is not None:
            while True:
                item = await self._wait_input(person)
                if item.kind == "end" and turn > 1:
                    raise _Over(FINISHED, "investigator-ended")
                if item.kind == MESSAGE and item.text.strip():
                    return item.text, tuple(item.data.get("images", ()))
                self.table.show(InputRefused("send a message for this turn"), INVESTIGATOR)
        name = "investigator_strong" if turn == 1 else "investigator_strong_next"
        intro = render(
            builtin_prompt(name), turns=self.cfg.turns, turn=turn, max_chars=self.cfg.max_chars
        )
        if (GAME, f"turn-{turn}") not in stored:  # told before a takeover: not told twice
            self.table.tell(INVESTIGATOR, intro, phase=f"turn-{turn}")
        reply = await call_seat(
            self.table, INVESTIGATOR, self.table.view(INVESTIGATOR), deadline_s=self.deadline
        )
        return reply.text.strip(), ()

    async def _answer(self, seat: str, before: Mapping[str, str]) -> str:
        return before[seat] if seat in before else await self._reply(seat)

    async def _reply(self, seat: str) -> str:
        person = self._person(seat)
        if person is not None:
            while True:
                item = await self._wait_input(person)
                if item.kind == MESSAGE and item.text.strip():
                    return item.text
                self.table.show(InputRefused("send your reply to this turn"), seat)
        human = seat != SYSTEM
        prompt = render(
            builtin_prompt("respondent_strong_human" if human else "respondent_strong"),
            max_chars=self.cfg.max_chars,
        )
        history = [ChatMessage("user", prompt), *self.table.view(seat)]
        reply = await call_seat(self.table, seat, history, deadline_s=self.deadline)
        return reply.text.strip()

    async def _preference(self, turn: int, n: int) -> tuple[str, str]:
        labels = tuple(str(k) for k in range(1, n + 1))
        person = self._person(INVESTIGATOR)
        if person is not None:
            self.table.show(PreferenceAsked(turn, n), INVESTIGATOR)
            while True:
                item = await self._wait_input(person)
                data = item.data
                if item.kind == "preference" and data.get("tie"):
                    return TIE, TIE
                if item.kind == "preference" and str(data.get("reply")) in labels:
                    return str(data["reply"]), str(data["reply"])
                refused = InputRefused(f"choose a reply 1–{n} or a tie")
                self.table.show(refused, INVESTIGATOR)
        choices = (*labels, TIE)
        history = self.table.view(INVESTIGATOR)
        reply = await call_seat(
            self.table, INVESTIGATOR, history, deadline_s=self.deadline, choices=choices
        )
        choice = _read_preference(reply.text, labels)
        if choice is None:
            self.table.post(
                INVESTIGATOR, reply.text, visible_to=(INVESTIGATOR,), phase=f"choose-{turn}"
            )
            raise _Over(
                UNPARSEABLE_PREFERENCE,
                f"turn {turn}: no reply number or tie in {reply.text[:80]!r}",
            )
        return choice, reply.text

    async def _wait_input(self, person: Person) -> HumanInput:
        timer = asyncio.ensure_future(self.table.clock.sleep(self.cfg.input_timeout_s))
        item = asyncio.ensure_future(person.next_input())
        try:
            await asyncio.wait({timer, item}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:  # the game stopped here (taken over): nothing left waiting
            item.cancel()
            raise
        finally:
            timer.cancel()
        if not item.done():
            item.cancel()
            raise _Over(NO_PREFERENCE, f"{person.participant} did not answer in time")
        return item.result()


def _read_preference(text: str, labels: tuple[str, ...]) -> str | None:
    cleaned = text.strip().strip(".\"'*").lower()
    if cleaned == TIE:
        return TIE
    match = re.fullmatch(r"(?:reply\s*)?(\d+)", cleaned)
    return match.group(1) if match and match.group(1) in labels else None


def strong_game(cfg: StrongExperiment, context: GameContext) -> StrongGame:
    return StrongGame(cfg, context)


KIND = register(
    GameKind(
        "strong",
        StrongExperiment,
        strong_game,
        arena_modes=("strong", "strong-practice", "strong-respond"),
        capabilities=frozenset({CHOOSES_CLOCK, PREFERENCE_ROWS, RESUMABLE}),
    )
)
