"""Calling an AI seat inside a timed game: a per-call deadline on the game's clock.

Live games (a person is at the table) give each AI call, retries included, a deadline; a call
that misses it or fails with an AgentError becomes a `MissedCall`, which the game turns into a
FLAGGED result — never a verdict, never a silent gap. Batch runs (no person) pass no deadline:
errors propagate unchanged so the runner retries the attempt, and the call holds the clock so
that a model's compute time is not game time.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, replace

from turinglab.agents.base import AgentReply, ChatMessage, without_image_markers
from turinglab.agents.errors import AgentError
from turinglab.games.table import Table


@dataclass(frozen=True)
class MissedCall(Exception):
    """An AI seat did not answer in time (or failed) during a live game."""

    seat: str
    reason: str

    def __str__(self) -> str:
        return f"{self.seat}: {self.reason}"


async def call_seat(
    table: Table,
    seat_id: str,
    history: list[ChatMessage],
    *,
    deadline_s: float | None,
    choices: tuple[str, ...] = (),
) -> AgentReply:
    """Ask a seat's agent; with a deadline, a late or failed call raises MissedCall. The
    reply comes without image markers (a live game shows it to a person)."""
    reply = await _call_seat(table, seat_id, history, deadline_s=deadline_s, choices=choices)
    return replace(reply, text=without_image_markers(reply.text))


async def _call_seat(
    table: Table,
    seat_id: str,
    history: list[ChatMessage],
    *,
    deadline_s: float | None,
    choices: tuple[str, ...],
) -> AgentReply:
    if deadline_s is None:
        async with table.clock.hold():
            return await table.ask(seat_id, history, choices=choices)
    call = asyncio.ensure_future(table.ask(seat_id, history, choices=choices))
    timer = asyncio.ensure_future(table.clock.sleep(deadline_s))
    try:
        await asyncio.wait({call, timer}, return_when=asyncio.FIRST_COMPLETED)
    except BaseException:
        call.cancel()  # the game was cancelled while waiting: do not leave the call running
        raise
    finally:
        timer.cancel()
    if not call.done():
        call.cancel()
        raise MissedCall(seat_id, f"no reply within the {deadline_s:g} s deadline")
    try:
        return call.result()
    except AgentError as err:
        raise MissedCall(seat_id, f"{type(err).__name__}: {err}") from err
