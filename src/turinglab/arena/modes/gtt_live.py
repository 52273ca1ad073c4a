"""One GTT game in the arena (modes in arena/modes/gtt_mode.py): the engine's game at a table,
a person in one seat (or watching), and the one frame each viewer gets, `GTTState`.

The state is rebuilt from the messages shown so far whenever one more is, so a refresh shows
everything so far and a client that only renders the last state cannot drift. A message is
shown once the store has committed it (the commit gate, arena/core/live.py), and the end once it is
saved. What a person sees is what their seat sees at the table, with two changes: the game's
instructions to the models (prompts) are never sent, and the actor is shown the distinguisher's
first message, which a model receives inside its instruction. Who X was, and the name of any
model the viewer is not told about, come only with the end.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from turinglab.agents.human import MESSAGE, HumanAgent, HumanInput
from turinglab.arena.core import frames as F
from turinglab.arena.core.chat_text import clean
from turinglab.arena.core.live_reveal import flagged_text
from turinglab.arena.core.modes import ArenaMode
from turinglab.arena.core.participants import Participant
from turinglab.arena.core.person_view import InputRejected, PersonView
from turinglab.arena.core.state_game import StateFrameGame
from turinglab.games.control_log import VerdictGiven
from turinglab.games.events import GameEvent, MessageSaid
from turinglab.games.gtt import ANSWERED, DISTINGUISHER, UNKNOWN, GTTRules
from turinglab.games.gtt_plan import gtt_trial
from turinglab.games.query_phase import PHASE as STUDY_PHASE
from turinglab.games.query_phase import SPECIMEN
from turinglab.games.spec import GameResult, Judgement
from turinglab.games.table import GAME, MAIN, TranscriptMessage

SPECTATOR = "spectator"  # the seat a watcher of an AI-only game is recorded in; never addressed
TIME_LIMIT_S = 1800.0  # a game nobody finishes is flagged after this long
STOP = "STOP"  # how the querier ends a study chat (games/query_phase.py)
ANSWERS = {"target": "<answer>1</answer>", "imitator": "<answer>0</answer>"}
FLAGGED_TEXT = (
    "Something went wrong on our side (a model failed or time ran out); this game will not "
    "count. Thank you for playing."
)

Role = Literal["distinguisher", "actor", "spectator"]
ROLE_OF_SEAT: dict[str, Role] = {
    DISTINGUISHER: "distinguisher",
    UNKNOWN: "actor",
    SPECTATOR: "spectator",
}


@dataclass(frozen=True)
class GTTArenaMode(ArenaMode):  # here, not in gtt_mode.py: the live game reads its rules
    rules: GTTRules = field(default_factory=GTTRules)


class GTTLiveGame(StateFrameGame):
    """A live GTT game: the game runs unchanged; this class only routes and renders."""

    mode: GTTArenaMode  # its kit binds this class to the GTT modes (mode_kits.py)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.trial = gtt_trial(self.spec)
        self.rules: GTTRules = self.mode.rules
        self.pending: set[str] = set()  # seats whose message the game has not taken yet
        self.decision: Judgement | None = None  # the person's verdict form
        self.shown: list[TranscriptMessage] = []  # the table's messages, as far as stored

    # ---- seats -----------------------------------------------------------------------------

    def _view(self, seat: str, person: Participant, human: HumanAgent) -> PersonView:
        # The base class's two roles only matter to its own routing, which this class replaces.
        if seat == DISTINGUISHER:
            return PersonView(seat, person, human, "interrogator", {}, {})
        return PersonView(seat, person, human, "witness", {}, {})

    def seat_matters(self, view: PersonView) -> bool:
        """One person with models: the game is played for them (a spectator too: nobody left
        to watch, so no more model calls), until it ends, or once the distinguisher has given
        their verdict (the game ends on it)."""
        return self.result is None and self.decision is None

    def departed_role(self, view: PersonView) -> str:
        return ROLE_OF_SEAT[view.seat]

    def _name(self, agent: str) -> str:
        return self.display_names.get(agent, agent)

    @property
    def target(self) -> str:
        return self._name(self.trial.target)

    # ---- what the game does ----------------------------------------------------------------

    def show(self, event: GameEvent, to: tuple[str, ...]) -> None:
        """Everything a viewer sees is built from the messages (whoever they were for)."""
        if isinstance(event, MessageSaid):
            self.shown.append(event.message)
            self.pending.discard(event.message.sender)
            if event.message.sender in self.views:
                self._message_shown(event.message.sender)  # its input is acknowledged
            self._push()

    def time_left(self) -> float:
        """From the game's start: one taken over from a process that died keeps its stored
        start (takeover.rebuilt) and the seconds its clock stood still, so it has the time it
        had."""
        return TIME_LIMIT_S - (self.clock.now() - self.started_at)

    def start(self) -> None:
        # Before any input is taken (a rebuilt game's people send theirs as soon as it is
        # open): what its earlier owners decided (takeover.restore read it back).
        self._carry_over()
        super().start()

    async def _run(self) -> None:
        result = await self._play(max(0.0, self.time_left()), "arena: the game ran out of time")
        if self.decision is not None and result.status == ANSWERED:
            result.judgements.append(self.decision)
        if self.gate is not None:  # everything said, and the end, stored before it is shown
            result = await self._saved(result)
        self._ended(result)
        self._push()
        self._on_finish(self)

    def _carry_over(self) -> None:
        """A game taken over: what its earlier owners were told that its messages do not say
        (their control log, read back by takeover.restore): the person's verdict form (the
        inputs they applied are StateFrameGame's). A verdict whose answer never landed is
        given to the game now, as if the person's input had just arrived."""
        for logged in self.controls.log.entries:
            event = logged.event
            if isinstance(event, VerdictGiven) and event.seat in self.views:
                self.decision = _judgement(event)
                if not any(m.sender == event.seat for m in self.shown[logged.after_seq :]):
                    self._give(self.views[event.seat], ANSWERS[event.choice])

    def already_over(self, result: GameResult, told: Mapping[str, str | None]) -> None:
        self._keep_told(told)
        self._ended(result)  # the end state, when asked (snapshot); nothing sent or counted

    # ---- state -----------------------------------------------------------------------------

    def _push(self) -> None:
        for view in self.views.values():
            view.send(self._state(view))

    def snapshot(self, participant: Participant) -> F.GTTState:  # type: ignore[override]
        return self._state(self.view_of(participant))

    def _turn(self, seat: str) -> tuple[str, Literal["study", "test"] | None]:
        """(phase, chat): whether the game waits for this seat now, and in which chat."""
        if self.result is not None:
            return "ended", None
        seen = [m for m in self.shown if seat in m.visible_to]
        if seat in self.pending or not seen or seen[-1].sender == seat:
            return "waiting", None
        last = seen[-1]
        if last.phase == STUDY_PHASE:
            return "writing", "study"
        told = [m for m in seen if m.sender == GAME and m.phase == MAIN]
        if last.sender == GAME and len(told) > 1:  # after the opening: the game asks to decide
            return "verdict", "test"
        return "writing", "test"

    def _state(self, view: PersonView) -> F.GTTState:
        role = ROLE_OF_SEAT[view.seat]
        phase, chat = ("ended", None) if self.result is not None else ("watching", None)
        if role != "spectator":
            phase, chat = self._turn(view.seat)
        said = sum(
            1 for m in self.shown if m.sender == view.seat and m.phase == MAIN
        )  # the distinguisher's messages so far (the verdict is one more)
        judge = role == "distinguisher"
        return F.GTTState(
            game=self.id,
            mode=self.mode.name,
            title=self.mode.title,
            practice=self.mode.solo,
            role=role,
            brief=self._brief(role),
            target=None if role == "actor" else self.target,
            phase=phase,  # type: ignore[arg-type]
            chat=chat,
            can_stop=phase == "writing" and chat == "study",
            can_decide=judge and (phase == "verdict" or (chat == "test" and said >= 1)),
            turns_left=max(0, self.rules.max_distinguisher_turns - said) if judge else None,
            max_chars=self.mode.max_chars,
            chats=self._chats(view.seat, role),
            reveal=self._ending(role, self._notes.get(view.seat)),
        )

    def _brief(self, role: Role) -> str:
        b, study = self.target, self.rules.max_specimen_turns
        turns = self.rules.max_distinguisher_turns
        if role == "distinguisher":
            return (
                f"First study {b}: chat with a fresh copy of it (at most {study} messages), then "
                f"press “Done studying”. Then you chat with an unknown interlocutor: with "
                f"probability ½ it is {b}, otherwise another AI model told to imitate {b}. You "
                f"write first, at most {turns} messages. Then decide: {b}, or an imitator?"
            )
        if role == "actor":
            return (
                "An AI model, the judge, will chat with you. It thinks you may be a fresh copy "
                "of itself, or another model imitating it. Make it believe you are its own "
                f"model: answer as it would. First study it: chat with a fresh copy of the "
                f"judge's model (at most {study} messages), then press “Done studying”. Then the "
                "judge writes first; it decides when it has seen enough."
            )
        actor = self._name(self.trial.actor)
        other = f"another {b} told to imitate it" if actor == b else f"{actor} told to imitate {b}"
        studies = (
            f" An imitator first studies a fresh {b} (the study chat)."
            if self.trial.variant == "gttq"
            else ""
        )
        return (
            f"{b} is the judge. It chats with X: with probability ½ a fresh {b}, otherwise "
            f"{other}.{studies} Watch, guess, and see the answer at the end."
        )

    def _chats(self, seat: str, role: Role) -> list[F.GTTChat]:
        study: list[F.GTTLine] = []
        test: list[F.GTTLine] = []
        first = next((m for m in self.shown if m.sender == DISTINGUISHER and m.phase == MAIN), None)
        for m in self.shown:
            if role != "spectator" and seat not in m.visible_to:
                continue
            lines = study if m.phase == STUDY_PHASE else test
            if m.sender != GAME:
                sender = self._sender(seat, role, m)
                lines.append(F.GTTLine(n=len(lines), sender=sender, text=m.text, at=m.created_at))
            elif seat == UNKNOWN and m.phase == MAIN and first is not None and not test:
                # The actor's instruction carries the distinguisher's first message: show that.
                lines.append(F.GTTLine(n=0, sender="them", text=first.text, at=first.created_at))
        titles = {
            "distinguisher": (f"Study: {self.target}", f"Test: {self.target} or an imitator?"),
            "actor": ("Study: a fresh copy of the judge", "The judge"),
            "spectator": (f"Study: the imitator and a fresh {self.target}", "The judge and X"),
        }[role]
        chats = []
        if study or (role != "spectator" and self.trial.variant in ("gdgtt", "gttq")):
            chats.append(F.GTTChat(name="study", title=titles[0], lines=study))
        chats.append(F.GTTChat(name="test", title=titles[1], lines=test))
        return chats

    def _sender(self, seat: str, role: Role, msg: TranscriptMessage) -> F.GTTSender:
        if role != "spectator":
            return "you" if msg.sender == seat else "them"
        if msg.phase == STUDY_PHASE:
            return "specimen" if msg.sender == SPECIMEN else "querier"
        return "judge" if msg.sender == DISTINGUISHER else "unknown"

    def _ending(self, role: Role, note: str | None = None) -> F.GTTReveal | None:
        result = self.result
        if result is None:
            return None
        t = self.trial
        b = self.target
        actor = "you" if role == "actor" else self._name(t.actor)
        unknown = b if t.x_is_target else f"{actor} imitating {b}"
        verdict = result.verdict
        judge = "you" if role == "distinguisher" else self._name(t.distinguisher)
        if role == "actor":
            outcome = {
                1: f"You fooled {judge}: it took you for its own model.",
                0: f"{judge} saw through you: it said you are a different model.",
            }.get(verdict if verdict is not None else -1, f"{judge} gave no verdict.")
        elif verdict is None:
            outcome = f"No verdict was given. X was {unknown}."
        else:
            said = b if verdict == 1 else "an imitator"
            who = "You" if role == "distinguisher" else judge
            right = "right" if result.correct else "wrong"
            outcome = f"{who} said “{said}”, which is {right}: X was {unknown}."
        flagged = note or flagged_text(result, FLAGGED_TEXT)
        return F.GTTReveal(
            target=b,
            unknown=unknown,
            imitator=not t.x_is_target,
            judge=judge,
            verdict=verdict,
            correct=result.correct,
            outcome=outcome,
            flagged=flagged,
        )

    # ---- what people do --------------------------------------------------------------------

    def handle(self, participant: Participant, frame: F.ClientFrame) -> None:
        self.handle_once(participant, frame, self._input)

    def _input(self, view: PersonView, frame: F.ClientFrame) -> None:
        if self.result is not None:
            raise InputRejected("game-over", "This game has ended.")
        if view.seat == SPECTATOR:
            raise InputRejected("spectator", "You are watching; the models play this game.")
        if isinstance(frame, F.Typing):
            return  # a model cannot see anyone typing
        state = self._state(view)
        if isinstance(frame, F.SendMessage):
            self._say(view, frame, state)
        elif isinstance(frame, F.EndGame):
            if not state.can_stop:
                raise InputRejected("not-now", "There is no study chat to end now.")
            self._ack_when_said()
            self._give(view, STOP)
        elif isinstance(frame, F.Verdict):
            if not state.can_decide:
                raise InputRejected("not-now", "You cannot give a verdict now.")
            if frame.choice not in ANSWERS:
                raise InputRejected("bad-verdict", "Choose 'target' or 'imitator'.")
            given = VerdictGiven(
                view.seat,
                frame.choice,
                float(frame.confidence),
                clean(frame.reason).strip(),
                self.clock.now(),
            )
            # Logged before the answer it becomes is said (the store keeps them in that
            # order): a process taking the game over knows the form whatever landed after.
            self.controls.record(given)
            self.decision = _judgement(given)
            self._give(view, ANSWERS[frame.choice])
        else:
            raise InputRejected("not-now", "That is not part of this game.")

    def _say(self, view: PersonView, frame: F.SendMessage, state: F.GTTState) -> None:
        if state.phase != "writing":
            raise InputRejected("wait", "Please wait: it is not your turn to write.")
        if frame.channel != state.chat:
            raise InputRejected("bad-channel", f"Write in the {state.chat} chat now.")
        text = self._text(frame)
        if state.role == "distinguisher" and "<answer" in text.lower():
            raise InputRejected("no-answer-tags", "Give your verdict with the verdict buttons.")
        self._ack_when_said()
        self._give(view, text)

    def _give(self, view: PersonView, text: str) -> None:
        """Hand the game the person's next message; a second one waits until it is taken."""
        self.pending.add(view.seat)
        view.agent.push(HumanInput(MESSAGE, text, channel=MAIN))
        view.send(self._state(view))


def _judgement(given: VerdictGiven) -> Judgement:
    return Judgement(
        judge=given.seat,
        kind="gtt-verdict",
        verdict=given.choice,
        confidence=given.confidence,
        reason=given.reason,
        created_at=given.at,
    )
