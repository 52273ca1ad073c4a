"""Word association responses from any agents (Zhang et al., free association), as `itt
demo-words` makes them: the `itt-response` game (games/itt_response.py) played in-process on
inline cues — the same prompt, post-processing and re-sampling as `turinglab run` on a
`game: itt-response` config. The built-in cue list is ours (nouns, verbs and adjectives of
varied frequency); no shipped package holds human association norms, so the demo dataset is
machine-only (see human_sources.py)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from turinglab.agents.base import Agent
from turinglab.games.itt_response import ITTResponseExperiment, ITTResponseGame
from turinglab.games.kinds import GameContext
from turinglab.itt.dataset import Response
from turinglab.itt.generate import play_game, response_rows

DEMO_CUES = (
    "apple", "river", "doctor", "window", "music", "winter", "garden", "money", "bread", "train",
    "run", "sing", "build", "forget", "climb", "teach", "break", "listen", "grow", "drive",
    "happy", "dark", "soft", "ancient", "brave", "empty", "quiet", "bitter", "bright", "strange",
)  # fmt: skip


@dataclass(frozen=True)
class AssociationRun:
    rows: list[Response]
    dropped: list[dict[str, str]]  # agent, cue, raw answer, why it was dropped
    errors: list[dict[str, str]]


def words_experiment(
    agents: Sequence[str], cues: Sequence[str] = DEMO_CUES, *, seed: int = 0, resamples: int = 2
) -> ITTResponseExperiment:
    return ITTResponseExperiment(
        game="itt-response",
        task="word-association",
        responders=list(agents),
        cues=list(cues),
        max_resamples=resamples,
        seed=seed,
    )


async def generate_associations(
    agents: Mapping[str, Agent],
    cues: Sequence[str] = DEMO_CUES,
    *,
    seed: int = 0,
    resamples: int = 2,
) -> AssociationRun:
    game = ITTResponseGame(
        words_experiment(list(agents), cues, seed=seed, resamples=resamples), GameContext()
    )
    run = await play_game(game, agents, seed=seed)
    dropped = [
        {
            "agent": p.spec.seats["responder"],
            "cue": str(p.spec.params["stimulus"]),
            "raw": p.result.details["raw"],
            "why": p.result.details["refused"][-1]["why"],
        }
        for p in run.played
        if p.result.flags
    ]
    return AssociationRun(response_rows(run.played, prefix="wa"), dropped, run.errors)
