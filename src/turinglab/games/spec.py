"""What every game shares with the layers above it: a trial's spec, its result, judgements.

A trial is planned once (`TrialSpec`), played at a table, and ends in a `GameResult`. These
types sit in the games layer so that the runner, the store and the analysis can all import them
without importing each other. Game-specific design facts travel in `params` (JSON-able).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

# Outcome statuses every game may use; games add their own (GTT: answered, opening-answer, ...).
FINISHED = "finished"
FLAGGED = "flagged"  # played to the end but unusable (e.g. an AI witness missed its deadline)


def trial_seed(seed: int, key: str) -> int:
    """A trial's seed from the design's seed and the trial's key: reproducible, and the same
    whatever else the plan holds."""
    digest = hashlib.sha256(f"{seed}:{key}".encode()).digest()
    return int.from_bytes(digest[:4], "big")


@dataclass(frozen=True, slots=True)
class TrialSpec:
    """Everything needed to play one trial, fixed before anything runs."""

    index: int  # position in the run's plan
    key: str  # stable human-readable id, e.g. "smollm2>eliza#3"
    game: str  # the game kind: "gtt", "three-party", "two-party", "strong", ...
    seed: int
    seats: Mapping[str, str]  # seat (role) -> agent name
    params: Mapping[str, Any] = field(default_factory=dict)  # game-specific design facts

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "key": self.key,
            "game": self.game,
            "seed": self.seed,
            "seats": dict(self.seats),
            "params": dict(self.params),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TrialSpec:
        return cls(
            index=int(data["index"]),
            key=str(data["key"]),
            game=str(data["game"]),
            seed=int(data["seed"]),
            seats=dict(data["seats"]),
            params=dict(data.get("params") or {}),
        )


@dataclass(frozen=True, slots=True)
class Judgement:
    """A decision a judge seat made: a verdict (who is human), or a preference (Strong TT).

    `verdict` names what was chosen in the game's own terms ("human"/"ai" in two-party, the
    seat judged human in three-party); `choice` is the preferred seat in the Strong TT, with
    `tie` when none was preferred. `turn` numbers the Strong TT's rounds."""

    judge: str  # the judging seat
    kind: str  # "verdict" | "preference"
    verdict: str | None = None
    confidence: float | None = None  # 0–100
    reason: str | None = None
    choice: str | None = None
    tie: bool = False
    turn: int | None = None
    created_at: float | None = None
    details: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The one plain form of a judgement: what the store writes, records and exports."""
        return {
            "judge": self.judge,
            "kind": self.kind,
            "verdict": self.verdict,
            "confidence": self.confidence,
            "reason": self.reason,
            "choice": self.choice,
            "tie": self.tie,
            "turn": self.turn,
            "created_at": self.created_at,
            "details": dict(self.details),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Judgement:
        """Back from `to_json`'s form, or from a stored row (its other columns are ignored)."""
        return cls(
            judge=str(data["judge"]),
            kind=str(data["kind"]),
            verdict=data["verdict"],
            confidence=data["confidence"],
            reason=data["reason"],
            choice=data["choice"],
            tie=bool(data["tie"]),
            turn=data["turn"],
            created_at=data["created_at"],
            details=dict(data["details"] or {}),
        )


@dataclass
class GameResult:
    """How a game ended. `verdict`/`correct` summarise it for the outcome row (GTT: the parsed
    0/1 answer); human-style games put their decisions in `judgements`."""

    status: str
    verdict: int | None = None
    correct: bool | None = None
    details: dict[str, Any] = field(default_factory=dict)
    judgements: list[Judgement] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)  # why the game is excluded from analysis
