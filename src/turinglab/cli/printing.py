"""The console the commands print on, and what a run that is not a GTT prints: its outcomes
by status, and where its analysis is (the study report)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from rich.console import Console

if TYPE_CHECKING:
    from turinglab.store.database import Store

# Piped output (CI logs, README examples) gets a fixed width wide enough for the GTT tables.
console = Console(width=None if sys.stdout.isatty() else 120)


def print_game_outcomes(db: Store, run_id: str, game: str, title: str = "") -> None:
    """A non-GTT run's outcomes by status (its analysis is the study report)."""
    from collections import Counter

    rows = db.results(run_id, include_flagged=True)
    counts = Counter(r.status for r in rows)
    shown = ", ".join(f"{status}: {n}" for status, n in sorted(counts.items())) or "none"
    lead = f"{title}: " if title else ""
    console.print(f"{lead}{game}: {len(rows)} finished games ({shown})", markup=False)
    if game in ("three-party", "two-party", "strong"):
        console.print(
            f"Study report: turinglab report {run_id} --out DIR "
            f"(or turinglab export {run_id} --format study)",
            highlight=False,
        )
