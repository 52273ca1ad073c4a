"""What each person at a live game is shown when it ends: who each witness was, the verdict,
and why a game will not count when it will not (its process died, saving failed, a fault)."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from turinglab.arena.core import frames as F
from turinglab.arena.core.commit_gate import STORE_LOST
from turinglab.arena.core.person_view import ALIASES
from turinglab.games.spec import FLAGGED, GameResult

SERVER_LOST = "arena: server lost"  # the flag of a game its process died in, not rebuilt
LOST_TEXT = (
    "The server running this game stopped before the game ended. Everything said so far is "
    "kept, but this game will not count. Sorry, and thank you for playing."
)
STORE_LOST_TEXT = (
    "Saving this game failed, so it ended here. Everything saved so far is kept, but this "
    "game will not count. Sorry, and thank you for playing."
)

FLAGGED_TEXT = (
    "Something went wrong on our side (an AI witness failed or time ran out); this game will "
    "not count. Thank you for playing."
)


def flagged_text(result: GameResult, otherwise: str) -> str | None:
    """Why a game will not count, in plain words (None: it counts): its process died, saving
    failed, or `otherwise` (each kind's words for any other fault)."""
    if SERVER_LOST in result.flags:
        return LOST_TEXT
    if STORE_LOST in result.flags:
        return STORE_LOST_TEXT
    return otherwise if result.status == FLAGGED or result.flags else None


def reveal_for(
    seat: str,
    result: GameResult,
    *,
    witnesses: Sequence[str],
    humans: Collection[str],
    agents: Mapping[str, str],
    display_names: Mapping[str, str],
) -> F.Reveal:
    """The reveal for the person at `seat`. `witnesses`: the witness seats, in the order of
    the interrogator's aliases; `humans`: the seats people sit at; `agents`: seat -> agent."""
    judge_aliases = dict(zip(witnesses, ALIASES, strict=False))  # seat -> alias
    sides = []
    for witness, alias in judge_aliases.items():
        if witness in humans:
            sides.append(F.Side(channel=alias, kind="human", name="a person"))
        else:
            agent = agents[witness]
            name = display_names.get(agent, agent)
            sides.append(F.Side(channel=alias, kind="ai", name=name))
    verdict = next((j for j in result.judgements if j.kind == "verdict"), None)
    chosen = None
    if verdict is not None and verdict.verdict is not None:
        chosen = judge_aliases.get(verdict.verdict, verdict.verdict)
    flagged = flagged_text(result, FLAGGED_TEXT)
    return F.Reveal(
        sides=sides,
        you=judge_aliases.get(seat),
        verdict=chosen,
        confidence=None
        if verdict is None or verdict.confidence is None
        else round(verdict.confidence),
        correct=result.correct,
        flagged=flagged,
    )
