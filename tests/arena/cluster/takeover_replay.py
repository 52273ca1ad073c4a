"""A stored transcript played again by the engine: the takeover tests' check that what the store
holds is a game by the engine's rules, start to end (no line twice, none missing).

The kind's `resume` catches up over every stored message and goes on: nothing is left to say,
so no agent may be asked (`_no_call`), and the game must end.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from turinglab.agents.base import Agent, AgentReply, CallContext, ChatMessage
from turinglab.agents.human import HumanAgent, HumanInput
from turinglab.arena import ArenaSetup
from turinglab.games.kinds import RESUMABLE
from turinglab.games.spec import GameResult, TrialSpec
from turinglab.games.table import Table, TranscriptMessage


async def replayed(
    setup: ArenaSetup,
    mode_name: str,
    spec: TrialSpec,
    said: Sequence[Any],
    given_again: Mapping[str, Sequence[HumanInput]] | None = None,
) -> GameResult:
    """The game of `mode_name` played again over `said` (rows of the messages table, by seq);
    `given_again`: what a seat's person gives again that is no message (a live ITT verdict)."""
    mode = setup.mode(mode_name)
    assert mode is not None, mode_name
    people = {a: HumanAgent(a, a) for a in spec.seats.values() if a.startswith("person:")}
    for seat, inputs in (given_again or {}).items():
        for given in inputs:
            people[spec.seats[seat]].push(given)
    table = Table(seats=mode.game.seats(spec, {**setup.agents, **people}), caller=_no_call, seed=0)
    table.replay(
        [
            TranscriptMessage(
                seq=m.seq,
                sender=m.sender,
                text=m.text,
                visible_to=tuple(m.visible_to.split(",")),
                phase=m.phase,
                created_at=0.0,
                channel=m.channel,
            )
            for m in said
        ]
    )
    resumable = RESUMABLE.of(mode.game)
    assert resumable is not None
    result = await resumable.resume(table, spec, started_at=0.0)
    assert not table.catching_up
    return result


async def _no_call(agent: Agent, history: list[ChatMessage], ctx: CallContext) -> AgentReply:
    raise AssertionError("every message is stored: no agent is asked")
