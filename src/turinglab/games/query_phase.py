"""A querying phase: one seat talks with a fresh specimen of a model before the main game.

Used by GTTQ and FDGTTQ (the actor studies the target) and GDGTT (the distinguisher does). The
querier's first reply to its instruction is the specimen's first message. The phase ends when
the querier replies STOP, at the cap, or — when a budget is set — after exactly that many queries.
Only the querier and the specimen see it; it stays in the querier's history afterwards.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from turinglab.games.table import Table

SPECIMEN = "specimen"
PHASE = "query"

_STOP = re.compile(r"\W*stop\W*", re.IGNORECASE)


def is_stop(text: str) -> bool:
    """The querier ends the phase with a message that is just the word STOP."""
    return _STOP.fullmatch(text.strip()) is not None


@dataclass(frozen=True)
class QueryPhase:
    queries: int
    ended_by: str  # "stop" | "budget" | "cap"
    first_seq: int
    last_seq: int


async def run_query_phase(
    table: Table, querier: str, instruction: str, *, budget: int | None, cap: int
) -> QueryPhase:
    first = table.tell(querier, instruction, phase=PHASE)
    queries = 0
    ended_by = "cap"
    last = first
    while True:
        if budget is None and queries >= cap:
            break
        reply = await table.ask(querier, table.view(querier))
        stop = budget is None and is_stop(reply.text)
        # STOP is for the game, not the specimen; decided before the message is stored.
        seen_by = (querier,) if stop else (querier, SPECIMEN)
        last = table.post(querier, reply.text, visible_to=seen_by, phase=PHASE, reply=reply)
        if stop:
            ended_by = "stop"
            break
        queries += 1
        last = await table.speak(SPECIMEN, visible_to=(querier, SPECIMEN), phase=PHASE)
        if budget is not None and queries >= budget:
            ended_by = "budget"
            break
    # The phase's own last message: a game resumed over its stored history (the table's
    # catch-up) is here with messages after it already at the table.
    return QueryPhase(queries, ended_by, first.seq, last.seq)
