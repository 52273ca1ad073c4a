"""What an operator scrapes: `/metrics` in Prometheus' text format, and fault log lines.

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
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from turinglab.arena.cluster import Cluster
    from turinglab.arena.hub import Arena

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


def fallbacks_here(arena: Arena, cluster: Cluster | None) -> int:
    """Interrogators this process drew for a person who met an AI: no witness was free at
    their drawn time (matchmaking_wait.py in one process, shared_blind.py in several)."""
    blind = arena.lobby.blind
    here = 0 if blind is None else blind.fallbacks
    shared = getattr(cluster, "blind", None)  # set once the cluster has started
    return here + (0 if shared is None else shared.fallbacks)


def _metric(name: str, kind: str, about: str, value: float | int) -> list[str]:
    full = PREFIX + name
    return [f"# HELP {full} {about}", f"# TYPE {full} {kind}", f"{full} {value}"]


def render_metrics(arena: Arena, cluster: Cluster | None) -> str:
    m = arena.metrics
    live = sum(1 for g in arena.games.values() if g.result is None)
    store = arena.store
    failures = failed_writes = 0
    if store is not None:
        failures = getattr(store.writer, "failures", 0)
        failed_writes = getattr(store.writer, "failed_writes", 0)
    rows: list[list[str]] = [
        _metric("games_live", "gauge", "Games being played in this process.", live),
        _metric(
            "people_connected",
            "gauge",
            "Participants with an open socket here.",
            sum(1 for outlets in arena.outlets.values() if outlets),
        ),
        _metric("frames_sent_total", "counter", "Frames sent to participants.", m.frames_sent),
        _metric(
            "socket_connects_total",
            "counter",
            "Websockets opened (first connections and reconnects).",
            m.socket_connects,
        ),
        _metric(
            "resumes_total",
            "counter",
            "Game streams resumed after a reconnect or a gap (frames resent or a snapshot).",
            m.resumes,
        ),
        _metric(
            "resume_snapshots_total",
            "counter",
            "Resumes answered with a snapshot (frames no longer kept, or a new stream).",
            m.resume_snapshots,
        ),
        _metric(
            "matchmaking_fallbacks_total",
            "counter",
            "Interrogators drawn for a person witness who met an AI (none free in time).",
            fallbacks_here(arena, cluster),
        ),
        _metric(
            "store_write_failures_total",
            "counter",
            "Store write attempts that failed (retried).",
            failures,
        ),
        _metric(
            "store_writes_lost_total",
            "counter",
            "Store writes given up after retrying.",
            failed_writes,
        ),
    ]
    if cluster is not None:
        name = PREFIX + "relay_latency_seconds"
        rows += [
            _metric("takeovers_total", "counter", "Games taken over here.", m.takeovers),
            _metric("fenced_total", "counter", "Games given up here (fenced).", m.fenced),
            _metric(
                "redis_reconnects_total",
                "counter",
                "Times the Redis listener reconnected.",
                m.redis_reconnects,
            ),
            _metric(
                "redis_commands_lost_total",
                "counter",
                "Redis commands dropped after retrying.",
                m.redis_commands_lost,
            ),
            _metric(
                "catchups_total",
                "counter",
                "Missed frames asked of a game's owner after Redis came back.",
                m.catchups,
            ),
            [
                f"# HELP {name} From a game's owner publishing a frame to its delivery here.",
                f"# TYPE {name} histogram",
                *m.relay.lines(name),
            ],
        ]
    return "\n".join(line for row in rows for line in row) + "\n"


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
