"""Finished games in memory: the most recent ones, and running counts of all of them.

A long study finishes many thousands of games; with a store every one is written there as it
is played, so memory keeps only the last `keep` records (for the admin page and the on-finish
hook's readers) while the counts the admin page shows cover every game. Without a store memory
is the only copy, so everything is kept (`keep=None`) and the admin page says so.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Iterator
from typing import Any

from turinglab.study_export import witness_label

Record = dict[str, Any]


class FinishedGames:
    def __init__(self, keep: int | None) -> None:
        self.keep = keep
        self._records: deque[Record] = deque(maxlen=keep)
        self.total = 0
        self.flagged = 0
        self.per_witness: Counter[tuple[str, str]] = Counter()  # (mode, AI witness group)

    def append(self, record: Record) -> None:
        self._records.append(record)
        self.total += 1
        self.flagged += bool(record["flags"])
        for seat, who in record["seats"].items():
            if who["kind"] == "ai":
                self.per_witness[(record["mode"], witness_label(record, seat))] += 1

    @property
    def kept_all(self) -> bool:
        return self.total == len(self._records)

    def __iter__(self) -> Iterator[Record]:
        return iter(self._records)

    def __len__(self) -> int:
        return len(self._records)
