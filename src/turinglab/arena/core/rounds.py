"""Each participant's way through a study: N rounds, half as interrogator, half as witness,
and one AI witness from every group in a random order (SPEC §2, the three-party paper).

The lobby asks this book who may take which role before it matches two people, and which AI
witness groups to seat for an interrogator. Practice games never count. All draws come from the
lobby's seeded generator, so a study's orders are reproducible from its seed.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

Role = Literal["interrogator", "witness"]


@dataclass
class Progress:
    interrogated: int = 0
    witnessed: int = 0
    excused: int = 0  # witness rounds the design could not give them (`excuse`)
    # Per mode: the AI witness groups this person still has to meet in the current cycle.
    groups_left: dict[str, list[str]] = field(default_factory=dict)

    @property
    def played(self) -> int:
        return self.interrogated + self.witnessed

    @property
    def owed(self) -> int:
        """Counted towards their rounds: those played and those excused."""
        return self.played + self.excused


class RoundBook:
    def __init__(self, rounds: int, rng: random.Random, witness_rounds: int | None = None) -> None:
        if rounds < 1:
            raise ValueError(f"rounds: at least 1 round per participant, not {rounds}")
        self.rounds = rounds
        # Half each by default (an odd N gives the extra round to the interrogator side); a
        # two-party study design sets fewer witness rounds (matchmaking_wait.py).
        witness = rounds // 2 if witness_rounds is None else witness_rounds
        self.quota: dict[Role, int] = {"interrogator": rounds - witness, "witness": witness}
        self.rng = rng
        self._progress: dict[str, Progress] = {}

    def progress(self, pid: str) -> Progress:
        return self._progress.setdefault(pid, Progress())

    def played(self, pid: str) -> int:
        found = self._progress.get(pid)
        return 0 if found is None else found.played

    def done(self, pid: str) -> bool:
        found = self._progress.get(pid)
        return found is not None and found.owed >= self.rounds

    def excuse(self, pid: str) -> int:
        """Their witness rounds still open are excused: no interrogator was sent to a person
        in time (matchmaking_wait.py, `short_of_witnesses: finish`). Returns how many."""
        p = self.progress(pid)
        open_rounds = max(0, self.quota["witness"] - p.witnessed - p.excused)
        p.excused += open_rounds
        return open_rounds

    def may(self, pid: str, role: Role) -> bool:
        p = self.progress(pid)
        taken = p.interrogated if role == "interrogator" else p.witnessed + p.excused
        return taken < self.quota[role]

    def roles(self, a: str, b: str) -> tuple[str, str] | None:
        """(interrogator, witness) for two people, or None when no way round fits their
        quotas. When both ways fit, the order is drawn at random."""
        ways = [(i, w) for i, w in ((a, b), (b, a)) if self.may(i, "interrogator")]
        ways = [(i, w) for i, w in ways if self.may(w, "witness")]
        if not ways:
            return None
        return ways[0] if len(ways) == 1 else self.rng.choice(ways)

    def record(self, pid: str, role: Role) -> None:
        p = self.progress(pid)
        if role == "interrogator":
            p.interrogated += 1
        else:
            p.witnessed += 1

    def unrecord(self, pid: str, role: Role) -> None:
        """Give a round back (its game was abandoned or flagged: arena/core/abandon.py)."""
        p = self.progress(pid)
        if role == "interrogator":
            p.interrogated = max(0, p.interrogated - 1)
        else:
            p.witnessed = max(0, p.witnessed - 1)

    def mirror(self, pid: str, interrogated: int, witnessed: int) -> None:
        """Take counts kept elsewhere (shared_rounds.py: Redis, for several processes)."""
        p = self.progress(pid)
        p.interrogated, p.witnessed = interrogated, witnessed

    def give_groups_back(self, pid: str, mode: str, groups: Sequence[str]) -> None:
        """The groups of a game that was not a round (flagged, abandoned) are met next: a
        witness that failed costs that game only, not the interrogator's meeting its group."""
        queue = self.progress(pid).groups_left.setdefault(mode, [])
        queue[:0] = [g for g in groups if g not in queue]

    def next_groups(self, pid: str, mode: str, groups: Sequence[str], n: int) -> list[str]:
        """The next `n` AI witness groups for this interrogator: every group once, in an order
        drawn for them; once all are met, a fresh order of all of them."""
        queue = self.progress(pid).groups_left.setdefault(mode, [])
        drawn: list[str] = []
        for _ in range(n if groups else 0):
            if not queue:
                queue.extend(groups)
                self.rng.shuffle(queue)
            drawn.append(queue.pop(0))
        return drawn
