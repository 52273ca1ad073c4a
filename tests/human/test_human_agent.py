"""A person as an agent: inputs through a queue, scripted typing."""

from __future__ import annotations

import asyncio

from turinglab.agents.base import CallContext
from turinglab.agents.human import HumanAgent, HumanInput, say, type_at
from turinglab.games.clock import SimulatedClock


async def test_reply_returns_the_next_message_and_keeps_other_input() -> None:
    person = HumanAgent("p", "anon-1")
    person.push(HumanInput("end"))
    person.push(say("hello", "witness_a"))
    reply = await person.reply([], CallContext(seed=0))
    assert reply.text == "hello" and reply.route.backend == "human"
    assert (await person.next_input()).kind == "end"


async def test_scripted_person_types_at_given_times() -> None:
    clock = SimulatedClock(start=0)
    person = HumanAgent("p", "anon-2")
    typing = asyncio.ensure_future(
        type_at(person, clock.sleep, clock.now, [(3, say("a")), (40, say("b"))])
    )
    first = await person.next_input()
    assert (first.text, clock.now()) == ("a", 3)
    second = await person.next_input()
    assert (second.text, clock.now()) == ("b", 40)
    await typing
