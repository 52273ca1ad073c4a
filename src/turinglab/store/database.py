"""The store: SQLite by default, PostgreSQL (or anything SQLAlchemy speaks) by URL.

`Store` is the one class the rest of Turing Lab uses; it is made of one part per concern:

- connection.py — the engine, session names, schema upgrades, write transactions;
- runs.py — plan, find, list, resolve and delete runs;
- leases.py — what is left of a run and the row leases several processes claim it with;
- game_writes.py — games started, messages said, games ended (functions of a `Connection`,
  so that the runner's writer thread can commit many in one transaction, store/writer.py);
- reading.py — results, games, seats, judgements, transcripts;
- records.py — the typed records these take and give, and their row conversions.

Everything importable from here before the split still is.
"""

from __future__ import annotations

from turinglab.store.connection import (
    DEFAULT_STORE,
    IDLE_IN_TRANSACTION_MS,
    StoreBase,
    StoreError,
    store_url,
)
from turinglab.store.game_writes import GameWritesMixin
from turinglab.store.leases import LeasesMixin
from turinglab.store.reading import ReadingMixin
from turinglab.store.records import (
    FAILED,
    FINISHED,
    FLAGGED,
    IMAGE_PARTS,
    INTERRUPTED,
    PLAYING,
    SUPERSEDED,
    GameEnd,
    GameRecord,
    GameStart,
    JudgementRecord,
    MessageRecord,
    PendingTrial,
    ResultRecord,
    RunInfo,
    RunState,
    SeatRecord,
    analysis_rows,
)
from turinglab.store.runs import RunsMixin

__all__ = [
    "DEFAULT_STORE",
    "FAILED",
    "FINISHED",
    "FLAGGED",
    "IDLE_IN_TRANSACTION_MS",
    "IMAGE_PARTS",
    "INTERRUPTED",
    "PLAYING",
    "SUPERSEDED",
    "GameEnd",
    "GameRecord",
    "GameStart",
    "JudgementRecord",
    "MessageRecord",
    "PendingTrial",
    "ResultRecord",
    "RunInfo",
    "RunState",
    "SeatRecord",
    "Store",
    "StoreError",
    "analysis_rows",
    "store_url",
]


class Store(RunsMixin, LeasesMixin, GameWritesMixin, ReadingMixin, StoreBase):
    """A store of runs: open it by URL or path (`Store("runs.db")`); its methods come from
    the parts above, each a subclass of `StoreBase`."""
