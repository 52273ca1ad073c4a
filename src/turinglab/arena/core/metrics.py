"""What an operator scrapes: the counters behind `/metrics` (rendered by metrics_page.py), and
fault log lines.

Written by hand (the format is a few lines of text) rather than with `prometheus_client`,
which is not a dependency: its global registry would also be shared by every app a test
process builds. Counters only ever grow within a process; Prometheus' `rate()` turns
`turinglab_arena_frames_sent_total` into frames per second.

Faults (Redis lost or back, takeovers, fenced games, lost commands) are also logged as one
JSON object per line with a UTC timestamp, so a log collector can pick them out and order them
across processes.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import json
import logging
import time
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from typing import Any

PREFIX = "turinglab_arena_"
# Seconds: a frame relayed between processes (owner publishes -> socket's process delivers).
RELAY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


class Histogram:
    def __init__(self, buckets: Iterable[float]) -> None:
        self.bounds = tuple(sorted(buckets))
        self.counts = [0] * (len(self.bounds) + 1)  # the last: above every bound (+Inf only)
        self.sum = 0.0
        self.count = 0

    def observe(self, value: float) -> None:
        self.counts[bisect.bisect_left(self.bounds, value)] += 1
        self.sum += value
        self.count += 1

    def lines(self, name: str) -> list[str]:
        out, running = [], 0
        for bound, n in zip(self.bounds, self.counts, strict=False):
            running += n
            out.append(f'{name}_bucket{{le="{bound:g}"}} {running}')
        out.append(f'{name}_bucket{{le="+Inf"}} {self.count}')
        out.append(f"{name}_sum {self.sum:.6f}")
        out.append(f"{name}_count {self.count}")
        return out


class ArenaMetrics:
    """This process's counts; the arena, the cluster and the socket loop add to them."""

    def __init__(self) -> None:
        self.frames_sent = 0  # frames written to participants' sockets by this process
        self.relay = Histogram(RELAY_BUCKETS)
        self.takeovers = 0  # games taken over here from a process that died
        self.fenced = 0  # games this process stopped playing: another one had claimed them
        self.redis_reconnects = 0  # the Redis listener lost its connection and got it back
        self.redis_commands_lost = 0  # commands dropped after retrying (redis_outbox.SEND_RETRY_S)
        self.socket_connects = 0  # sockets opened; a reconnecting page opens another
        self.catchups = 0  # people asked their game's owner for missed frames (after Redis)
        self.resumes = 0  # game streams resumed here (a reconnect, a gap, a catch-up)
        self.resume_snapshots = 0  # of those, answered with a snapshot, not the frames


def fault(logger: logging.Logger, event: str, level: int = logging.WARNING, **fields: Any) -> None:
    """One fault as one line of JSON: when (UTC), what, and its details."""
    when = datetime.now(UTC).isoformat(timespec="milliseconds")
    logger.log(level, json.dumps({"ts": when, "event": event, **fields}, default=str))


SLOW_S = 10.0  # a person's connect or input still being handled after this is logged


@contextlib.contextmanager
def said_if_slow(logger: logging.Logger, event: str, **fields: Any) -> Iterator[None]:
    """Log `event` once the block has run SLOW_S seconds (and, when it ends, how long it
    took): a person's socket is read only between inputs, so one stuck there hears nothing."""
    began = time.monotonic()
    timer = asyncio.get_running_loop().call_later(
        SLOW_S, lambda: fault(logger, event, after_s=SLOW_S, **fields)
    )
    try:
        yield
    finally:
        timer.cancel()
        took = time.monotonic() - began
        if took >= SLOW_S:
            fault(logger, event + "-done", seconds=round(took, 3), **fields)


def metric(name: str, kind: str, about: str, value: float | int) -> list[str]:
    """One metric's rows in Prometheus' text format."""
    full = PREFIX + name
    return [f"# HELP {full} {about}", f"# TYPE {full} {kind}", f"{full} {value}"]
