"""What a Strong Turing Test session taken over (and a live ITT session, on its transport)
gives back to its game: inputs its people gave under an earlier owner, acknowledged and logged
as control events (games/control_log.py), that its stored messages do not hold yet. Each is
given to the game again, so nobody is asked twice and each is said once."""

from __future__ import annotations

from typing import Protocol

from turinglab.agents.human import MESSAGE, HumanInput
from turinglab.arena.core.control_recorder import GameControls
from turinglab.arena.core.modes import ArenaMode
from turinglab.arena.core.person_view import PersonView
from turinglab.games.control_log import Choice, Ended
from turinglab.games.held_message import MessageHeld
from turinglab.games.strong import TIE
from turinglab.games.table import MAIN, Table


class StrongLiveGame(Protocol):
    """What is read and set here of strong_mode.py's live game (which imports this)."""

    views: dict[str, PersonView]
    table: Table
    controls: GameControls
    sent: dict[str, int]  # seat -> the turn a person's last message was for
    chose: int  # the last turn the investigator gave a preference for

    @property
    def mode(self) -> ArenaMode: ...


def input_of(event: Choice | Ended) -> HumanInput:
    """What a person's logged control event hands the game (games/strong.py reads it)."""
    if isinstance(event, Ended):
        return HumanInput("end")
    if event.label == TIE:
        return HumanInput("preference", data={"tie": True})
    return HumanInput("preference", data={"reply": int(event.label)})


def give_back_held(game: StrongLiveGame) -> None:
    """A respondent's answer (the live ITT's human agent's) taken for a turn and not said yet
    (the game says a turn's answers together): their turn shows answered, and the game is
    given it. Before any input is taken: a rebuilt game's people send theirs at once."""
    said = {(m.sender, m.phase) for m in game.table.messages}
    for event in game.controls.log.of(MessageHeld):
        view = game.views.get(event.seat)
        if view is None or (event.seat, event.phase) in said:
            continue
        game.sent[event.seat] = int(event.phase.removeprefix("turn-"))
        view.agent.push(HumanInput(MESSAGE, event.text, channel=MAIN))


def give_back_choices(game: StrongLiveGame) -> None:
    """The investigator's choices and end that the game had not taken yet (its messages do
    not hold them); the views say they are given."""
    judge = game.views.get(game.mode.judge)
    if judge is None:
        return
    said = {(m.sender, m.phase) for m in game.table.messages}
    for event in game.controls.log.events():
        if isinstance(event, Choice) and (judge.seat, f"choose-{event.turn}") not in said:
            game.chose = max(game.chose, event.turn)
            judge.agent.push(input_of(event))
        elif isinstance(event, Ended):
            judge.agent.push(input_of(event))
