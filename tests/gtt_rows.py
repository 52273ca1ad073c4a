"""Hand-made GTT result rows for the analysis tests (the shape Store.results returns)."""

from __future__ import annotations

from typing import Any


def trial(
    actor: str,
    dist: str,
    x_is_target: bool,
    verdict: int | None,
    variant: str = "gtt",
    budget: int | None = None,
    *,
    status: str | None = None,
    target: str | None = None,
) -> dict[str, Any]:
    """One finished trial; a missing verdict is a no-answer unless `status` says otherwise."""
    return {
        "variant": variant,
        "actor": actor,
        "distinguisher": dist,
        "target": target or dist,
        "x_is_target": x_is_target,
        "budget": budget,
        "verdict": verdict,
        "correct": None if verdict is None else (verdict == 1) == x_is_target,
        "status": status or ("answered" if verdict is not None else "no-answer"),
        "key": f"{actor}-{dist}",
    }
