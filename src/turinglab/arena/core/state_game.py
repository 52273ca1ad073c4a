"""A live game whose people each get one state frame, sent again whenever it changes (the
Strong Turing Test, the GTT modes, the ITT chat), and how such a game shows an early end: the
same state, ended, with what each person was told (a departure, the researchers' end).

Its page sends each input with an id and sends it again until it gets `ack` for it, so an
input is acknowledged only once all it did is committed: its input id (InputAccepted, a
control event) is written after the effects it had, through the same ordered writer, and the
ack goes when that is committed (the writer commits in order, all before it first). An input
whose effect is a message the game says later (`_ack_when_said`) has its id written once that
message is shown, which is once it is committed (commit_gate.py). Without a store the ack goes
at once; an input id is then only remembered.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from turinglab.arena.core import frames as F
from turinglab.arena.core.live import LiveGame
from turinglab.arena.core.participants import Participant
from turinglab.arena.core.person_view import TOO_LATE, PersonView
from turinglab.games.control_log import InputAccepted


class StateFrameGame(LiveGame):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._notes: dict[str, str] = {}  # seat -> why the game ended early (abandon.py)
        self._said_later = False  # the input being applied becomes a message said later
        self._waiting_said: dict[str, list[str]] = {}  # seat -> input ids awaiting their message

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

    def _ended(self, result: Any) -> None:
        """As LiveGame's; a message sent that the game never said now never will be: its
        input is answered so (else the page would send it again until its next game)."""
        super()._ended(result)
        for seat, keys in self._waiting_said.items():
            view = self.views[seat]
            for key in keys:
                view.acking.discard(key)
                view.send(F.Error(code="too-late", message=TOO_LATE, ref=key))
        self._waiting_said.clear()

    # ---- inputs, applied once and acknowledged once committed -----------------------------

    def handle_once(
        self,
        participant: Participant,
        frame: F.ClientFrame,
        apply: Callable[[PersonView, F.ClientFrame], None],
    ) -> None:
        """Apply an input once, however often its page re-sends it: a known id is
        acknowledged (once committed), not applied again; one applied under an earlier owner
        (its InputAccepted in the stored log) is acknowledged here, not applied a second
        time; a newly applied one is remembered, and acknowledged once what it did is
        committed (this module's docstring). A refused input is not remembered."""
        view = self.view_of(participant)
        if view.already_applied(frame):
            return
        key = getattr(frame, "id", None)
        if key is not None and InputAccepted(view.seat, key) in self.controls.log.of(InputAccepted):
            view.remember(key)
            view.send(F.Ack(ref=key))
            return
        self._said_later = False
        apply(view, frame)
        if key is None:
            return
        view.remember(key)
        view.acking.add(key)
        if self._said_later and self.gate is not None:  # without a store: nothing to wait for
            self._waiting_said.setdefault(view.seat, []).append(key)
        else:
            self._accepted(view, key)

    def _ack_when_said(self) -> None:
        """For `apply`: the input becomes the person's next message, which the game says
        later; it is acknowledged once that message is committed (`_message_shown`)."""
        self._said_later = True

    def _message_shown(self, seat: str) -> None:
        """A message of `seat` is shown (so committed): the input it said is accepted."""
        waiting = self._waiting_said.get(seat)
        if waiting:
            self._accepted(self.views[seat], waiting.pop(0))

    def _accepted(self, view: PersonView, key: str) -> None:
        """Its effects are with the writer: its id goes after them, and the ack once that is
        committed, unless saving failed meanwhile (then the game stops, or moves: the page
        sends it again to the new owner)."""

        def ack() -> None:
            if self.gate is None or self.gate.failed is None:
                view.acking.discard(key)
                view.send(F.Ack(ref=key))

        self.controls.record(InputAccepted(view.seat, key), ack, vital=False)
