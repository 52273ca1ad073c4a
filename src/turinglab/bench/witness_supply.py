"""Does blind matching supply every witness round a study asks for, and does the wait to a game
stay silent about the witness under every arrival process? A simulation of the matching design
itself (arena/core/lobby.py with matchmaking_wait.py's BlindMatcher, on a simulated clock).

Arrivals (`ARRIVALS`) as a study meets them: steady (one every 12 s on average), bursts (groups
of 2–10 within seconds, as recruitment platforms send them, a pause between groups), a trickle
(one every few minutes), and the study's end (a few bursts, then nobody: only the games that
start after the last arrival are kept, `games_after_last`). Each person joins the two-party
mode, plays each game for `game_s` and joins again until their rounds are done (or they are
sent on). It counts who timed out for want of a partner, who had witness rounds excused (the
design's `short_of_witnesses: finish`), the witness rounds people played of those the design
gives them, and every interrogation's wait and witness kind.

    python -m turinglab.bench.witness_supply --people 120 --rounds 4 --arrivals bursts
"""

from __future__ import annotations

import argparse
import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from turinglab.arena.core.lobby import Lobby
from turinglab.arena.core.matchmaking_wait import MatchDesign
from turinglab.arena.core.modes import ArenaMode, ArenaSettings
from turinglab.arena.core.participants import Participant

STEP_S = 0.5  # the arena's tick


class SimClock:
    def __init__(self) -> None:
        self.t = 0.0

    def now(self) -> float:
        return self.t


def steady(n: int, rng: random.Random) -> list[float]:
    return _cumulative(rng.expovariate(1 / 12) for _ in range(n))


def trickle(n: int, rng: random.Random) -> list[float]:
    return _cumulative(rng.uniform(60, 300) for _ in range(n))


def bursts(n: int, rng: random.Random, gap_s: float = 90.0) -> list[float]:
    """Groups of 2–10 within 5 s, exponential gaps (mean `gap_s`) between groups."""
    out: list[float] = []
    t = 0.0
    while len(out) < n:
        out += [t + rng.uniform(0, 5) for _ in range(rng.randint(2, 10))]
        t += rng.expovariate(1 / gap_s)
    return sorted(out[:n])


def _cumulative(gaps: Any) -> list[float]:
    out, t = [], 0.0
    for gap in gaps:
        t += gap
        out.append(t)
    return out


ARRIVALS: dict[str, Callable[[int, random.Random], list[float]]] = {
    "steady": steady,
    "bursts": bursts,
    "trickle": trickle,
    "end": bursts,  # a short study's bursts; its games after the last arrival are kept
}


@dataclass
class Interrogation:
    wait_s: float  # join to game
    person: bool  # the witness is a person
    started: float


@dataclass
class Outcome:
    people: int
    witness_quota: int = 0  # witness rounds per person the design gives
    completed: int = 0  # every round played, or the witness rounds excused
    timed_out: int = 0  # sent on for want of a partner
    excused: int = 0  # people with witness rounds excused
    fallbacks: int = 0  # interrogations drawn "person" that met an AI
    last_arrival: float = 0.0
    witness_rounds: list[int] = field(default_factory=list)
    games: list[Interrogation] = field(default_factory=list)

    @property
    def waits_s(self) -> list[float]:
        return [g.wait_s for g in self.games]

    def games_after_last(self) -> list[Interrogation]:
        return [g for g in self.games if g.started > self.last_arrival]

    def summary(self) -> dict[str, Any]:
        person = sum(g.person for g in self.games)
        return {
            "people": self.people,
            "completed": self.completed,
            "timed_out": self.timed_out,
            "excused": self.excused,
            "witness_rounds_each": self.witness_quota,
            "mean_witness_rounds": round(sum(self.witness_rounds) / max(1, self.people), 3),
            "interrogations": len(self.games),
            "person_witness_share": round(person / max(1, len(self.games)), 3),
            "fallbacks": self.fallbacks,
            "max_interrogator_wait_s": round(max(self.waits_s, default=0.0), 1),
        }


def design_for(share: float, **extra: Any) -> MatchDesign:
    return MatchDesign(human_witness_share=share, wait_min_s=5, wait_max_s=45, **extra)


def simulate(
    people: int,
    rounds: int,
    seed: int,
    *,
    share: float = 0.5,
    arrivals: str = "bursts",
    design: MatchDesign | None = None,
    game_s: float = 240.0,
    max_wait_s: float = 300.0,
    lobby_hook: Callable[[Lobby], None] | None = None,
) -> Outcome:
    rng = random.Random(seed)
    clock = SimClock()
    design = design or design_for(share)
    settings = ArenaSettings(design=design, rounds=rounds, max_wait_s=max_wait_s, seed=seed)
    game: Any = SimpleNamespace(name="sim")  # matching never plays it
    mode = ArenaMode("two-party", "Two", game, "i", {"w": "A"}, ("ai",), verdict="human-or-ai")
    out = Outcome(people)
    ends: list[tuple[float, Participant]] = []
    joined: dict[str, float] = {}

    def start(_mode: Any, seats: dict[str, Participant], _ai: Any, _seed: int) -> None:
        judge = seats["i"]
        wait = clock.t - joined[judge.id]
        out.games.append(Interrogation(wait, len(seats) == 2, clock.t))
        for p in seats.values():
            ends.append((clock.t + game_s, p))

    def timed_out(p: Participant, _waited: float) -> None:
        out.timed_out += 1

    def short(_p: Participant, _n: int) -> None:
        out.excused += 1

    lobby = Lobby(settings, clock, start, timed_out, short, [mode])  # type: ignore[arg-type]
    assert lobby.blind is not None
    lobby.blind.secret = f"sim:{seed}"  # the same draws on every run of this seed
    if lobby_hook is not None:
        lobby_hook(lobby)
    out.witness_quota = lobby.rounds.quota["witness"]
    times = ARRIVALS[arrivals](people, rng)
    out.last_arrival = times[-1]
    everyone = [Participant(id=f"p{i}", token=str(i)) for i in range(people)]

    def join(p: Participant) -> None:
        joined[p.id] = clock.t
        lobby.join(p, mode)

    pending = list(zip(times, everyone, strict=True))
    while pending or ends or lobby.waiting:
        clock.t += STEP_S
        while pending and pending[0][0] <= clock.t:
            join(pending.pop(0)[1])
        for at, p in [e for e in ends if e[0] <= clock.t]:
            ends.remove((at, p))
            if not lobby.rounds.done(p.id):
                join(p)
        lobby.tick()
        if clock.t > 30 * 24 * 3600:
            raise RuntimeError("the simulation did not settle")
    for p in everyone:
        progress = lobby.rounds.progress(p.id)
        out.witness_rounds.append(progress.witnessed)
        out.completed += lobby.rounds.done(p.id)
    assert lobby.blind is not None
    out.fallbacks = lobby.blind.fallbacks
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--people", type=int, default=120)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--share", type=float, default=0.5, help="human_witness_share")
    parser.add_argument("--arrivals", choices=sorted(ARRIVALS), default="bursts")
    parser.add_argument("--wait-min", type=float, default=5.0, help="wait_min_s: the window")
    parser.add_argument("--wait-max", type=float, default=45.0, help="wait_max_s")
    parser.add_argument("--witness-wait", type=float, default=90.0, help="witness_wait_s")
    args = parser.parse_args(argv)
    if args.wait_max < args.wait_min:
        parser.error(f"--wait-max ({args.wait_max:g}) is below --wait-min ({args.wait_min:g})")
    design = MatchDesign(
        human_witness_share=args.share,
        wait_min_s=args.wait_min,
        wait_max_s=args.wait_max,
        witness_wait_s=args.witness_wait,
    )
    results = [
        simulate(args.people, args.rounds, seed, arrivals=args.arrivals, design=design).summary()
        for seed in range(args.seeds)
    ]
    print(json.dumps({"args": vars(args), "runs": results}, indent=1))


if __name__ == "__main__":
    main()
