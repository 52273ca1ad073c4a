"""The port a game reads a person through: what they do arrives as `HumanInput`s.

A seat played by a person (the arena's `HumanAgent`, a scripted person in tests) has an agent
with `next_input`; the game waits on it instead of calling the agent. What the person may see
does not go through here: the game reports events to the table's observer (games/events.py).
The engine knows only this port, never the transport behind it.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from turinglab.agents.base import Agent
from turinglab.agents.human import HumanInput
from turinglab.games.table import Seat


@runtime_checkable
class Person(Protocol):
    participant: str  # the person's anonymous id

    async def next_input(self) -> HumanInput: ...


def is_person(agent: Agent | object) -> bool:
    return isinstance(agent, Person)


def person_at(seats: dict[str, Seat], seat: str) -> Person | None:
    """The person playing `seat`, or None when an agent plays it."""
    agent = seats[seat].agent
    return agent if isinstance(agent, Person) else None
