"""The arena's state in one process: sessions, the lobby, live games, finished records.

Connections register an outlet per participant; a game's views share those outlet sets, so a
participant with two tabs (or a reconnect) sees the same thing everywhere.

The study can be replaced while the arena runs (`open_study`, from the admin page): new games
follow the new setup, with a fresh lobby and round book; live games finish under the old one.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from turinglab.arena.core import frames as F
from turinglab.arena.core.abandon import AbandonWatch, give_rounds_back
from turinglab.arena.core.finished import FinishedGames
from turinglab.arena.core.frame_rules import check_survey
from turinglab.arena.core.game_hooks import LOCAL_HOOKS, GameHooks
from turinglab.arena.core.live import LiveGame, live_class
from turinglab.arena.core.lobby import Lobby
from turinglab.arena.core.metrics import ArenaMetrics, fault
from turinglab.arena.core.modes import ArenaMode, ArenaSetup
from turinglab.arena.core.participants import Participant, Sessions
from turinglab.arena.core.person_view import InputRejected, Outlet
from turinglab.arena.core.resume import ResumePoint
from turinglab.arena.core.store_bridge import ArenaStore, GameRecorder
from turinglab.arena.core.study_ending import ending
from turinglab.arena.core.survey_wording import survey_questions
from turinglab.games.clock import REAL_CLOCK, Clock
from turinglab.games.spec import TrialSpec
from turinglab.study_export import without_withdrawn

log = logging.getLogger(__name__)

# An ended game is kept in memory this long (a page reloaded at the reveal still shows it),
# then forgotten: its record is in the store, or in `finished`; a long study's games would
# otherwise pile up in memory and in every tick.
FORGET_ENDED_AFTER_S = 900.0

FinishedHook = Callable[[dict[str, Any]], None]


class Arena:
    def __init__(
        self,
        setup: ArenaSetup,
        clock: Clock = REAL_CLOCK,
        on_finished: FinishedHook | None = None,
        store: ArenaStore | None = None,
        sessions: Sessions | None = None,  # signed ones, with several processes (cluster.py)
        hooks: GameHooks = LOCAL_HOOKS,  # the cluster's, with several (game_hooks.py)
    ) -> None:
        self.setup = setup
        self.clock = clock
        self.sessions = Sessions() if sessions is None else sessions
        self.lobby = Lobby(
            setup.settings, clock, self._start_game, self._no_match, self._short, setup.modes
        )
        # Told as games start, end, give rounds back or are fenced; and the presence rule,
        # which the abandon watch and every game built here ask.
        self.hooks = hooks
        self.abandon = AbandonWatch(
            setup.settings.abandon_after_s, present=hooks.present, noted=hooks.seat_gone_since
        )
        self.games: dict[str, LiveGame] = {}
        self.finished = self._finished_games(setup, store)
        self.outlets: dict[str, set[Outlet]] = {}
        self._on_finished = on_finished
        self.store = store  # when set, every game is written to it as it is played
        self._recorders: dict[str, GameRecorder] = {}
        self._count = 0
        self.metrics = ArenaMetrics()  # what /metrics says (metrics.py)

    # ---- connections -----------------------------------------------------------------------

    def connect(
        self, participant: Participant, outlet: Outlet, resume: ResumePoint | None = None
    ) -> None:
        """A socket of `participant`: sent where they are, or, when it resumes a game stream
        (resume.py), only what it missed."""
        self.outlets.setdefault(participant.id, set()).add(outlet)
        if resume is None or not self.resume(participant, resume, only=outlet):
            outlet(self.state_frame(participant))

    def resume(
        self, participant: Participant, point: ResumePoint, only: Outlet | None = None
    ) -> bool:
        """Send what `participant` missed in the game `point` names, to one socket (`only`) or
        all of theirs: the frames after it, or a snapshot when they are no longer kept (or the
        game was rebuilt elsewhere: a new stream); then `resumed`. False when that game is not
        theirs here (over and forgotten, or never here): the caller sends the state."""
        game = self.games.get(participant.game or "")
        if game is None or game.id != point.game:
            return False
        self.metrics.resumes += 1
        view = game.view_of(participant)
        outlets = [only] if only is not None else list(view.outlets)
        missing = view.outbox.after(point)
        if missing is None:
            self.metrics.resume_snapshots += 1
            frames: list[F.ServerFrame] = [self._snapshot(game, participant)]
        else:
            frames = list(missing)
        frames.append(F.Resumed(game=game.id, stream=view.outbox.stream, seq=view.outbox.seq))
        for outlet in outlets:
            for frame in frames:
                outlet(frame)
        return True

    def disconnect(self, participant: Participant, outlet: Outlet) -> None:
        left = self.outlets.get(participant.id, set())
        left.discard(outlet)
        if not left and self.lobby.waited(participant) is not None:
            # Their last page closed while queued (its close frame, or the socket found dead
            # by its heartbeat): out of the queue at once, so no newcomer is seated with
            # nobody. A page that reconnects finds the lobby and joins again.
            self.lobby.leave(participant)

    def send(self, participant: Participant, frame: F.ServerFrame) -> None:
        if isinstance(frame, F.Status) and frame.state == "no-match":
            participant.timed_out = True  # their hand-off: the timed-out code (handoff.py)
        for outlet in list(self.outlets.get(participant.id, ())):
            outlet(frame)

    def state_frame(self, participant: Participant) -> F.ServerFrame:
        game = self.games.get(participant.game or "")
        if game is not None and game.task is None and game.result is None:  # shown once stored
            return F.Status(state="waiting", modes=[], waited_s=0.0)
        if game is not None:
            return self._snapshot(game, participant)
        waited = self.lobby.waited(participant)
        state: F.StatusState = "idle" if waited is None else "waiting"
        if waited is None and participant.survey is not None:  # done, or left early
            state = "survey-saved"
        elif waited is None and self.lobby.rounds.done(participant.id):
            state = "rounds-done"
        return self._status(state, participant.id, waited)

    def waiting_frame(self, pid: str, waited_s: float = 0.0) -> F.Status:
        """What someone queued for a match is told, by one process or by several (cluster.py):
        the same frame either way, round count included."""
        return self._status("waiting", pid, waited_s)

    def _status(self, state: F.StatusState, pid: str, waited_s: float | None) -> F.Status:
        return F.Status(
            state=state,
            modes=[
                F.ModeInfo(name=m.name, title=m.title, practice=m.solo, about=m.about)
                for m in self.setup.modes
            ],
            waited_s=waited_s,
            rounds=self._rounds(pid),
        )

    def _rounds(self, pid: str) -> F.Rounds:
        book = self.lobby.rounds
        return F.Rounds(played=book.played(pid), total=book.rounds)

    def _snapshot(self, game: LiveGame, participant: Participant) -> F.ServerFrame:
        frame = game.snapshot(participant)
        if isinstance(frame, F.WholeState):  # where the page is in its stream, as a "game" says
            frame = game.view_of(participant).outbox.snapshot(frame)
        if F.carries_rounds(frame) and not game.mode.solo:
            frame = frame.model_copy(update={"rounds": self._rounds(participant.id)})
        return frame

    # ---- what people do --------------------------------------------------------------------

    def handle(self, participant: Participant, frame: F.ClientFrame) -> None:
        if isinstance(frame, F.Join):
            self._join(participant, frame)
        elif isinstance(frame, F.Leave):
            self._leave(participant)
        elif isinstance(frame, F.Resume):
            if not self.resume(participant, ResumePoint.of(frame)):
                self.send(participant, self.state_frame(participant))
        elif isinstance(frame, F.Ping):
            self.send(participant, F.Pong())  # answered by the socket itself (player_socket.py)
        elif isinstance(frame, F.Survey):
            live = self.games.get(participant.game or "")
            in_game = live is not None and live.result is None
            study = self.setup.settings.study  # its own questions, age bounds
            asked = survey_questions(self.setup)  # worded for the study's game
            participant.survey = check_survey(participant, frame, in_game, study, asked)
            self.lobby.leave(participant)  # their study is over
            participant.ending = ending(participant, self.lobby.rounds)
            if self.store is not None:
                self.store.survey(participant.id, participant.survey)
                self.store.person_details(participant.id, {"study_end": participant.ending})
            self.send(participant, F.Status(state="survey-saved"))
        else:
            game = self.games.get(participant.game or "")
            if game is None:
                raise InputRejected("no-game", "You are not in a game.")
            game.handle(participant, frame)

    def _join(self, participant: Participant, frame: F.Join) -> None:
        if not frame.consent:
            raise InputRejected("consent", "Please read and accept the consent form first.")
        participant.consented = True
        current = self.games.get(participant.game or "")
        if current is not None and current.result is None:
            raise InputRejected("in-game", "You are already in a game.")
        mode = self.setup.mode(frame.mode)
        if mode is None:
            raise InputRejected("bad-mode", f"There is no game mode {frame.mode!r}.")
        participant.game = None
        if participant.survey is not None or participant.withdrawn:
            raise InputRejected("survey-done", "Your part in this study is over.")
        if not mode.solo and self.lobby.rounds.done(participant.id):
            self.send(participant, self.state_frame(participant))  # on to the exit survey
            return
        self.lobby.join(participant, mode)
        self.answer_join(participant)

    def answer_join(self, participant: Participant) -> None:
        """A join is answered by the game it seats them in, once shown (open), or else by
        their state: waiting, also while a new game waits for its row to be stored."""
        game = self.games.get(participant.game or "")
        if game is None or game.task is None:
            self.send(participant, self.state_frame(participant))

    def _leave(self, participant: Participant) -> None:
        self.lobby.leave(participant)
        game = self.games.get(participant.game or "")
        if game is not None and game.result is None:
            raise InputRejected("in-game", "Finish the game first.")
        participant.game = None
        self.send(participant, self.state_frame(participant))

    def tick(self) -> None:
        self.lobby.tick()
        now = self.clock.now()
        self.abandon.tick(self.games.values(), now)
        self._forget_ended(now)

    def _forget_ended(self, now: float) -> None:
        for gid, game in list(self.games.items()):
            if game.ended_at is None or now - game.ended_at < FORGET_ENDED_AFTER_S:
                continue
            del self.games[gid]
            for view in game.views.values():
                if view.participant.game == gid:  # back at the lobby if they come back
                    view.participant.game = None

    # ---- games -----------------------------------------------------------------------------

    def _start_game(
        self, mode: ArenaMode, people: dict[str, Participant], ai: dict[str, str], seed: int
    ) -> None:
        index = self._count
        self._count += 1
        seats = {seat: f"person:{p.id}" for seat, p in people.items()} | ai
        if mode.spec_for is not None:
            spec = mode.spec_for(index, seats, seed)
        else:
            spec = TrialSpec(
                index=index,
                key=f"arena:{mode.name}#{index}",
                game=mode.game.name,
                seed=seed,
                seats=seats,
                params={"duration_s": mode.duration_s},
            )
        spec = replace(spec, params={**spec.params, "arena_mode": mode.name, "solo": mode.solo})
        # The game may seat people elsewhere than the lobby did (it draws sides from its seed).
        by_name = {f"person:{p.id}": p for p in people.values()}
        people = {seat: by_name[a] for seat, a in spec.seats.items() if a in by_name}
        make = live_class(mode)  # the class its mode record declares
        recorder = None if self.store is None else self.store.recorder()
        game = make(
            mode,
            spec,
            people,
            self.setup.agents,
            display_names=self.setup.display_names,
            clock=self.clock,
            on_finish=self._finished,
            sink=None if recorder is None else recorder.sink,
            hooks=self.hooks,
        )
        game.ai_groups = tuple(dict.fromkeys(ai.values()))  # met again if this is no round
        if self.store is not None and recorder is not None:
            self.store.started(recorder, game)  # queued before the first message can be
        self.open(game, recorder)

    def open(self, game: LiveGame, recorder: GameRecorder | None) -> None:
        """Play a game here: a new one, or one taken over from a lost process (cluster.py);
        either was built with this arena's hooks (takeover.rebuilt), so asks its presence rule."""
        if recorder is not None:
            self._recorders[game.id] = recorder
        self.games[game.id] = game
        self.hooks.game_started(game)
        for view in game.views.values():
            person = view.participant
            other = self.games.get(person.game or "")
            if other is not None and other is not game and other.result is None:
                # Never meant to happen (the lobby seats only people in no game): said loudly.
                fault(
                    log,
                    "seated-twice",
                    logging.ERROR,
                    participant=person.id,
                    games=[other.id, game.id],
                )
            person.game = game.id
            person.games_played.append(game.id)
            view.outlets = self.outlets.setdefault(person.id, set())
            view.rounds = None if game.mode.solo else self._rounds(person.id)
        if recorder is None:
            self._show(game)
        else:  # shown once stored: a process dying first leaves no game shown that is lost
            recorder.when_stored(lambda: self._show(game))

    def _show(self, game: LiveGame) -> None:
        """A game begins for its people: each is sent it, and its clock starts."""
        if game.task is not None:  # ended before it was stored (end_now): nothing begins
            return
        for view in game.views.values():
            self.send(view.participant, self._snapshot(game, view.participant))
        game.start()

    def stored_ids(self) -> dict[int, LiveGame]:
        """store id -> live game, of the live games played here."""
        return {
            r.id.value: self.games[gid]
            for gid, r in self._recorders.items()
            if r.id.value is not None and self.games[gid].result is None
        }

    def give_up(self, game: LiveGame) -> None:
        """Stop playing a game another process has claimed (cluster.py), writing nothing more:
        its new owner plays it on from the store."""
        self._recorders.pop(game.id, None)
        self.games.pop(game.id, None)
        if game.task is not None:
            game.task.cancel()

    def _finished(self, game: LiveGame) -> None:
        recorder = self._recorders.pop(game.id, None)
        if recorder is not None:  # to the study (run) the game started in
            recorder.bridge.ended(recorder, game)
        self.hooks.game_ended(game)
        record = game.record()
        if any(game.mode is m for m in self.setup.modes):  # not a game of a closed study
            self.finished.append(record)
            if give_rounds_back(game, self.lobby.rounds):  # several processes share the book
                self.hooks.rounds_given_back(game)
        if self._on_finished is not None:
            try:
                self._on_finished(record)
            except Exception:
                log.exception("could not keep game %s", game.id)

    def _short(self, participant: Participant, excused: int) -> None:
        """Their open witness rounds were excused (lobby.py): on to the exit survey."""
        log.info(
            "%s: %d witness round(s) excused, no interrogator in time", participant.id, excused
        )
        self.send(participant, self.state_frame(participant))

    def _no_match(self, participant: Participant, waited: float) -> None:
        self.send(participant, F.Status(state="no-match", waited_s=waited))

    # ---- the study -------------------------------------------------------------------------

    @staticmethod
    def _finished_games(setup: ArenaSetup, store: ArenaStore | None) -> FinishedGames:
        # With a store every game is kept there; memory then needs only the recent ones.
        return FinishedGames(None if store is None else setup.settings.finished_in_memory)

    def open_study(self, setup: ArenaSetup) -> None:
        """From now on new games follow `setup`, in a new study (its own run in the store):
        a fresh lobby, round book and counts. Live games finish under the old setup, in the
        old run. People waiting are sent back to the (new) choice of games."""
        if self.store is None:
            raise ValueError(
                "opening another study needs a store (turinglab serve --store): without one "
                "the current study's games exist only in memory and would be mixed with the new"
            )
        waiting = [w.participant for w in self.lobby.waiting]
        self.store = self.store.for_setup(setup)
        self.setup = setup
        self.lobby = Lobby(
            setup.settings, self.clock, self._start_game, self._no_match, self._short, setup.modes
        )
        self.finished = self._finished_games(setup, self.store)
        for person in waiting:
            self.send(person, self.state_frame(person))

    # ---- admin -----------------------------------------------------------------------------

    def live_games(self) -> list[dict[str, Any]]:
        return [
            {
                "game": g.id,
                "mode": g.mode.name,
                "messages": len(g.table.messages),
                "started_at": g.started_at,
                "seats": {s: a for s, a in g.spec.seats.items()},
            }
            for g in self.games.values()
            if g.result is None
        ]

    def withdraw(self, participant: Participant) -> None:
        """Consent withdrawn after taking part (handoff.py): out of the queue, and their data
        marked withdrawn, which every export leaves out."""
        participant.withdrawn = True
        self.lobby.leave(participant)
        if self.store is not None:
            self.store.person_details(participant.id, {"withdrawn": True})

    @staticmethod
    def person_entry(p: Participant) -> dict[str, Any]:
        """A participant as the export lists them."""
        entry: dict[str, Any] = {
            "consented": p.consented,
            "recruitment": dict(p.recruitment),
            "games": list(p.games_played),
            "survey": p.survey,
        }
        if p.ending is not None:
            entry["study_end"] = dict(p.ending)
        if p.withdrawn:
            entry["withdrawn"] = True
        return entry

    def export(self) -> dict[str, Any]:
        """Study games and practice games apart: practice is never study data; nothing of a
        participant who withdrew."""
        gone = frozenset(p.id for p in self.sessions.by_id.values() if p.withdrawn)
        finished = without_withdrawn(self.finished, gone)
        return {
            "games": [g for g in finished if not g["solo"]],
            "practice_games": [g for g in finished if g["solo"]],
            "participants": [
                {"participant": p.id, **self.person_entry(p)}
                for p in self.sessions.by_id.values()
                if not p.withdrawn
            ],
            "withdrawn_participants": len(gone),
        }
