"""Find the run a user names: by id, by name, or by a unique id prefix — and say when it is
ambiguous instead of guessing.

Order matters: an exact id first, then an exact name (so a run named `4b` is not hidden by an
id that starts with `4b…`), then an id prefix. A name shared by several runs is refused with the
candidates listed, since silently picking the newest has shown users the wrong results.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Protocol, TypeVar

# A `running` run whose heartbeat (runs.updated_at) is older than one lease has no live worker:
# workers renew it every lease/3 s at most 10 s apart, and a lease is 60 s unless
# TURINGLAB_LEASE_S says otherwise (the same variable the runner reads).
STALE_AFTER_S = 60.0


def stale_after_s() -> float:
    try:
        return max(float(os.environ.get("TURINGLAB_LEASE_S") or STALE_AFTER_S), 1.0)
    except ValueError:
        return STALE_AFTER_S


class RunLike(Protocol):
    @property
    def id(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def status(self) -> str: ...
    @property
    def created_at(self) -> float: ...
    @property
    def updated_at(self) -> float: ...


R = TypeVar("R", bound=RunLike)


class RunLookupError(KeyError):
    """No run, or more than one, matches; args[0] is one line for the user."""


def pick_run(runs: Sequence[R], ref: str, where: str) -> R:
    exact = [r for r in runs if r.id == ref]
    if exact:
        return exact[0]
    named = [r for r in runs if r.name == ref]
    if len(named) == 1:
        return named[0]
    if len(named) > 1:
        raise RunLookupError(
            f"{len(named)} runs in {where} are named {ref!r}: {_candidates(named)}; "
            "give the id (or an id prefix) of the one you mean"
        )
    by_prefix = [r for r in runs if r.id.startswith(ref)]
    if len(by_prefix) == 1:
        return by_prefix[0]
    if len(by_prefix) > 1:
        raise RunLookupError(
            f"run id prefix {ref!r} matches {len(by_prefix)} runs in {where}: "
            f"{_candidates(by_prefix)}; give more characters of the id"
        )
    raise RunLookupError(f"no run {ref!r} in {where} (see `turinglab runs`)")


def _candidates(runs: Sequence[RunLike]) -> str:
    return ", ".join(f"{r.id} ({r.status}, created {_when(r.created_at)})" for r in runs)


def _when(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d %H:%M UTC")


def shown_status(run: RunLike, now: float | None = None) -> str:
    """The stored status, except that a `running` run whose heartbeat is stale was stopped
    without saying so (SIGKILL, power loss): it is interrupted, not running."""
    if run.status != "running":
        return run.status
    if is_live(run, now):
        return "running"
    age = (time.time() if now is None else now) - run.updated_at
    return f"interrupted (last heartbeat {ago(age)})"


def is_live(run: RunLike, now: float | None = None) -> bool:
    """Whether a worker renewed the run's heartbeat within the last lease."""
    age = (time.time() if now is None else now) - run.updated_at
    return run.status == "running" and age < stale_after_s()


def ago(seconds: float) -> str:
    seconds = max(0.0, seconds)
    if seconds < 120:
        return f"{seconds:.0f} s ago"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min ago"
    if seconds < 172800:
        return f"{seconds / 3600:.0f} h ago"
    return f"{seconds / 86400:.0f} days ago"
