"""Games played in-process for the offline demos (`itt demo`, `itt demo-words`), and their
conversion into dataset rows. For studies, `turinglab run` plays the same games (conversation,
itt-response) with resume, retries and several workers, and `turinglab export RUN --format itt`
turns that run into these rows (itt/from_run.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from turinglab.agents.base import Agent
from turinglab.agents.errors import AgentError
from turinglab.agents.retry import Caller, RetryPolicy
from turinglab.games.conversation import ConversationExperiment, ConversationGame
from turinglab.games.kinds import Game, GameContext
from turinglab.games.spec import GameResult, TrialSpec
from turinglab.games.table import Table
from turinglab.itt.dataset import Response


@dataclass(frozen=True)
class Played:
    spec: TrialSpec
    result: GameResult


@dataclass
class PlayedRun:
    played: list[Played]
    errors: list[dict[str, str]] = field(default_factory=list)  # trial key, error


async def play_game(
    game: Game,
    agents: Mapping[str, Agent],
    *,
    concurrency: int = 2,
    seed: int = 0,
    on_done: Callable[[Played], None] | None = None,
) -> PlayedRun:
    """Play every planned trial through the retrying Caller (per-endpoint limits); a trial whose
    agent kept failing is recorded in `errors` and the others go on."""
    caller = Caller(RetryPolicy(retries=3), default_limit=concurrency, seed=seed)
    gate = asyncio.Semaphore(concurrency)
    run = PlayedRun([])

    async def one(spec: TrialSpec) -> None:
        async with gate:
            table = Table(game.seats(spec, agents), caller, spec.seed)
            try:
                played = Played(spec, await game.play(table, spec))
            except AgentError as err:
                run.errors.append({"trial": spec.key, "error": str(err)})
                return
        run.played.append(played)
        if on_done is not None:
            on_done(played)

    await asyncio.gather(*(one(s) for s in game.plan()))
    run.played.sort(key=lambda p: p.spec.index)
    return run


async def play_conversations(
    experiment: ConversationExperiment,
    agents: Mapping[str, Agent],
    *,
    concurrency: int = 2,
    on_done: Callable[[Played], None] | None = None,
) -> list[Played]:
    """Every planned conversation; an agent that kept failing stops the demo."""
    game = ConversationGame(experiment, GameContext())
    run = await play_game(
        game, agents, concurrency=concurrency, seed=experiment.seed, on_done=on_done
    )
    if run.errors:
        raise RuntimeError(f"conversation {run.errors[0]['trial']}: {run.errors[0]['error']}")
    return run.played


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


def response_rows(played: Sequence[Played], prefix: str = "mr") -> list[Response]:
    """Dataset rows for played `itt-response` trials (one per answer, post-processed text);
    flagged trials (every reply refused by the task's controls) are left out."""
    rows: list[Response] = []
    for p in played:
        if p.result.flags:
            continue
        d = p.result.details
        agent = next(iter(p.spec.seats.values()))
        rows.append(
            Response.model_validate(
                {
                    "item": f"{prefix}-{agent}-{d['stimulus_id']}-{d['repetition']}",
                    "task": d["task"],
                    "stimulus_id": d["stimulus_id"],
                    "stimulus": d["stimulus"],
                    "stimulus_file": d["stimulus_file"],
                    "target": d["target"],
                    "source": "machine",
                    "agent": agent,
                    "text": d["response"],
                    "raw": d["raw"],  # an extra column: the reply before post-processing
                }
            )
        )
    return rows
