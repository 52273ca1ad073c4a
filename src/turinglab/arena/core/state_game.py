"""A live game whose people each get one state frame, sent again whenever it changes (the
Strong Turing Test, the GTT modes, the ITT chat), and how such a game shows an early end: the
same state, ended, with what each person was told (a departure, the researchers' end)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from turinglab.arena.core import frames as F
from turinglab.arena.core.live import LiveGame
from turinglab.arena.core.participants import Participant
from turinglab.arena.core.person_view import PersonView
from turinglab.games.control_log import InputAccepted


class StateFrameGame(LiveGame):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._notes: dict[str, str] = {}  # seat -> why the game ended early (abandon.py)

    def _push(self) -> None:
        """Send each person their state as it is now."""
        raise NotImplementedError

    def _show_end_now(self, result: Any, notes: Mapping[str, str]) -> None:
        """Ended from outside its play (a person left, the admin ended it): the end says why."""
        self._notes = dict(notes)
        self._ended(result)
        self._push()
        self._on_finish(self)

    def _keep_told(self, told: Mapping[str, str | None]) -> None:
        """For `already_over` (stored_end.py): what each person was told, where it was said."""
        self._notes = {seat: note for seat, note in told.items() if note is not None}

    def handle_once(
        self,
        participant: Participant,
        frame: F.ClientFrame,
        apply: Callable[[PersonView, F.ClientFrame], None],
    ) -> None:
        """As LiveGame's, and an input id once applied is a control event (InputAccepted): a
        page that re-sends it to the process that took the game over is acknowledged there,
        not applied a second time."""
        view = self.view_of(participant)
        key = getattr(frame, "id", None)
        if key is not None and key not in view.applied:
            if InputAccepted(view.seat, key) in self.controls.log.of(InputAccepted):
                view.remember(key)  # applied under an earlier owner: acknowledged below
            else:
                super().handle_once(participant, frame, apply)
                if key in view.applied:  # applied now (a refused input is not remembered)
                    self.controls.record(InputAccepted(view.seat, key), vital=False)
                return
        super().handle_once(participant, frame, apply)
