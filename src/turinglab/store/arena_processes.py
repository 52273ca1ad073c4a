"""Whether an arena process that others find missing in Redis is dead or only cut off from it.

Redis is where the processes see each other live (heartbeats, subscriptions). A process whose
own link to Redis is cut looks there as dead as a killed one, yet its people's pages are still
open on it. While Redis refuses it, it says here that it lives (`say_silent`); a process that
reaches Redis and finds its heartbeat missing asks here first (`notice_silent`), and leaves a
note that it did, which tells the silent one that it is cut off alone — not Redis down for
everyone, when nobody can notice anything.
"""

from __future__ import annotations

import time

from sqlalchemy import insert, select, update

from turinglab.store.database import Store
from turinglab.store.schema import arena_processes as procs


def say_silent(store: Store, run_id: str, process: str) -> float | None:
    """`process` lives but cannot reach Redis (now); returns when another process, reaching
    Redis, last noticed it missing there (wall time), or None."""
    key = (procs.c.run_id == run_id) & (procs.c.process == process)
    now = time.time()
    with store.engine.begin() as conn:
        done = conn.execute(update(procs).where(key).values(silent_at=now))
        if done.rowcount == 0:
            conn.execute(insert(procs).values(run_id=run_id, process=process, silent_at=now))
        noticed = conn.execute(select(procs.c.noticed_at).where(key)).scalar()
    return None if noticed is None else float(noticed)


def notice_silent(store: Store, run_id: str, process: str, within_s: float) -> bool:
    """Whether `process`, missing in Redis, said within `within_s` that it lives (then noted:
    it was noticed now)."""
    key = (procs.c.run_id == run_id) & (procs.c.process == process)
    now = time.time()
    with store.engine.begin() as conn:
        done = conn.execute(
            update(procs).where(key, procs.c.silent_at >= now - within_s).values(noticed_at=now)
        )
    return done.rowcount > 0
