"""Machine conversations played in-process for the offline demo (`itt demo`), and their
conversion into dataset rows. For studies, `turinglab run` on a `game: conversation` config plays
the same game with resume, retries and several workers, and `turinglab export RUN --format itt`
turns that run into these rows."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from turinglab.agents.base import Agent
from turinglab.agents.retry import Caller, RetryPolicy
from turinglab.games.conversation import ConversationExperiment, ConversationGame
from turinglab.games.kinds import GameContext
from turinglab.games.spec import GameResult, TrialSpec
from turinglab.games.table import Table
from turinglab.itt.dataset import Response


@dataclass(frozen=True)
class Played:
    spec: TrialSpec
    result: GameResult


async def play_conversations(
    experiment: ConversationExperiment,
    agents: Mapping[str, Agent],
    *,
    concurrency: int = 2,
    on_done: Callable[[Played], None] | None = None,
) -> list[Played]:
    """Play every planned conversation through the retrying Caller (per-endpoint limits)."""
    game = ConversationGame(experiment, GameContext())
    caller = Caller(RetryPolicy(retries=3), default_limit=concurrency, seed=experiment.seed)
    gate = asyncio.Semaphore(concurrency)

    async def one(spec: TrialSpec) -> Played:
        async with gate:
            table = Table(game.seats(spec, agents), caller, spec.seed)
            played = Played(spec, await game.play(table, spec))
        if on_done is not None:
            on_done(played)
        return played

    return list(await asyncio.gather(*(one(s) for s in game.plan())))


def conversation_rows(played: Sequence[Played], prefix: str = "mm") -> list[Response]:
    """Dataset rows (one per message) for played conversations; flagged ones are left out."""
    rows: list[Response] = []
    for p in played:
        if p.result.flags:
            continue
        cid = f"{prefix}-{p.spec.index:04d}"
        topic = str(p.result.details["topic"])
        for m in p.result.details["transcript"]:
            agent = p.spec.seats[m["speaker"]]
            rows.append(
                Response(
                    item=f"{cid}-{m['turn']:02d}",
                    task="conversation",
                    stimulus_id=cid,
                    stimulus=topic,
                    source="machine",
                    agent=agent,
                    text=m["text"] or "…",
                    conversation=cid,
                    turn=m["turn"],
                    speaker=m["speaker"],
                    topic=topic,
                )
            )
    return rows
