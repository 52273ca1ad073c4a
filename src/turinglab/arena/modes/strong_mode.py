"""The Strong Turing Test in the arena: the engine's `strong` game (games/strong.py) with people.

A person may be the investigator (their message, with an optional image, goes to the AI system
and every human respondent; the replies come back side by side under "Reply 1", "Reply 2", …
in the game's seeded order; they prefer one or declare a tie) and/or a human respondent (they
answer the investigator's message without seeing the other replies; after the choice everybody
sees the chosen reply and all replies). The end shows each side's win rate.

Unlike the chat games, each person gets one frame, `StrongState`, with everything they may see
now, sent again whenever it changes: the state is small, and a client that only renders the
last state cannot drift. Seat ids, agent names and kinds stay on the server until the end.
The state is built from the game's events as the commit gate lets them through (arena/core/live.py):
a message, and whatever follows it, is shown only once it is stored; the end once it is saved.
A respondent's answer is held by the game until the turn's replies are in: it is logged first
(MessageHeld), so a process taking the session over says it (strong_carry_over.py).
Images are uploaded over HTTP (web/image_routes.py: `POST /arena/image`, decoded and
re-encoded by arena/web/uploads.py, kept per game and person) because a websocket frame is limited
to a few KB; the message frame names the upload. State frames name a turn's images by URL
(`GET /arena/media/<game>/<ref>`, for the game's people only, cacheable), so each image
crosses the wire once, not in every frame.
"""

from __future__ import annotations

import random
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from turinglab.agents.base import Agent, ImagePart
from turinglab.agents.human import MESSAGE, HumanAgent, HumanInput
from turinglab.agents.registry import build_agent, display_names
from turinglab.arena.core import frames as F
from turinglab.arena.core.live_reveal import flagged_text
from turinglab.arena.core.mode_kits import ModeKit, register
from turinglab.arena.core.modes import ArenaMode, ArenaSettings, ArenaSetup, lobby_pick
from turinglab.arena.core.participants import Participant
from turinglab.arena.core.person_view import InputRejected, PersonView
from turinglab.arena.core.state_game import StateFrameGame
from turinglab.arena.modes import survey_rewording as rewording
from turinglab.arena.modes.strong_carry_over import give_back_choices, give_back_held, input_of
from turinglab.arena.modes.strong_rows import stt_rows as stt_rows
from turinglab.config import AgentConfig
from turinglab.games.control_log import Choice, Ended
from turinglab.games.events import GameEvent, InputRefused, MessageSaid, RepliesGiven, ReplyChosen
from turinglab.games.held_message import MessageHeld
from turinglab.games.kinds import GameContext, game_for
from turinglab.games.spec import GameResult, TrialSpec
from turinglab.games.strong import INVESTIGATOR, SYSTEM, TIE, StrongExperiment
from turinglab.games.table import MAIN, TranscriptMessage
from turinglab.store.media import media_ref

PERSON = "person:"  # how the hub names a person's agent
UPLOADS_PER_PERSON = 8  # older unsent uploads are dropped
FLAGGED_TEXT = (
    "Something went wrong on our side (an AI side failed or time ran out); "
    "this session will not count. Thank you for taking part."
)


@dataclass
class _Turn:
    question: str
    images: tuple[ImagePart, ...]
    own: dict[str, str] = field(default_factory=dict)  # seat -> its reply, as posted
    order: list[str] = field(default_factory=list)  # seats in the order shown
    replies: dict[str, str] = field(default_factory=dict)
    label: str | None = None  # "1", "2", … or TIE once decided


class StrongLiveGame(StateFrameGame):
    """A live STT session: the game runs unchanged; this class only routes and renders."""

    mode: StrongArenaMode  # its kit binds this class to the STT modes (mode_kits.py)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.respondents = [s for s in self.spec.seats if s != self.mode.judge]
        self.turns: dict[int, _Turn] = {}
        self.sent: dict[str, int] = {}  # seat -> the turn a person's last message was for
        self.chose: int = 0  # the last turn the investigator (a person) gave a preference for
        self.uploads: dict[tuple[str, str], ImagePart] = {}
        self.media: dict[str, ImagePart] = {}  # ref -> an image a turn carried
        self.flagged: str | None = None

    # ---- seats and state -------------------------------------------------------------------

    def _view(self, seat: str, person: Participant, human: HumanAgent) -> PersonView:
        if seat == self.mode.judge:
            return PersonView(seat, person, human, "interrogator", {"A": MAIN}, {MAIN: SYSTEM})
        return PersonView(seat, person, human, "witness", {"A": MAIN}, {MAIN: self.mode.judge})

    last_turn = property(lambda self: int(self.spec.params.get("turns", 1)))

    def seat_matters(self, view: PersonView) -> bool:  # the investigator's choices are the data
        """The investigator until the end; a respondent until they answered the last turn."""
        last = self.turns.get(self.last_turn)
        judge = view.seat == self.mode.judge
        return self.result is None and (judge or last is None or view.seat not in last.own)

    def departed_role(self, view: PersonView) -> str:
        return "investigator" if view.seat == self.mode.judge else "respondent"

    @property
    def current(self) -> int:
        return max(self.turns, default=0)

    def _phase(self, view: PersonView) -> str:
        if self.result is not None:
            return "ended"
        turn = self.turns.get(self.current)
        if view.seat == self.mode.judge:
            if turn is None or turn.label is not None:
                return "waiting" if self.sent.get(view.seat) == self.current + 1 else "asking"
            return "choosing" if turn.order and self.chose < self.current else "waiting"
        if turn is None or turn.label is not None:
            return "waiting"
        answered = view.seat in turn.own or self.sent.get(view.seat) == self.current
        return "waiting" if answered else "answering"

    def _state(self, view: PersonView) -> F.StrongState:
        phase = self._phase(view)
        judge = view.seat == self.mode.judge
        return F.StrongState(
            game=self.id,
            mode=self.mode.name,
            title=self.mode.title,
            practice=self.mode.solo,
            role="investigator" if judge else "respondent",
            phase=phase,  # type: ignore[arg-type]
            turns=self.last_turn,
            can_end=judge and phase == "asking" and self.current >= 1,
            max_chars=self.mode.max_chars,
            history=[self._turn_frame(view, n, t) for n, t in sorted(self.turns.items())],
            scores=self._scores(view) if self.result is not None else None,
            flagged=self._notes.get(view.seat, self.flagged),
        )

    def _turn_frame(self, view: PersonView, n: int, turn: _Turn) -> F.StrongTurn:
        ended = self.result is not None
        show = bool(turn.order) and (view.seat == self.mode.judge or turn.label is not None)
        replies = []
        for k, seat in enumerate(turn.order if show else ()):
            kind, name = self._side(seat) if ended else (None, None)
            replies.append(
                F.StrongReply(
                    label=k + 1,
                    text=turn.replies[seat],
                    yours=seat == view.seat,
                    author=name,
                    kind=kind,
                )
            )
        return F.StrongTurn(
            turn=n,
            question=turn.question,
            images=[self.media_url(image) for image in turn.images],
            your_reply=turn.own.get(view.seat),
            replies=replies,
            decided=turn.label is not None,
            chosen=None if turn.label in (None, TIE) else int(str(turn.label)),
            tie=turn.label == TIE,
        )

    def _side(self, seat: str) -> tuple[Any, str]:
        if seat in self.views:
            return "human", "a person"
        agent = self.spec.seats[seat]
        name = self.display_names.get(agent, agent)
        if seat == SYSTEM:
            return "ai", name
        return "ai", f"{name} (an AI standing in for a person)"

    def _scores(self, view: PersonView) -> list[F.StrongScore]:
        decided = [t for t in self.turns.values() if t.label is not None]
        out = []
        for seat in self.respondents:
            wins = sum(
                1.0 if t.label != TIE and t.order[int(str(t.label)) - 1] == seat else 0.0
                for t in decided
            ) + 0.5 * sum(t.label == TIE for t in decided)
            kind, name = self._side(seat)
            out.append(
                F.StrongScore(
                    name=name,
                    kind=kind,
                    you=seat == view.seat,
                    wins=wins,
                    turns=len(decided),
                    win_rate=round(wins / len(decided), 4) if decided else None,
                )
            )
        return out

    def _push(self, seats: tuple[str, ...] | None = None) -> None:
        for seat, view in self.views.items():
            if seats is None or seat in seats:
                view.send(self._state(view))

    def snapshot(self, participant: Participant) -> F.StrongState:  # type: ignore[override]
        return self._state(self.view_of(participant))

    # ---- what the game does ----------------------------------------------------------------

    def show(self, event: GameEvent, to: tuple[str, ...]) -> None:
        """The session as the gate lets it through: every message (whoever may see it) updates
        the turns; the game's reveal is not forwarded (the end state comes from the result)."""
        if isinstance(event, MessageSaid):
            self._said(event.message)
        elif isinstance(event, RepliesGiven):
            turn = self.turns.get(event.turn)
            if turn is not None and not turn.order:
                turn.order = list(event.order)
                turn.replies = dict(event.replies)
                self._push()
        elif isinstance(event, ReplyChosen):
            turn = self.turns.get(event.turn)
            if turn is not None and turn.label is None:
                turn.label = event.label
                self._push()
        elif isinstance(event, InputRefused):  # the game said no: the person's send did not count
            for view in (self.views[s] for s in to if s in self.views):
                self.sent.pop(view.seat, None)
                view.send(F.Error(code="refused", message=self._scrub(view, event.reason)))
                view.send(self._state(view))

    def _said(self, msg: TranscriptMessage) -> None:
        if not msg.phase.startswith("turn-"):
            return
        n = int(msg.phase.removeprefix("turn-"))
        if msg.sender == self.mode.judge:
            self.turns[n] = _Turn(msg.text, msg.images)
            self.media.update((media_ref(image), image) for image in msg.images)
            self._message_shown(msg.sender)  # its input is acknowledged
            self._push()
        elif msg.sender in self.respondents and n in self.turns:
            self.turns[n].own[msg.sender] = msg.text
            self._push((msg.sender,))  # nobody else learns when a side replied

    def start(self) -> None:
        give_back_held(self)  # before any input is taken (strong_carry_over.py)
        super().start()

    async def _run(self) -> None:
        give_back_choices(self)  # a game taken over: what its people chose under another owner
        result = await self._play(self._time_limit(), "arena: the session ran out of time")
        if self.gate is not None:  # everything said, and the end, stored before it is shown
            result = await self._saved(result)
        self.flagged = flagged_text(result, FLAGGED_TEXT)
        self._ended(result)
        self._push()
        self._on_finish(self)

    def already_over(self, result: GameResult, told: Mapping[str, str | None]) -> None:
        self._keep_told(told)
        self.flagged = flagged_text(result, FLAGGED_TEXT)
        self._ended(result)  # the end state, when asked (snapshot); nothing sent or counted

    def _time_limit(self) -> float:
        """The session's limit, less what it has played (under earlier owners, after a
        takeover: counted from its stored start on the game's clock)."""
        per_turn = self.mode.input_timeout_s * 3
        whole = per_turn * int(self.spec.params.get("turns", 1)) + 60.0
        return max(1.0, whole - max(0.0, self.clock.now() - self.started_at))

    # ---- what people do --------------------------------------------------------------------

    def handle(self, participant: Participant, frame: F.ClientFrame) -> None:
        self.handle_once(participant, frame, self._input)

    def _input(self, view: PersonView, frame: F.ClientFrame) -> None:
        phase = self._phase(view)
        if phase == "ended":
            raise InputRejected("game-over", "This session has ended.")
        judge = view.seat == self.mode.judge
        if isinstance(frame, F.SendMessage):
            self._send(view, frame, phase)
        elif isinstance(frame, F.Preference):
            if not judge or phase != "choosing":
                raise InputRejected("not-now", "There are no replies to choose between now.")
            n = len(self.turns[self.current].order)
            if not frame.tie and (frame.reply is None or frame.reply > n):
                raise InputRejected("bad-choice", f"Choose a reply from 1 to {n}, or a tie.")
            self.chose = self.current
            label = TIE if frame.tie else str(frame.reply)
            # Logged first: a process that takes the game over gives it to the game again.
            choice = Choice(view.seat, self.current, label)
            self.controls.record(choice, lambda: view.agent.push(input_of(choice)))
            self._push((view.seat,))
        elif isinstance(frame, F.EndGame):
            if not judge or phase != "asking" or self.current < 1:
                raise InputRejected("not-now", "The investigator may end after a full turn.")
            end = Ended("investigator-ended", view.seat)
            self.controls.record(end, lambda: view.agent.push(input_of(end)))
        elif isinstance(frame, F.Typing):
            return  # replies are compared side by side: nobody is shown typing
        else:
            raise InputRejected("not-now", "That is not part of this game.")

    def _send(self, view: PersonView, frame: F.SendMessage, phase: str) -> None:
        judge = view.seat == self.mode.judge
        if phase != ("asking" if judge else "answering"):
            raise InputRejected("wait", "Please wait: it is not your turn to write.")
        text = self._text(frame)
        images: tuple[ImagePart, ...] = ()
        if frame.image is not None:
            if not judge:
                raise InputRejected("no-images", "Only the investigator can attach images.")
            image = self.uploads.pop((view.participant.id, frame.image), None)
            if image is None:
                raise InputRejected("bad-image", "That image is no longer here; attach it again.")
            images = (image,)
        self.sent[view.seat] = self.current + 1 if judge else self.current
        if judge:  # said by the game at once: acknowledged once it is committed
            self._ack_when_said()
        else:  # held until the turn's replies are in: logged first (strong_carry_over.py)
            self.controls.record(MessageHeld(view.seat, text, f"turn-{self.current}"))
        view.agent.push(HumanInput(MESSAGE, text, channel=MAIN, data={"images": images}))
        self._push((view.seat,))

    def media_url(self, image: ImagePart) -> str:
        return f"/arena/media/{self.id}/{media_ref(image)}"

    def add_upload(self, participant: Participant, image: ImagePart) -> str:
        """Keep an investigator's (re-encoded) image until they send it; returns its upload id."""
        view = self.view_of(participant)
        if view.seat != self.mode.judge:
            raise InputRejected("no-images", "Only the investigator can attach images.")
        mine = [k for k in self.uploads if k[0] == participant.id]
        for key in mine[: max(0, len(mine) - UPLOADS_PER_PERSON + 1)]:
            del self.uploads[key]
        upload_id = secrets.token_hex(8)
        self.uploads[(participant.id, upload_id)] = image
        return upload_id

    # ---- what is kept ----------------------------------------------------------------------

    def _message_entry(self, m: TranscriptMessage) -> dict[str, Any]:
        entry = super()._message_entry(m)
        if m.images:  # in memory the images themselves; the store's record gives references
            entry["images"] = [image.data_url for image in m.images]
        return entry


@dataclass(frozen=True)
class StrongArenaMode(ArenaMode):
    input_timeout_s: float = 600.0  # the config's wait for a person: sets the session's limit


def strong_mode(
    name: str,
    title: str,
    cfg: StrongExperiment,
    *,
    solo: bool = False,
    person_as: str = "investigator",
    context: GameContext | None = None,
) -> StrongArenaMode:
    """A mode playing `cfg` with people. Two matched people: one investigates, the other is a
    human respondent (with the config's other humans as stand-ins). Solo (practice): the person
    investigates, or with `person_as="respondent"` answers an AI investigator from the config.
    The system is the lobby's pick (in a study, the investigator's next group: rounds.py)."""
    if person_as not in ("investigator", "respondent"):
        raise ValueError(f"{name}: person_as must be 'investigator' or 'respondent'")
    human_seats = [f"human_{k + 1}" for k in range(len(cfg.humans))]

    def spec_for(index: int, assigned: dict[str, str], seed: int) -> TrialSpec:
        rng = random.Random(seed)
        investigator = assigned[INVESTIGATOR]
        people = [a for s, a in assigned.items() if s != INVESTIGATOR and a.startswith(PERSON)]
        if solo and person_as == "respondent":
            people, investigator = [investigator], rng.choice(cfg.investigators)
        humans = people + cfg.humans[: len(human_seats) - len(people)]
        system = lobby_pick(assigned, INVESTIGATOR, cfg.systems) or rng.choice(cfg.systems)
        one = cfg.model_copy(
            update={
                "investigators": [investigator],
                "systems": [system],
                "humans": humans,
                "n": 1,
                "seed": seed,
            }
        )
        (spec,) = game_for(one, context).plan()
        return replace(spec, index=index, key=f"arena:{name}#{index}")

    return StrongArenaMode(
        name=name,
        title=title,
        game=game_for(cfg, context),
        judge=INVESTIGATOR,
        channel_of={seat: MAIN for seat in (SYSTEM, *human_seats)},
        ai_agents=tuple(cfg.systems),
        verdict="preference",
        duration_s=None,
        max_chars=cfg.max_chars,
        solo=solo,
        spec_for=spec_for,
        ai_groups_per_game=1,
        input_timeout_s=cfg.input_timeout_s,
    )


def strong_setup_for(
    experiment: StrongExperiment,
    agent_configs: Mapping[str, AgentConfig],
    settings: ArenaSettings | None = None,
) -> ArenaSetup:
    """What `turinglab serve` offers for an STT config: the study mode (two people: one
    investigates, one answers beside the system; the config's other humans are stand-in agents)
    and practice modes (investigate alone; answer an AI investigator, if the config has one)."""
    unknown = sorted(set(experiment.systems + experiment.humans) - set(agent_configs))
    if unknown:
        raise ValueError(
            f"experiment: no agent named {', '.join(unknown)} (systems and humans must be agents; "
            "the arena seats a person in one human seat by itself)"
        )
    names = {*experiment.systems, *experiment.humans, *experiment.investigators}
    used = {n: agent_configs[n] for n in sorted(names) if n in agent_configs}
    agents: dict[str, Agent] = {n: build_agent(n, c) for n, c in used.items()}
    modes: list[ArenaMode] = [
        strong_mode("strong", "Strong Turing Test", experiment),
        strong_mode("strong-practice", "Practice: you investigate", experiment, solo=True),
    ]
    if any(i in agents for i in experiment.investigators):
        ai_investigators = [i for i in experiment.investigators if i in agents]
        answering = experiment.model_copy(update={"investigators": ai_investigators})
        title = "Practice: you answer"
        modes.append(
            strong_mode("strong-respond", title, answering, solo=True, person_as="respondent")
        )
    return ArenaSetup(modes, agents, display_names(used), settings or ArenaSettings())


register(
    ModeKit[StrongExperiment](
        ("strong",),
        StrongExperiment,
        strong_setup_for,
        StrongLiveGame,
        state_frame="strong",
        survey_rewording=rewording.STRONG,
        takes_images=True,
    )
)
