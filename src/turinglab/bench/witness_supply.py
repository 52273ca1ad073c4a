"""Does blind matching supply every witness round a study asks for? A simulation of the
matching design itself (arena/lobby.py with matchmaking_wait.py's BlindMatcher, on a simulated
clock), with arrivals as a recruitment platform sends them: bursts of 2–10 people within
seconds, a pause between bursts.

Each person joins the two-party mode, plays each game for `game_s` and joins again until their
rounds are done (or they are sent on). It counts who timed out for want of a partner, who had
witness rounds excused (the design's `short_of_witnesses: finish`), how many witness rounds
people played, and the longest wait of an interrogator (the design's drawn range).

    python -m turinglab.bench.witness_supply --people 120 --rounds 4 --seed 1
"""

from __future__ import annotations

import argparse
import json
import random
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from turinglab.arena.lobby import Lobby
from turinglab.arena.matchmaking_wait import MatchDesign
from turinglab.arena.modes import ArenaMode, ArenaSettings
from turinglab.arena.sessions import Participant

STEP_S = 0.5  # the arena's tick


class SimClock:
    def __init__(self) -> None:
        self.t = 0.0

    def now(self) -> float:
        return self.t


@dataclass
class Outcome:
    people: int
    completed: int = 0  # every round played, or the witness rounds excused
    timed_out: int = 0  # sent on for want of a partner
    excused: int = 0  # people with witness rounds excused
    witness_rounds: list[int] = field(default_factory=list)
    waits_s: list[float] = field(default_factory=list)  # join to game, interrogators

    def summary(self) -> dict[str, Any]:
        return {
            "people": self.people,
            "completed": self.completed,
            "timed_out": self.timed_out,
            "excused": self.excused,
            "mean_witness_rounds": round(sum(self.witness_rounds) / max(1, self.people), 3),
            "max_interrogator_wait_s": round(max(self.waits_s, default=0.0), 1),
        }


def simulate(
    people: int,
    rounds: int,
    seed: int,
    *,
    share: float = 0.5,
    game_s: float = 240.0,
    burst_gap_s: float = 90.0,
    max_wait_s: float = 300.0,
) -> Outcome:
    rng = random.Random(seed)
    clock = SimClock()
    design = MatchDesign(
        human_witness_share=share, wait_min_s=5, wait_max_s=45, short_of_witnesses="finish"
    )
    settings = ArenaSettings(design=design, rounds=rounds, max_wait_s=max_wait_s, seed=seed)
    game: Any = SimpleNamespace(name="sim")  # matching never plays it
    mode = ArenaMode("two-party", "Two", game, "i", {"w": "A"}, ("ai",), verdict="human-or-ai")
    out = Outcome(people)
    ends: list[tuple[float, Participant]] = []
    joined: dict[str, float] = {}

    def start(_mode: Any, seats: dict[str, Participant], _ai: Any, _seed: int) -> None:
        for seat, p in seats.items():
            if seat == "i":
                out.waits_s.append(clock.t - joined[p.id])
            ends.append((clock.t + game_s, p))

    def timed_out(p: Participant, _waited: float) -> None:
        out.timed_out += 1

    def short(_p: Participant, _n: int) -> None:
        out.excused += 1

    lobby = Lobby(settings, clock, start, timed_out, short)  # type: ignore[arg-type]
    arrivals: list[float] = []
    t = 0.0
    while len(arrivals) < people:  # bursts of 2–10 within seconds, then a pause
        for _ in range(rng.randint(2, 10)):
            arrivals.append(t + rng.uniform(0, 5))
        t += rng.expovariate(1 / burst_gap_s)
    arrivals = sorted(arrivals[:people])
    everyone = [Participant(id=f"p{i}", token=str(i)) for i in range(people)]

    def join(p: Participant) -> None:
        joined[p.id] = clock.t
        lobby.join(p, mode)

    pending = list(zip(arrivals, everyone, strict=True))
    while pending or ends or lobby.waiting:
        clock.t += STEP_S
        while pending and pending[0][0] <= clock.t:
            join(pending.pop(0)[1])
        for at, p in [e for e in ends if e[0] <= clock.t]:
            ends.remove((at, p))
            if not lobby.rounds.done(p.id):
                join(p)
        lobby.tick()
        if clock.t > 10 * 24 * 3600:
            raise RuntimeError("the simulation did not settle")
    for p in everyone:
        progress = lobby.rounds.progress(p.id)
        out.witness_rounds.append(progress.witnessed)
        out.completed += lobby.rounds.done(p.id)
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--people", type=int, default=120)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--share", type=float, default=0.5, help="human_witness_share")
    args = parser.parse_args(argv)
    results = [
        simulate(args.people, args.rounds, seed, share=args.share).summary()
        for seed in range(args.seeds)
    ]
    print(json.dumps({"args": vars(args), "runs": results}, indent=1))


if __name__ == "__main__":
    main()
