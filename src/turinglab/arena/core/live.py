"""One game being played in the arena: the engine's game at a table, people as human agents.

The server is authoritative: a person's message is only shown (to them too) once the game has
posted it to the table, and each seat's view — the frames it has been sent — is kept here, so
a refresh or a new connection gets a snapshot with every message so far. The game live here is
the table's observer: every event it reports (games/events.py) waits at the commit gate for
the message it follows, then `show` renders it into frames, renaming channels to per-viewer
aliases and senders to "you"/"them"/"game": seat ids, agent names and sides stay on the server
until the reveal. One person's view, and the checks of their inputs, are person_view.py's; the
reveal at the end is live_reveal.py's.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, ClassVar

from turinglab.agents.base import Agent, AgentReply, CallContext, ChatMessage
from turinglab.agents.human import MESSAGE, HumanAgent, HumanInput
from turinglab.arena.core import frames as F
from turinglab.arena.core.commit_gate import RECONNECT, STORE_LOST, CommitGate
from turinglab.arena.core.control_recorder import GameControls
from turinglab.arena.core.game_hooks import LOCAL_HOOKS, GameHooks

# `X as X`: re-exported, for cluster.py and itt_chat_mode.py import them from here.
from turinglab.arena.core.live_reveal import LOST_TEXT as LOST_TEXT
from turinglab.arena.core.live_reveal import SERVER_LOST as SERVER_LOST
from turinglab.arena.core.live_reveal import STORE_LOST_TEXT as STORE_LOST_TEXT
from turinglab.arena.core.live_reveal import reveal_for
from turinglab.arena.core.mode_kits import kit_of
from turinglab.arena.core.modes import ArenaMode
from turinglab.arena.core.participants import Participant
from turinglab.arena.core.person_view import ALIASES, InputRejected, PersonView, message_text
from turinglab.arena.core.person_view import Outlet as Outlet
from turinglab.games.clock import Clock, PausableClock
from turinglab.games.events import GameEvent
from turinglab.games.spec import FLAGGED, GameResult, TrialSpec
from turinglab.games.table import MessageSink, Table, TranscriptMessage
from turinglab.store.arena_records import game_record, message_entry, seat_entry
from turinglab.store.fencing import Fenced

log = logging.getLogger(__name__)

VERDICT_GRACE_S = 600.0  # after the deadline, how long a verdict may take before the game is void
Play = Callable[[Table, TrialSpec], Awaitable[GameResult]]
SaveEnd = Callable[["LiveGame", GameResult], Awaitable[None]]


class LiveGame:
    # The AI witness groups the lobby seated (hub.py); a game taken over from another process
    # does not know them (its groups' cycle is the cluster's, shared_rounds.py).
    ai_groups: tuple[str, ...] = ()
    watched_by_arena: ClassVar[bool] = True  # False: it watches its own people (abandon.py)

    def __init__(
        self,
        mode: ArenaMode,
        spec: TrialSpec,
        people: Mapping[str, Participant],
        agents: Mapping[str, Agent],
        *,
        display_names: Mapping[str, str],
        clock: Clock,
        on_finish: Callable[[LiveGame], None],
        sink: MessageSink | None = None,
        hooks: GameHooks = LOCAL_HOOKS,  # the arena's that builds it (game_hooks.py)
    ) -> None:
        self.id = f"g-{secrets.token_hex(6)}"
        self.mode = mode
        self.spec = spec
        # The game's own time: it stands still while its messages cannot be saved, so an
        # outage of the store does not eat the people's five minutes (commit_gate.py).
        self.clock = PausableClock(clock)
        self.display_names = display_names
        self._on_finish = on_finish
        self.views: dict[str, PersonView] = {}
        humans: dict[str, Agent] = {}
        for seat, person in people.items():
            human = HumanAgent(spec.seats[seat], person.id)
            humans[human.name] = human
            self.views[seat] = self._view(seat, person, human)
        table_agents = {**agents, **humans}
        self.table = Table(
            seats=mode.game.seats(spec, table_agents),
            caller=self._call_when_saved,
            seed=spec.seed,
            clock=self.clock,
            sink=sink,
            observer=self,
        )
        self.started_at = self.clock.now()
        self.deadline = self.started_at + mode.duration_s if mode.duration_s else None
        self.ended_at: float | None = None
        self.result: GameResult | None = None
        self.task: asyncio.Task[None] | None = None
        # What plays the game: the game kind's `play`, or its `resume` after a takeover.
        self.play: Play = mode.game.play
        # With a store (store_bridge.py): shown only once committed; a fenced game stops here.
        self.gate: CommitGate | None = None
        self.save_end: SaveEnd | None = None
        self._on_fenced = hooks.game_fenced
        self.save_paused: Callable[[float], None] | None = None  # kept for a takeover's clock
        self.controls = GameControls()  # what it decides besides messages (control_recorder.py)
        # Whether a person of this game is still there: the arena's one rule (presence.py), from
        # its hooks; a watcher of departures asks it, never a view's outlets.
        self.present = hooks.present
        self.end_saved = False
        self._ending_now = False  # end_now was called (its end may be being saved)
        self._aborted: asyncio.Future[GameResult] | None = None

    def _view(self, seat: str, person: Participant, human: HumanAgent) -> PersonView:
        if seat == self.mode.judge:
            aliases = dict(zip(ALIASES, self.mode.channel_of.values(), strict=False))
            partner = {c: w for w, c in self.mode.channel_of.items()}
            return PersonView(seat, person, human, "interrogator", aliases, partner)
        channel = self.mode.channel_of[seat]
        return PersonView(
            seat, person, human, "witness", {"A": channel}, {channel: self.mode.judge}
        )

    def seat_matters(self, view: PersonView) -> bool:  # abandon.py; each kind says its own
        """Whether their leaving now ends it: the interrogator's ever, a witness's in talk."""
        return view.phase != "ended" and (view.role == "interrogator" or view.phase == "playing")

    def departed_role(self, view: PersonView) -> str:  # as an abandoned game's flag names it
        return view.role

    # ---- running ---------------------------------------------------------------------------

    def start(self) -> None:
        self.task = asyncio.create_task(self._run(), name=f"arena-{self.id}")

    async def _run(self) -> None:
        limit = (self.mode.duration_s or 3600.0) + VERDICT_GRACE_S
        result = await self._play(limit, "arena: no verdict in time")
        if self.gate is not None:
            result = await self._saved(result)
        self._ended(result)
        for view in self.views.values():
            view.reveal = self._reveal(view, result)
            view.send(F.Phase(phase="ended"))
            view.send(view.reveal)
        self._on_finish(self)

    async def _play(self, limit: float, late: str) -> GameResult:
        """The game's result; running past `limit` (flag `late`) or an agent's fault ends the
        game FLAGGED: as data, never as a verdict."""
        self._aborted = asyncio.get_running_loop().create_future()
        if self.gate is not None and self.gate.failed is not None:  # its row was never stored
            self._aborted.set_result(GameResult(FLAGGED, flags=[STORE_LOST]))
        playing = asyncio.ensure_future(asyncio.wait_for(self.play(self.table, self.spec), limit))
        try:
            await asyncio.wait({playing, self._aborted}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            playing.cancel()
            raise
        if self._aborted.done():  # ended from outside: saving failed for too long
            playing.cancel()
            await asyncio.gather(playing, return_exceptions=True)
            return self._aborted.result()
        try:
            return playing.result()
        except TimeoutError:
            return GameResult(FLAGGED, flags=[late])
        except Exception as err:
            log.exception("game %s failed", self.id)
            return GameResult(FLAGGED, flags=[f"arena: {type(err).__name__}: {err}"])

    # ---- saving (with a store) ---------------------------------------------------------------

    async def _call_when_saved(
        self, agent: Agent, history: list[ChatMessage], ctx: CallContext
    ) -> AgentReply:
        """An AI answers only what is stored (it waits for its commit); never retried: a
        person is waiting, and a failed witness flags the game."""
        if self.gate is not None and not isinstance(agent, HumanAgent):
            await self.gate.settled()
        return await agent.reply(history, ctx)

    async def _saved(self, result: GameResult) -> GameResult:
        """Wait for every message's commit, then save the end, before anyone is shown it. A
        fenced game stops (this task is cancelled); a store that stays unreachable flags it."""
        assert self.gate is not None
        try:
            await self.gate.settled()
            if self.save_end is not None:
                await self.save_end(self, result)
                self.end_saved = True
        except Fenced:
            self.fenced()
            raise asyncio.CancelledError from None  # played on elsewhere: no end, no reveal
        except Exception as err:
            log.error("game %s: its end could not be saved (%s); ended flagged", self.id, err)
            if STORE_LOST not in result.flags:
                result = GameResult(FLAGGED, flags=[*result.flags, STORE_LOST])
        return result

    def tell_everyone(self, frame: F.ServerFrame) -> None:
        for view in self.views.values():
            view.send(frame)

    def pause_clock(self) -> None:
        """Saving is delayed: the game's time stands still until it resumes."""
        self.clock.pause()

    def resume_clock(self) -> None:
        """Saving caught up: time goes on, and each person gets the game again with the
        clock as it now stands (their countdown did not stop on its own)."""
        if not self.clock.paused:
            return
        self.clock.resume()
        if self.save_paused is not None:
            self.save_paused(self.clock.stopped_for)
        if self.result is None:
            for view in self.views.values():
                view.send(self.snapshot(view.participant))

    def abort(self, flag: str) -> None:
        """End the game now, flagged (the store has been unreachable for too long)."""
        if self._aborted is not None and not self._aborted.done():
            self._aborted.set_result(GameResult(FLAGGED, flags=[flag]))

    def fenced(self) -> None:
        """Another process owns this game now: stop it here, writing nothing more, and send
        its people there."""
        if self.result is not None:
            return
        self.tell_everyone(F.Error(code="reconnect", message=RECONNECT))
        for view in self.views.values():
            view.phase = "ended"
        self._on_fenced(self)
        if self.task is not None and self.task is not asyncio.current_task():
            self.task.cancel()

    def end_now(self, result: GameResult, notes: Mapping[str, str]) -> None:
        """End the game from outside its play (arena/core/abandon.py: a person left): stop it, keep
        everything said, and tell each person still here why (`notes`: seat -> text). With a
        store, the end is committed before anyone is shown it, as at a normal end."""
        if self.result is not None or self._ending_now:
            return
        self._ending_now = True
        if self.task is not None:
            self.task.cancel()
        if self.gate is None:
            self._show_end_now(result, notes)
        else:
            self.task = asyncio.create_task(self._save_then_show(result, notes))

    async def _save_then_show(self, result: GameResult, notes: Mapping[str, str]) -> None:
        self._show_end_now(await self._saved(result), notes)

    def _show_end_now(self, result: GameResult, notes: Mapping[str, str]) -> None:
        self._ended(result)
        for seat, view in self.views.items():
            view.reveal = self._reveal(view, result).model_copy(update={"flagged": notes[seat]})
            view.send(F.Phase(phase="ended"))
            view.send(view.reveal)
        self._on_finish(self)

    def already_over(self, result: GameResult, told: Mapping[str, str | None]) -> None:
        """Rebuilt only to show its end (stored_end.py): each kind's end screen, with what each
        person was told (`told`: seat -> text; None: its own words); nothing sent or saved."""
        self._ended(result)
        for seat, view in self.views.items():
            reveal = self._reveal(view, result)
            note = told.get(seat)
            view.reveal = reveal if note is None else reveal.model_copy(update={"flagged": note})

    def _ended(self, result: GameResult) -> None:
        """Keep the result and close every view (the caller then shows the end to people)."""
        self.result = result
        self.ended_at = self.clock.now()
        for view in self.views.values():
            view.phase = "ended"
            view.drop_unsent()

    def _reveal(self, view: PersonView, result: GameResult) -> F.Reveal:
        return reveal_for(
            view.seat,
            result,
            witnesses=list(self.mode.channel_of),
            humans=self.views.keys(),
            agents=self.spec.seats,
            display_names=self.display_names,
        )

    # ---- what people see -------------------------------------------------------------------

    def observe(self, event: GameEvent, to: tuple[str, ...]) -> None:
        """What the table reports: shown now, or once the message it follows is stored."""
        if self.gate is None or not self.gate.hold(event, to):
            self.show(event, to)

    def show(self, event: GameEvent, to: tuple[str, ...]) -> None:
        """Render an event for the people at the seats it is for (the gate let it through)."""
        for seat in to:
            if seat in self.views:
                self._render(self.views[seat], event)

    def _render(self, view: PersonView, event: GameEvent) -> None:
        view.render(event, lambda text: self._scrub(view, text))

    def _scrub(self, view: PersonView, text: str) -> str:
        """A game's own words may name seats and channels; a person sees only aliases."""
        for alias, channel in view.alias_to_channel.items():
            text = text.replace(channel, f"witness {alias}" if view.role == "interrogator" else "")
        for seat in self.spec.seats:
            text = text.replace(
                seat, "the interrogator" if seat == self.mode.judge else "a witness"
            )
        return text

    def snapshot(self, participant: Participant) -> F.GameSnapshot:
        view = self.view_of(participant)
        judge = view.role == "interrogator"
        choices: list[str] = []
        if judge:
            choices = (
                list(view.alias_to_channel) if self.mode.verdict == "which" else ["human", "ai"]
            )
        return F.GameSnapshot(
            game=self.id,
            mode=self.mode.name,
            title=self.mode.title,
            practice=self.mode.solo,
            role=view.role,
            channels=list(view.alias_to_channel),
            judge_choices=choices,
            speaks_first=judge,
            max_chars=self.mode.max_chars,
            now=self.clock.now(),
            deadline=self.deadline,
            phase=view.phase,
            messages=list(view.messages),
            reveal=view.reveal,
            stream=view.outbox.stream,
            seq=view.outbox.seq,
        )

    def view_of(self, participant: Participant) -> PersonView:
        return next(v for v in self.views.values() if v.participant.id == participant.id)

    # ---- what people do --------------------------------------------------------------------

    def handle(self, participant: Participant, frame: F.ClientFrame) -> None:
        view = self.view_of(participant)
        if view.already_applied(frame):
            return
        if view.phase == "ended":
            raise InputRejected("game-over", "This game has ended.")
        if isinstance(frame, F.SendMessage):
            self._message(view, frame)
        elif isinstance(frame, F.Typing):
            channel = view.channel_of(frame.channel)
            other = self.views.get(view.partner[channel])
            if other is not None and view.phase == "playing":  # stray ones after the talk: dropped
                other.send(F.TypingShown(channel=other.channel_to_alias[channel]))
        elif isinstance(frame, F.EndGame):
            view.judge_only()
            if view.phase == "playing" and not view.asked_end:  # a second "end" changes nothing
                view.asked_end = True
                view.agent.push(HumanInput("end"))
            view.remember(frame.id)
        elif isinstance(frame, F.Verdict):
            view.judge_only()
            # The page asks only after "end", or once time is up: a game rebuilt by a takeover
            # asks again only once it has caught up, and the page re-sends its verdict at once.
            time_up = self.deadline is not None and self.clock.now() >= self.deadline
            if view.phase != "verdict" and not view.asked_end and not time_up:
                raise InputRejected("not-now", "End the conversation before giving a verdict.")
            view.agent.push(HumanInput("verdict", data=view.verdict_data(frame, self.mode.verdict)))
            view.remember(frame.id)
        else:  # a frame of another kind of game (a preference, a survey mid-game)
            raise InputRejected("not-now", "That is not part of this game.")

    def _message(self, view: PersonView, frame: F.SendMessage) -> None:
        if view.phase != "playing":
            then = "please give your verdict" if view.role == "interrogator" else "wait for the end"
            raise InputRejected("not-now", f"The conversation is over; {then}.")
        channel = view.channel_of(frame.channel)
        text = self._text(frame)
        last = view.last_sender.get(channel)
        if last == "you":
            raise InputRejected("wait", "Wait for a reply before sending another message.")
        if last is None and view.role == "witness":
            raise InputRejected("wait", "The interrogator writes first.")
        view.last_sender[channel] = "you"  # until the game posts it, a second send is refused
        if frame.id is not None:
            view.pending[channel] = frame.id
        view.agent.push(HumanInput(MESSAGE, text, channel=channel))

    def _text(self, frame: F.SendMessage) -> str:
        return message_text(frame, self.mode.max_chars)

    # ---- what is kept ----------------------------------------------------------------------

    def record(self) -> dict[str, Any]:
        """The game as the admin export gives it (participants by anonymous id only), in the
        one shape the store's reader gives too (store/arena_records.py)."""
        return game_record(
            game=self.id,
            mode=self.mode.name,
            solo=self.mode.solo,
            spec=self.spec,
            seats={
                seat: seat_entry(
                    agent, self.views[seat].participant.id if seat in self.views else None
                )
                for seat, agent in self.spec.seats.items()
            },
            started_at=self.started_at,
            ended_at=self.ended_at,
            messages=[self._message_entry(m) for m in self.table.messages],
            result=self.result,
        )

    def _message_entry(self, m: TranscriptMessage) -> dict[str, Any]:
        return message_entry(
            seq=m.seq,
            sender=m.sender,
            channel=m.channel,
            text=m.text,
            at=m.created_at,
            visible_to=m.visible_to,
        )


def live_class(mode: ArenaMode) -> type[LiveGame]:  # as its game's kit declares, or LiveGame
    return (None if (kit := kit_of(mode)) is None else kit.live_game) or LiveGame
