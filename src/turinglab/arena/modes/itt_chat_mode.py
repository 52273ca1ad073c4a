"""People in ITT conversations: the `conversation` game (games/conversation.py) in the arena.

Zhang et al.'s conversation task pairs two people, or a person and a machine, on a topic for a
fixed number of messages. Here the lobby matches two people, or one person and an AI partner
(with a study design, matchmaking_wait.py draws which, so the wait says nothing); the game is
the same one `turinglab run` plays between agents, so a person's conversation and a machine's
are stored alike. Seats: A writes first, then A and B alternate for `exchanges` messages. A
lone person sits at A or B by the session's seed (the paper's H–AI and AI–H orders); with two
people the lobby's order stands.

Each person gets one frame, `ITTChatState`, with everything they may see now, sent again
whenever it changes. Who the partner was is told only once the conversation is over. A person
who leaves (no connection for the arena's `abandon_after_s`) or does not write for
`reply_timeout_s` on their turn ends the conversation as abandoned: everything said is kept,
but it is not study data and gives its rounds back (arena/core/abandon.py's rules, applied here by
its own watcher, which also times silence: `watched_by_arena = False`).

Finished study conversations become ITT dataset rows (itt/arena_conversations.py): `turinglab
export RUN --format itt` writes them with their topic, people as `source` human.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from turinglab.agents.base import Agent, AgentReply, Route
from turinglab.agents.human import MESSAGE, HumanAgent, HumanInput
from turinglab.agents.registry import build_agent, display_names
from turinglab.arena.core import frames as F
from turinglab.arena.core.abandon import ABANDONED, TOLD_LEFT, TOLD_STAYED
from turinglab.arena.core.live import InputRejected, PersonView
from turinglab.arena.core.live_reveal import flagged_text
from turinglab.arena.core.matchmaking_wait import MatchDesign
from turinglab.arena.core.mode_kits import ModeKit, register
from turinglab.arena.core.modes import ArenaMode, ArenaSettings, ArenaSetup
from turinglab.arena.core.participants import Participant
from turinglab.arena.core.state_game import StateFrameGame
from turinglab.arena.modes import survey_rewording as rewording
from turinglab.arena.modes.strong_mode import PERSON
from turinglab.config import AgentConfig
from turinglab.games.conversation import SEATS, ConversationExperiment, ConversationGame
from turinglab.games.discarded_reply import ReplyDiscarded
from turinglab.games.events import GameEvent, MessageSaid
from turinglab.games.kinds import GameContext
from turinglab.games.people import is_person
from turinglab.games.spec import GameResult, TrialSpec
from turinglab.games.table import GAME, MAIN, Seat

MODE = "itt-conversation"
TITLE = "Chat about a topic"
ABOUT = "With another person or an AI, on a topic we give you."
REPLY_TIMEOUT_S = 180.0  # per message: a person who stops writing ends the chat, abandoned
WATCH_S = 0.5  # how often a live conversation looks for people who left or went silent
TOLD_SILENT = (
    "Your partner did not write for a long time, so the conversation has ended. Everything "
    "said is kept, but it will not count as one of your rounds. Sorry — please chat again."
)
TOLD_TOO_SLOW = "You did not write for a long time, so the conversation has ended."
FLAGGED_TEXT = (
    "Something went wrong (a side stopped answering, or an AI failed); this conversation "
    "will not count. Thank you for taking part."
)


class PeopleConversationGame(ConversationGame):
    """The conversation game with the arena's people marked as people: they get the brief
    and are never re-sampled (the arena names them `person:<id>`, unknown to the config)."""

    def seats(self, spec: TrialSpec, agents: Mapping[str, Agent]) -> dict[str, Seat]:
        return {
            s: Seat(
                s,
                spec.seats[s],
                agents[spec.seats[s]],
                "human" if is_person(agents[spec.seats[s]]) else "agent",
            )
            for s in SEATS
        }


class ITTChatLiveGame(StateFrameGame):
    """One topic conversation: the game runs unchanged; this class routes and renders."""

    watched_by_arena = False  # its own watcher (`_watch`) ends it on departure or silence
    mode: ITTChatArenaMode  # its kit binds this class to the chat mode (mode_kits.py)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.sent: dict[str, int] = {}  # seat -> messages seen when it last sent
        self.flagged: str | None = None
        self._watcher: asyncio.Task[None] | None = None

    @property
    def chat_mode(self) -> ITTChatArenaMode:
        return self.mode

    def _view(self, seat: str, person: Participant, human: HumanAgent) -> PersonView:
        # The round book counts a lone person (and A of two) as the lobby's "interrogator".
        alone = sum(a.startswith(PERSON) for a in self.spec.seats.values()) == 1
        role: Literal["interrogator", "witness"] = (
            "interrogator" if alone or seat == SEATS[0] else "witness"
        )
        other = SEATS[1 - SEATS.index(seat)]
        return PersonView(seat, person, human, role, {"A": MAIN}, {MAIN: other})

    # ---- state -------------------------------------------------------------------------------

    @property
    def exchanges(self) -> int:
        return int(self.spec.params["exchanges"])

    def _seen(self, view: PersonView) -> int:
        """Conversation messages this person has been shown (the brief is not one)."""
        return sum(1 for m in view.messages if m.sender != "game")

    def _phase(self, view: PersonView) -> str:
        if self.result is not None:
            return "ended"
        seen = self._seen(view)
        if seen >= self.exchanges or SEATS[seen % 2] != view.seat:
            return "waiting"
        return "waiting" if self.sent.get(view.seat) == seen else "writing"

    def _state(self, view: PersonView) -> F.ITTChatState:
        return F.ITTChatState(
            game=self.id,
            mode=self.mode.name,
            title=self.mode.title,
            practice=self.mode.solo,
            topic=str(self.spec.params["topic"]),
            you=view.seat,  # type: ignore[arg-type]
            exchanges=self.exchanges,
            phase=self._phase(view),  # type: ignore[arg-type]
            max_chars=self.mode.max_chars,
            lines=list(view.messages),
            partner=self._partner(view) if self.result is not None else None,
            flagged=self._notes.get(view.seat, self.flagged),
        )

    def _partner(self, view: PersonView) -> str:
        seat = SEATS[1 - SEATS.index(view.seat)]
        if seat in self.views:
            return "a person"
        agent = self.spec.seats[seat]
        return f"an AI ({self.display_names.get(agent, agent)})"

    def _push(self, seats: tuple[str, ...] | None = None) -> None:
        for seat, view in self.views.items():
            if seats is None or seat in seats:
                view.send(self._state(view))

    def snapshot(self, participant: Participant) -> F.ITTChatState:  # type: ignore[override]
        return self._state(self.view_of(participant))

    def _render(self, view: PersonView, event: GameEvent) -> None:
        if not isinstance(event, MessageSaid):
            return  # the game sends nothing else a person needs; the end is built here
        msg = event.message
        who: F.Sender = (
            "you" if msg.sender == view.seat else "game" if msg.sender == GAME else "them"
        )
        line = F.Message(
            n=len(view.messages), channel="A", sender=who, text=msg.text, at=msg.created_at
        )
        view.messages.append(line)
        if who == "you":
            self._message_shown(view.seat)  # its input is acknowledged
        view.send(self._state(view))

    # ---- running -----------------------------------------------------------------------------

    def observe(self, event: GameEvent, to: tuple[str, ...]) -> None:
        if isinstance(event, ReplyDiscarded):  # nobody sees it; kept for a takeover
            self.controls.record(event)
            return
        super().observe(event, to)

    def start(self) -> None:
        # A game taken over: the machine replies its earlier owners drew and sampled again.
        for drawn in self.controls.log.of(ReplyDiscarded):
            self.table.unsaid[drawn.call] = AgentReply(drawn.text, Route("stored", drawn.seat))
        super().start()
        self._watcher = asyncio.create_task(self._watch(), name=f"arena-{self.id}-watch")

    async def _watch(self) -> None:
        """End the conversation when a person has gone or has gone silent on their turn."""
        gone_since: dict[str, float] = {}
        while self.result is None and not self._ending_now:
            await asyncio.sleep(WATCH_S)
            now = self.clock.now()
            for seat, view in self.views.items():
                if self.present(view):  # the arena's rule (presence.py): relays do not count
                    gone_since.pop(seat, None)
                elif now - gone_since.setdefault(seat, now) >= self.chat_mode.abandon_after_s:
                    grace = self.chat_mode.abandon_after_s
                    self._abandon(seat, f"left (no reconnect within {grace:g} s)", TOLD_LEFT)
                    return
                if self._phase(view) == "writing" and (
                    now - self._turn_began(view) >= self.chat_mode.reply_timeout_s
                ):
                    quiet = self.chat_mode.reply_timeout_s
                    self._abandon(seat, f"wrote nothing for {quiet:g} s", TOLD_TOO_SLOW)
                    return

    def _turn_began(self, view: PersonView) -> float:
        return view.messages[-1].at if view.messages else self.started_at

    def _abandon(self, seat: str, why: str, told: str) -> None:
        stayed = TOLD_SILENT if told == TOLD_TOO_SLOW else TOLD_STAYED
        notes = {s: told if s == seat else stayed for s in self.views}
        flag = f"arena: abandoned: the {self.departed_role(self.views[seat])} {why}"
        self.end_now(GameResult(ABANDONED, flags=[flag]), notes)

    async def _run(self) -> None:
        try:
            await self._run_chat()
        finally:
            if self._watcher is not None:
                self._watcher.cancel()

    async def _run_chat(self) -> None:
        # a backstop: each person's turn is watched (`reply_timeout_s`) on its own. From the
        # start: one taken over from a process that died keeps its stored start.
        whole = self.chat_mode.reply_timeout_s * self.exchanges + 60.0
        limit = max(0.0, whole - (self.clock.now() - self.started_at))
        result = await self._play(limit, "arena: the conversation ran out of time")
        if self.gate is not None:
            result = await self._saved(result)
        self.flagged = flagged_text(result, FLAGGED_TEXT)
        self._ended(result)
        self._push()
        self._on_finish(self)

    def already_over(self, result: GameResult, told: Mapping[str, str | None]) -> None:
        self._keep_told(told)
        self.flagged = flagged_text(result, FLAGGED_TEXT)
        self._ended(result)  # the end state, when asked (snapshot); nothing sent or counted

    def departed_role(self, view: PersonView) -> str:  # as `_abandon`'s flag names them
        return f"person at {view.seat}"

    # ---- what people do ----------------------------------------------------------------------

    def handle(self, participant: Participant, frame: F.ClientFrame) -> None:
        self.handle_once(participant, frame, self._input)

    def _input(self, view: PersonView, frame: F.ClientFrame) -> None:
        phase = self._phase(view)
        if phase == "ended":
            raise InputRejected("game-over", "This conversation has ended.")
        if isinstance(frame, F.SendMessage):
            if phase != "writing":
                raise InputRejected("wait", "Wait for your partner's message.")
            if frame.image is not None:
                raise InputRejected("no-images", "This conversation takes text only.")
            text = self._text(frame)
            self.sent[view.seat] = self._seen(view)
            self._ack_when_said()
            view.agent.push(HumanInput(MESSAGE, text, channel=MAIN))
            self._push((view.seat,))
        elif isinstance(frame, F.Typing):
            other = self.views.get(view.partner[MAIN])
            if other is not None and phase == "writing":
                other.send(F.TypingShown(channel="A"))
        else:
            raise InputRejected("not-now", "That is not part of this conversation.")


@dataclass(frozen=True)
class ITTChatArenaMode(ArenaMode):
    abandon_after_s: float = 12.0  # the arena's setting (ArenaSettings.abandon_after_s)
    reply_timeout_s: float = REPLY_TIMEOUT_S


def ai_partners(cfg: ConversationExperiment) -> tuple[str, ...]:
    """The agents a person may be paired with: every agent the config's pairs name."""
    return tuple(cfg.agent_names())


def itt_chat_mode(
    name: str,
    title: str,
    cfg: ConversationExperiment,
    *,
    abandon_after_s: float = 12.0,
    reply_timeout_s: float = REPLY_TIMEOUT_S,
) -> ITTChatArenaMode:
    game = PeopleConversationGame(cfg, GameContext())

    def spec_for(index: int, assigned: dict[str, str], seed: int) -> TrialSpec:
        rng = random.Random(seed)
        topic = rng.choice(cfg.topics)
        seats = dict(assigned)
        people = [a for a in seats.values() if a.startswith(PERSON)]
        if len(people) == 1 and rng.random() < 0.5:  # a person and an AI: either may open
            seats = {"A": seats["B"], "B": seats["A"]}
        return TrialSpec(
            index=index,
            key=f"arena:{name}#{index}",
            game=game.name,
            seed=seed,
            seats=seats,
            params={"topic": topic, "exchanges": cfg.exchanges},
        )

    return ITTChatArenaMode(
        name=name,
        title=title,
        game=game,
        judge=SEATS[0],
        channel_of={SEATS[1]: MAIN},
        ai_agents=ai_partners(cfg),
        verdict="which",
        duration_s=None,
        spec_for=spec_for,
        about=ABOUT,
        abandon_after_s=abandon_after_s,
        reply_timeout_s=reply_timeout_s,
    )


def itt_chat_setup_for(
    experiment: ConversationExperiment,
    agent_configs: Mapping[str, AgentConfig],
    settings: ArenaSettings | None = None,
) -> ArenaSetup:
    """What `turinglab serve` offers for a conversation config: topic conversations between
    two people, or a person and one of the config's agents, as the study's design draws."""
    used = {n: agent_configs[n] for n in experiment.agent_names()}
    agents: dict[str, Agent] = {n: build_agent(n, c) for n, c in used.items()}
    settings = settings or ArenaSettings(seed=experiment.seed, design=MatchDesign())
    mode = itt_chat_mode(MODE, TITLE, experiment, abandon_after_s=settings.abandon_after_s)
    modes: list[ArenaMode] = [mode]
    return ArenaSetup(modes, agents, display_names(used), settings)


register(
    ModeKit[ConversationExperiment](
        ("conversation",),
        ConversationExperiment,
        itt_chat_setup_for,
        ITTChatLiveGame,
        state_frame="itt-chat",
        survey_rewording=rewording.ITT_CONVERSATION,
    )
)
