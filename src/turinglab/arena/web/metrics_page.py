"""The `/metrics` page: this process's counters (metrics.py) in Prometheus' text format.

Apart from the counters because it reads the whole arena through its `Hub` (hub_port.py), whose
parts themselves count into metrics.py: here nothing below the hub imports the hub. What only
several processes count (takeovers, Redis) the hub adds (`Hub.metric_rows`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from turinglab.arena.core.metrics import metric

if TYPE_CHECKING:
    from turinglab.arena.core.hub_port import Hub


def render_metrics(hub: Hub) -> str:
    """The arena's rows, then the hub's own (the cluster's, with several processes)."""
    arena = hub.arena
    m = arena.metrics
    live = sum(1 for g in arena.games.values() if g.result is None)
    store = arena.store
    failures = failed_writes = 0
    if store is not None:
        failures = getattr(store.writer, "failures", 0)
        failed_writes = getattr(store.writer, "failed_writes", 0)
    rows: list[list[str]] = [
        metric("games_live", "gauge", "Games being played in this process.", live),
        metric(
            "people_connected",
            "gauge",
            "Participants with an open socket here.",
            sum(1 for outlets in arena.outlets.values() if outlets),
        ),
        metric("frames_sent_total", "counter", "Frames sent to participants.", m.frames_sent),
        metric(
            "socket_connects_total",
            "counter",
            "Websockets opened (first connections and reconnects).",
            m.socket_connects,
        ),
        metric(
            "resumes_total",
            "counter",
            "Game streams resumed after a reconnect or a gap (frames resent or a snapshot).",
            m.resumes,
        ),
        metric(
            "resume_snapshots_total",
            "counter",
            "Resumes answered with a snapshot (frames no longer kept, or a new stream).",
            m.resume_snapshots,
        ),
        metric(
            "matchmaking_fallbacks_total",
            "counter",
            "Interrogators drawn for a person witness who met an AI (none free in time).",
            hub.fallbacks_here(),
        ),
        metric(
            "store_write_failures_total",
            "counter",
            "Store write attempts that failed (retried).",
            failures,
        ),
        metric(
            "store_writes_lost_total",
            "counter",
            "Store writes given up after retrying.",
            failed_writes,
        ),
    ]
    rows += hub.metric_rows()
    return "\n".join(line for row in rows for line in row) + "\n"
