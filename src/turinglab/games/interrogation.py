"""Interrogation games with people: an interrogator chats with one witness (two-party) or two
(three-party) on one channel per witness, then says who is human. Event-driven: the game
waits on whichever happens first — a person's input, an AI reply, the clock running out.

Rules (Jones & Bergen; SPEC §2):
- Turns alternate on each channel: the interrogator writes first; after writing to a witness
  it waits for that witness's answer before writing to it again, and a witness answers once
  per interrogator message (never twice in a row, never first). The interrogator may address
  either witness whenever that witness's channel is its turn.
- A witness sees only its own channel (each message is visible to its sender and the other
  party of that channel, nothing else).
- A message longer than `max_chars` is refused with a reason delivered to the sender; it is
  never truncated. A person simply types again. An AI witness is asked once more with the
  reason; a second over-long reply flags the game. An AI interrogator's refused message is
  told to it and it is asked again (at most twice in a row; then it waits for the next event).
- The game ends at the time limit, when the interrogator ends it (or gives the verdict early),
  or, for AI interrogators, after `max_interrogator_messages` messages.
- Verdict: the side judged human, a confidence 0–100 and a reason, validated; a person's bad
  verdict is refused with the reason and they try again. An AI interrogator chooses the side by
  forced choice; if no side can be read the game ends "unparseable-verdict" (never a guess).
- Live games (a person at the table): an AI seat that misses the per-call deadline or fails
  ends the game FLAGGED, and the people are told. Batch games propagate errors to the runner.
- After the verdict every person at the table is told which seat was which.
"""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from turinglab.agents.base import AgentReply, ChatMessage
from turinglab.agents.human import MESSAGE, HumanInput
from turinglab.games.events import (
    GameFlagged,
    GameStarted,
    InputRefused,
    Revealed,
    SideRevealed,
    TalkEnded,
    Typing,
    VerdictAsked,
)
from turinglab.games.interrogation_text import (
    INTERROGATOR,
    Refused,
    parse_action,
    read_choice,
    read_confidence,
    unaddressed,
    validate_verdict,
)
from turinglab.games.live import MissedCall, call_seat
from turinglab.games.people import is_person, person_at
from turinglab.games.spec import FINISHED, FLAGGED, GameResult, Judgement
from turinglab.games.table import GAME, Table, TranscriptMessage
from turinglab.games.typing_delay import TypingDelay, reply_draw
from turinglab.games.typing_timeline import ShownTyping, TypingPlan
from turinglab.games.witness import WitnessPrompt
from turinglab.games.witness_reply import clean_reply
from turinglab.prompts import builtin_prompt, render

CONTROL = "control"  # channel of the game's own instructions and the verdict exchange
REFUSED = "refused"  # phase of an AI interrogator's refused message and the reason
NO_VERDICT = "no-verdict"
# The game's note to a person interrogator who ended the talk early. Kept in the transcript as
# any message is, so a game rebuilt from it elsewhere (arena/core/takeover.py) goes on to the
# verdict, not back to the talk; shown to them (and the verdict asked) once it is stored.
TALK_ENDED = "talk-ended"
YOU_ENDED = "You ended the conversation."
UNPARSEABLE_VERDICT = "unparseable-verdict"
_MAX_AI_REFUSALS = 2


@dataclass(frozen=True)
class InterrogationRules:
    time_limit_s: float = 300.0
    max_chars: int = 300
    deadline_s: float = 60.0  # per AI call, retries included, in live games
    typing_delay: TypingDelay | None = None  # None: messages appear as soon as they exist
    max_interrogator_messages: int = 10  # AI interrogators only; people have the clock
    verdict_timeout_s: float = 120.0
    # AI interrogators in three-party games: each witness gets at least this many of their
    # messages before they may end (the studies' exclusion rule; 0: no such rule).
    min_messages_each: int = 0
    # AI interrogators, three-party: "free" (they choose the witness, as people do) or
    # "alternate" (the game chooses: the waiting witness they have written to least).
    addressing: str = "free"


@dataclass(frozen=True)
class WitnessSide:
    seat: str  # also the name of its channel
    label: str  # how the interrogator names it: "A", "B" (or "" in two-party)
    human: bool  # a person or a stand-in for one
    prompt: WitnessPrompt | None  # None: the agent gets no instructions (people, ELIZA)


@dataclass
class Interrogation:
    table: Table
    rules: InterrogationRules
    witnesses: list[WitnessSide]
    seed: int
    started: float = 0.0
    _waiting: dict[str, bool] = field(default_factory=dict)  # True: the witness's turn
    _sent: Counter[str] = field(default_factory=Counter)
    _refusals: int = 0
    _ai_refusals: int = 0

    @property
    def three_party(self) -> bool:
        return len(self.witnesses) == 2

    def _is_person(self, seat: str) -> bool:
        return is_person(self.table.seats[seat].agent)

    @property
    def live(self) -> bool:
        return any(self._is_person(s) for s in self.table.seats)

    def _deadline(self) -> float | None:
        return self.rules.deadline_s if self.live else None

    def _side(self, seat: str) -> WitnessSide:
        return next(w for w in self.witnesses if w.seat == seat)

    # ---- the game --------------------------------------------------------------------------

    async def run(self, resume_from: float | None = None) -> GameResult:
        """Play the game; with `resume_from` (when it started), go on from what the table
        already holds: whose turn it is on each channel follows from its last message, the
        time left from the start, and an AI witness owed an answer is asked for it."""
        now = self.table.clock.now()
        self.started = now if resume_from is None else resume_from
        if resume_from is not None and ended_by_interrogator(self.table) is not None:
            return await self._finish("interrogator-ended", None)  # before it was rebuilt
        self._waiting = {w.seat: False for w in self.witnesses}
        left = self.rules.time_limit_s - (now - self.started)
        tasks: dict[str, asyncio.Future[Any]] = {
            "timer": asyncio.ensure_future(self.table.clock.sleep(max(0.0, left)))
        }
        if resume_from is None:
            self.table.announce(GameStarted(self.rules.time_limit_s))
        else:
            self._pick_up(tasks)
        for seat in [INTERROGATOR, *(w.seat for w in self.witnesses)]:
            if self._is_person(seat):
                tasks[f"input:{seat}"] = asyncio.ensure_future(self._input(seat))
        if not self._is_person(INTERROGATOR) and not self._at_limit() and self._may_write():
            tasks["ai:interrogator"] = asyncio.ensure_future(self._ai_interrogator_move())
        verdict: Judgement | None = None
        end_reason = self._talk_over() or ""  # resumed at the limit with no answer owed: over
        try:
            while not end_reason:
                done, _ = await asyncio.wait(tasks.values(), return_when=asyncio.FIRST_COMPLETED)
                for tag in sorted(t for t, task in tasks.items() if task in done):
                    task = tasks.pop(tag)
                    outcome = self._handle(tag, task, tasks)
                    if isinstance(outcome, Judgement):
                        verdict, end_reason = outcome, "verdict"
                    elif outcome:
                        end_reason = outcome
                    if end_reason:
                        break
        except MissedCall as missed:
            return self._flag(str(missed))
        except _LongReply as long:
            return self._flag(str(long))
        finally:
            for task in tasks.values():
                task.cancel()
        return await self._finish(end_reason, verdict)

    def _pick_up(self, tasks: dict[str, asyncio.Future[Any]]) -> None:
        """Turns and counts from the messages already said (a resumed game)."""
        for m in self.table.messages:
            if (
                m.sender == GAME
                or m.phase in ("verdict", REFUSED)
                or m.channel not in self._waiting
            ):
                continue
            self._sent[m.sender] += 1
            self._waiting[m.channel] = m.sender == INTERROGATOR
        for seat, owed in self._waiting.items():
            if owed and not self._is_person(seat):
                tasks[f"ai:{seat}"] = asyncio.ensure_future(self._ai_witness_reply(seat))

    def _handle(
        self,
        tag: str,
        task: asyncio.Future[Any],
        tasks: dict[str, asyncio.Future[Any]],
    ) -> str | Judgement | None:
        if tag == "timer":
            return "time"
        kind, seat = tag.split(":", 1)
        if kind == "input":
            tasks[tag] = asyncio.ensure_future(self._input(seat))
            item: HumanInput = task.result()
            if seat == INTERROGATOR:
                return self._interrogator_input(item, tasks)
            self._witness_input(seat, item, tasks)
            return self._talk_over()
        if kind == "ai" and seat == INTERROGATOR:
            action = task.result()
            return self._interrogator_action(action, tasks)
        # an AI (or stand-in) witness's reply, delayed as typed
        text = task.result()
        self._witness_said(seat, text, tasks)
        return self._talk_over()

    async def _input(self, seat: str) -> HumanInput:
        person = person_at(self.table.seats, seat)
        assert person is not None
        return await person.next_input()

    # ---- the interrogator ------------------------------------------------------------------

    def _interrogator_input(
        self, item: HumanInput, tasks: dict[str, asyncio.Future[Any]]
    ) -> str | Judgement | None:
        if item.kind == "end":
            return "interrogator-ended"
        if item.kind == "verdict":
            try:
                return self._verdict_from(item)
            except Refused as refused:
                self._refuse(INTERROGATOR, str(refused), item.channel)
                return None
        if item.kind != MESSAGE:
            self._refuse(INTERROGATOR, f"unknown action {item.kind!r}", item.channel)
            return None
        channel = item.channel or (self.witnesses[0].seat if not self.three_party else "")
        try:
            self._send_to_witness(channel, item.text, tasks)
        except Refused as refused:
            self._refuse(INTERROGATOR, str(refused), channel)
        return None

    def _send_to_witness(
        self, channel: str, text: str, tasks: dict[str, asyncio.Future[Any]]
    ) -> None:
        if channel not in self._waiting:
            names = ", ".join(w.seat for w in self.witnesses)
            raise Refused(f"no witness {channel!r} (choose one of: {names})")
        if self._waiting[channel]:
            raise Refused("wait for the witness to answer before writing to it again")
        self._check_length(text)
        self.table.post(INTERROGATOR, text, visible_to=(INTERROGATOR, channel), channel=channel)
        self._sent[INTERROGATOR] += 1
        self._waiting[channel] = True
        if not self._is_person(channel):
            tasks[f"ai:{channel}"] = asyncio.ensure_future(self._ai_witness_reply(channel))

    def _interrogator_action(
        self,
        action: tuple[str, str, str, str],
        tasks: dict[str, asyncio.Future[Any]],
    ) -> str | None:
        kind, channel, text, raw = action
        try:
            if kind == "end":
                self._may_end()
                return "interrogator-ended"
            if kind == "invalid":
                raise Refused(text)
            self._keeps_balance(channel)
            self._send_to_witness(channel, text, tasks)
            self._ai_refusals = 0
        except Refused as refused:
            # Kept in the AI's own view (not a message to anyone), followed by the reason.
            self._refusals += 1
            self._ai_refusals += 1
            self.table.post(
                INTERROGATOR, raw, visible_to=(INTERROGATOR,), channel=CONTROL, phase=REFUSED
            )
            self.table.tell(INTERROGATOR, f"Not sent: {refused}.", channel=CONTROL, phase=REFUSED)
        if self._at_limit():
            return self._talk_over()
        if self._ai_refusals <= _MAX_AI_REFUSALS and self._may_write():
            tasks["ai:interrogator"] = asyncio.ensure_future(self._ai_interrogator_move())
        return None

    # ---- balance: every witness questioned (AI interrogators, three-party) ------------------

    def _asked(self, seat: str) -> int:
        """The interrogator's messages to `seat` so far (refused attempts not counted)."""
        return sum(
            1
            for m in self.table.messages
            if m.sender == INTERROGATOR and m.channel == seat and m.phase != REFUSED
        )

    def _owed(self) -> dict[str, int]:
        """Messages each witness still needs under `min_messages_each` (0 when the rule
        does not apply: a person interrogates, or one witness)."""
        least = self.rules.min_messages_each
        if not least or not self.three_party or self._is_person(INTERROGATOR):
            return {}
        return {w.seat: max(0, least - self._asked(w.seat)) for w in self.witnesses}

    def _required(self) -> list[str]:
        """Witnesses the interrogator must write to next: its remaining messages are just
        enough for what they are owed."""
        owed = self._owed()
        left = self.rules.max_interrogator_messages - self._sent[INTERROGATOR]
        if not owed or left > sum(owed.values()):
            return []
        return [seat for seat, n in owed.items() if n > 0]

    def _keeps_balance(self, channel: str) -> None:
        required = self._required()
        if required and channel not in required:
            names = " or ".join(f"Witness {self._side(s).label}" for s in required)
            least = self.rules.min_messages_each
            raise Refused(f"write to {names}: each Witness must get at least {least} messages")

    def _may_end(self) -> None:
        short = [s for s, n in self._owed().items() if n > 0]
        if short:
            names = " and ".join(f"Witness {self._side(s).label}" for s in short)
            least = self.rules.min_messages_each
            raise Refused(f"not yet: write to {names} first (at least {least} messages each)")

    def _may_write(self) -> bool:
        """Some witness the interrogator may write to awaits it."""
        free = [seat for seat, waiting in self._waiting.items() if not waiting]
        required = self._required()
        return any(seat in required for seat in free) if required else bool(free)

    def _at_limit(self) -> bool:
        return (
            not self._is_person(INTERROGATOR)
            and self._sent[INTERROGATOR] >= self.rules.max_interrogator_messages
        )

    def _talk_over(self) -> str | None:
        # An AI interrogator at its message limit still hears the answers it is owed.
        if self._at_limit() and not any(self._waiting.values()):
            return "message-limit"
        return None

    async def _ai_interrogator_move(self) -> tuple[str, str, str, str]:
        history = self._interrogator_history(status=True)
        addressed = self._addressed()  # fixed as it is asked: only the interrogator's own
        reply = await call_seat(self.table, INTERROGATOR, history, deadline_s=self._deadline())
        if addressed is None:
            labels = {w.label: w.seat for w in self.witnesses}
            return (*parse_action(reply.text, labels), reply.text)
        # The game chose the witness: a label the model writes anyway is dropped, not obeyed.
        return (*parse_action(unaddressed(reply.text), {"": addressed}), reply.text)

    def _addressed(self) -> str | None:
        """Under "alternate" addressing, the witness the next message goes to: of those
        awaiting the interrogator, the one it has written to least (then the first)."""
        if self.rules.addressing != "alternate" or not self.three_party:
            return None
        free = [w.seat for w in self.witnesses if not self._waiting[w.seat]]
        return min(free, key=self._asked) if free else None

    def _interrogator_history(self, *, status: bool) -> list[ChatMessage]:
        template = "interrogator_three_party" if self.three_party else "interrogator_two_party"
        intro = render(
            builtin_prompt(template),
            max_chars=self.rules.max_chars,
            minutes=f"{self.rules.time_limit_s / 60:g}",
        )
        turns: list[ChatMessage] = [ChatMessage("user", intro)]
        for m in self.table.messages:
            if INTERROGATOR not in m.visible_to:
                continue
            label = self._side(m.channel).label if m.channel in self._waiting else ""
            text = f"{label}: {m.text}" if label else m.text
            turns.append(ChatMessage("assistant" if m.sender == INTERROGATOR else "user", text))
        if status:
            turns.append(ChatMessage("user", self._status()))
        return turns

    def _status(self) -> str:
        left = self.rules.time_limit_s - (self.table.clock.now() - self.started)
        parts = []
        for w in self.witnesses:
            name = f"Witness {w.label}" if w.label else "The Witness"
            parts.append(f"{name} is typing." if self._waiting[w.seat] else f"{name} awaits you.")
        required = [self._side(s).label for s in self._required()]
        addressed = self._addressed()
        if addressed is not None:
            ask = f"Write one line: your message to Witness {self._side(addressed).label}"
            ask += " (the game sends it there)"
            ask += "." if any(self._owed().values()) else ", or END."
        elif self.three_party and required:
            first = " or ".join(f'"{label}: ..."' for label in required)
            ask = f"Write one line: {first}. Each Witness must get at least "
            ask += f"{self.rules.min_messages_each} of your messages."
        elif self.three_party and any(self._owed().values()):
            ask = 'Write one line: "A: ..." or "B: ..." to a Witness who awaits you. Each '
            ask += f"Witness must get at least {self.rules.min_messages_each} of your messages "
            ask += "before you may END."
        elif self.three_party:
            ask = 'Write one line: "A: ..." or "B: ..." to a Witness who awaits you, or END.'
        else:
            ask = "Write your next message to the Witness, or END."
        return f"{' '.join(parts)} Time left: {max(0, int(left))} s. {ask}"

    # ---- witnesses -------------------------------------------------------------------------

    def _witness_input(
        self, seat: str, item: HumanInput, tasks: dict[str, asyncio.Future[Any]]
    ) -> None:
        if item.kind != MESSAGE:
            self._refuse(seat, f"unknown action {item.kind!r}", seat)
            return
        if not self._waiting[seat]:
            self._refuse(seat, "wait for the interrogator's message before answering", seat)
            return
        try:
            self._check_length(item.text)
        except Refused as refused:
            self._refuse(seat, str(refused), seat)
            return
        self._witness_said(seat, item.text, tasks)

    def _witness_said(self, seat: str, text: str, tasks: dict[str, asyncio.Future[Any]]) -> None:
        self.table.post(seat, text, visible_to=(seat, INTERROGATOR), channel=seat)
        self._sent[seat] += 1
        self._waiting[seat] = False
        if (
            not self._is_person(INTERROGATOR)
            and "ai:interrogator" not in tasks
            and not self._at_limit()
            and self._may_write()
        ):
            self._ai_refusals = 0
            tasks["ai:interrogator"] = asyncio.ensure_future(self._ai_interrogator_move())

    async def _ai_witness_reply(self, seat: str) -> str:
        rng = reply_draw(self.seed, seat, self.table.messages)  # keyed by the history: resumable
        if self.rules.typing_delay is None or not self._is_person(INTERROGATOR):
            return await self._ai_witness_text(seat, rng)
        # A person is watching: typing shown on a person's timeline, generation inside it.
        view = self.table.view(seat, channel=seat)
        plan = TypingPlan.draw(self.rules.typing_delay, len(view[-1].content if view else ""), rng)
        shown = ShownTyping(
            plan, self.table.clock, lambda: self.table.show(Typing(seat), INTERROGATOR)
        )
        try:
            text = await self._generate(seat)
            await shown.finish(len(text))
        finally:
            shown.stop()
        return text

    async def _ai_witness_text(self, seat: str, rng: random.Random) -> str:
        """A batch game's witness: its reply, then the paper's delay as game time."""
        view = self.table.view(seat, channel=seat)
        text = await self._generate(seat)
        if self.rules.typing_delay is not None:
            previous = view[-1].content if view else ""
            delay = self.rules.typing_delay.seconds(len(text), len(previous), rng)
            await self.table.clock.sleep(delay)
        return text

    async def _generate(self, seat: str) -> str:
        side = self._side(seat)
        clock = self.table.clock
        view = self.table.view(seat, channel=seat)
        history = side.prompt.history(view, self.started, clock.now()) if side.prompt else view
        reply = await call_seat(self.table, seat, history, deadline_s=self._deadline())
        text = self._as_typed(side, reply)
        if len(text) > self.rules.max_chars:
            note = (
                f"(Not sent: your message had {len(text)} characters; the limit is "
                f"{self.rules.max_chars}. Send a shorter one.)"
            )
            retry = [*history, ChatMessage("assistant", text), ChatMessage("user", note)]
            reply = await call_seat(self.table, seat, retry, deadline_s=self._deadline())
            text = self._as_typed(side, reply)
            if len(text) > self.rules.max_chars:
                raise _LongReply(seat, len(text), self.rules.max_chars)
        return text

    @staticmethod
    def _as_typed(side: WitnessSide, reply: AgentReply) -> str:
        """The reply without echoed labels or prompt lines, never cut mid-word
        (games/witness_reply.py)."""
        names = (side.prompt.facts.name,) if side.prompt else ()
        truncated = reply.extra.get("finish_reason") == "length"
        return clean_reply(reply.text, names=names, truncated=truncated)

    # ---- checks, verdict, ending -----------------------------------------------------------

    def _check_length(self, text: str) -> None:
        if not text.strip():
            raise Refused("the message is empty")
        if len(text) > self.rules.max_chars:
            raise Refused(
                f"the message has {len(text)} characters; the limit is {self.rules.max_chars}"
            )

    def _refuse(self, seat: str, reason: str, channel: str | None) -> None:
        self._refusals += 1
        self.table.show(InputRefused(reason, channel), seat)

    def _verdict_from(self, item: HumanInput) -> Judgement:
        return validate_verdict(
            item.data,
            sides={w.seat: w.label for w in self.witnesses},
            three_party=self.three_party,
            at=self.table.clock.now(),
        )

    async def _finish(self, end_reason: str, verdict: Judgement | None) -> GameResult:
        duration = self.table.clock.now() - self.started
        if end_reason == "interrogator-ended" and self._is_person(INTERROGATOR):
            noted = ended_by_interrogator(self.table)
            if noted is None:
                self.table.tell(INTERROGATOR, YOU_ENDED, phase=TALK_ENDED, channel=CONTROL)
            else:  # ended before a takeover: the talk lasted until then
                duration = noted.created_at - self.started
        self.table.announce(TalkEnded(end_reason))
        status = FINISHED
        try:
            if verdict is None:
                verdict, status = await self._ask_verdict()
        except MissedCall as missed:
            return self._flag(str(missed))
        result = GameResult(status=status, details=self._details(end_reason, duration))
        if verdict is not None:
            result.judgements.append(verdict)
            result.correct, result.verdict = self._score(verdict)
        self.table.announce(self._reveal())
        return result

    async def _ask_verdict(self) -> tuple[Judgement | None, str]:
        if self._is_person(INTERROGATOR):
            return await self._person_verdict()
        return await self._ai_verdict()

    async def _person_verdict(self) -> tuple[Judgement | None, str]:
        agent = person_at(self.table.seats, INTERROGATOR)
        assert agent is not None
        self.table.show(VerdictAsked(tuple(w.seat for w in self.witnesses)), INTERROGATOR)
        timer = asyncio.ensure_future(self.table.clock.sleep(self.rules.verdict_timeout_s))
        item_task: asyncio.Future[HumanInput] | None = None
        try:
            while True:
                item_task = asyncio.ensure_future(agent.next_input())
                await asyncio.wait({timer, item_task}, return_when=asyncio.FIRST_COMPLETED)
                if not item_task.done():
                    item_task.cancel()
                    return None, NO_VERDICT
                item = item_task.result()
                if item.kind != "verdict":
                    self._refuse(INTERROGATOR, "the game is over: give your verdict", None)
                    continue
                try:
                    return self._verdict_from(item), FINISHED
                except Refused as refused:
                    self._refuse(INTERROGATOR, str(refused), None)
        finally:  # also when the game is stopped here (taken over): nothing left waiting
            timer.cancel()
            if item_task is not None:
                item_task.cancel()

    async def _ai_verdict(self) -> tuple[Judgement | None, str]:
        deadline = self._deadline()
        if self.three_party:
            question, choices = builtin_prompt("interrogator_verdict_side"), ("A", "B")
        else:
            question, choices = builtin_prompt("interrogator_verdict_kind"), ("human", "ai")
        self.table.tell(INTERROGATOR, question.strip(), phase="verdict", channel=CONTROL)
        history = self._interrogator_history(status=False)
        reply = await call_seat(
            self.table, INTERROGATOR, history, deadline_s=deadline, choices=choices
        )
        self.table.post(
            INTERROGATOR, reply.text, visible_to=(INTERROGATOR,), channel=CONTROL, phase="verdict"
        )
        choice = read_choice(reply.text, choices)
        if choice is None:
            return None, UNPARSEABLE_VERDICT
        ask = render(builtin_prompt("interrogator_confidence"), verdict=choice)
        self.table.tell(INTERROGATOR, ask, phase="verdict", channel=CONTROL)
        history = self._interrogator_history(status=False)
        reply = await call_seat(self.table, INTERROGATOR, history, deadline_s=deadline)
        self.table.post(
            INTERROGATOR, reply.text, visible_to=(INTERROGATOR,), channel=CONTROL, phase="verdict"
        )
        confidence, reason = read_confidence(reply.text)
        if self.three_party:
            side = next(w.seat for w in self.witnesses if w.label == choice)
            data: dict[str, Any] = {"human": side}
        else:
            data = {"verdict": choice}
        data.update(confidence=confidence, reason=reason)
        judgement = validate_verdict(
            data,
            sides={w.seat: w.label for w in self.witnesses},
            three_party=self.three_party,
            at=self.table.clock.now(),
            confidence_required=False,
        )
        return judgement, FINISHED

    def _score(self, verdict: Judgement) -> tuple[bool, int | None]:
        if self.three_party:
            return self._side(str(verdict.verdict)).human, None
        judged_human = verdict.verdict == "human"
        return judged_human == self.witnesses[0].human, int(judged_human)

    def _flag(self, reason: str) -> GameResult:
        self.table.announce(GameFlagged("the game was stopped: " + reason))
        duration = self.table.clock.now() - self.started
        return GameResult(
            status=FLAGGED, details=self._details("flagged", duration), flags=[reason]
        )

    def _details(self, end_reason: str, duration: float) -> dict[str, Any]:
        return {
            "end_reason": end_reason,
            "duration_s": round(duration, 3),
            "started_at": self.started,
            "message_counts": message_counts(self.table),
            "refusals": self._refusals,
            "human_seats": [w.seat for w in self.witnesses if w.human],
        }

    def _reveal(self) -> Revealed:
        return Revealed(
            tuple(
                SideRevealed(w.seat, self.table.seats[w.seat].kind, w.label, w.human)
                for w in self.witnesses
            )
        )


class _LongReply(Exception):
    def __init__(self, seat: str, length: int, limit: int) -> None:
        super().__init__(f"{seat}: replied twice over the {limit}-character limit ({length})")


def ended_by_interrogator(table: Table) -> TranscriptMessage | None:
    """The game's note that a person interrogator ended the talk, if they did."""
    return next((m for m in table.messages if m.phase == TALK_ENDED), None)


def message_counts(table: Table) -> dict[str, dict[str, int]]:
    """Messages sent per channel and sender (the game's own instructions excluded)."""
    counts: dict[str, Counter[str]] = {}
    for m in table.messages:
        if m.sender != GAME and m.phase not in ("verdict", REFUSED):
            counts.setdefault(m.channel, Counter())[m.sender] += 1
    return {channel: dict(c) for channel, c in counts.items()}
