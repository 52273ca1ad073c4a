"""The `/metrics` page: this process's counters (metrics.py) in Prometheus' text format.

Apart from the counters because it reads the whole arena and its cluster, which themselves
count into metrics.py: here nothing below the hub imports the hub.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from turinglab.arena.metrics import PREFIX

if TYPE_CHECKING:
    from turinglab.arena.cluster import Cluster
    from turinglab.arena.hub import Arena


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
