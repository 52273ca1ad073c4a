"""A live game whose people each get one state frame, sent again whenever it changes (the
Strong Turing Test, the GTT modes, the ITT chat), and how such a game shows an early end: the
same state, ended, with what each person was told (a departure, the researchers' end)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from turinglab.arena.live import LiveGame


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
