"""Who may start a new record without logging in: a few per address, and a bounded number.

Three routes make state for anyone who asks: POST /consent (a participant in memory and a
store row), /judge/api/start (a judge and their batch in the judging log) and
/respond/api/start (a respondent's file beside the stimuli). A script looping over any of
them could fill the study with empty records, the disk, and the memory. Each route keeps its
own `NewRecordGate`: at most `per_address` new records from one client address within
`window_s` (a sliding window, generous enough for a lab of people behind one NAT), and at
most `max_total` held. A caller who already has a record never asks. Refusals say when to come
back (Retry-After); one log line when an address, or the whole route, starts being refused.

The address is the client's as uvicorn gives it: behind a TLS proxy that is the proxy's unless
`turinglab serve --proxy-headers --forwarded-allow-ips …` trusts its X-Forwarded-For; without
it every participant seems to come from the proxy and they all share one limit.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from starlette.requests import HTTPConnection

log = logging.getLogger(__name__)

MAX_ADDRESSES = 10_000  # forget the oldest beyond this (a scan from many addresses is bounded)
# The arena's defaults (ArenaSettings) and the standalone judging server's limits.
PER_ADDRESS = 60
WINDOW_S = 600.0
MAX_TOTAL = 100_000


@dataclass(frozen=True)
class Limits:
    per_address: int = PER_ADDRESS
    window_s: float = WINDOW_S
    max_total: int = MAX_TOTAL


@dataclass(frozen=True)
class Refusal:
    status: int  # 429: this address, for now; 503: this route takes nobody new
    message: str
    retry_after_s: int

    @property
    def headers(self) -> dict[str, str]:
        return {"Retry-After": str(self.retry_after_s)}


class AddressWindow:
    """When each address started its recent records (at most `limit` times kept each)."""

    def __init__(self) -> None:
        self._started: dict[str, deque[float]] = {}

    def retry_after(self, address: str, now: float, limit: int, window_s: float) -> float | None:
        """Seconds until `address` may start another; None when it may now."""
        times = self._started.get(address)
        if times is None:
            return None
        while times and now - times[0] >= window_s:
            times.popleft()
        if len(times) < limit:
            return None
        return max(1.0, window_s - (now - times[0]))

    def started(self, address: str, now: float, limit: int) -> None:
        times = self._started.pop(address, None) or deque()
        times.append(now)
        while len(times) > limit:
            times.popleft()
        self._started[address] = times  # re-inserted: the dict's order is least recent first
        if len(self._started) > MAX_ADDRESSES:
            del self._started[next(iter(self._started))]


def client_address(connection: HTTPConnection) -> str:
    return connection.client.host if connection.client else "unknown"


class NewRecordGate:
    """`refusal` before a new record, `started` once it is made. `what`: the records, plural,
    for the messages ("sessions", "judges"); `limits` is read at each call (the admin may open
    another study with other settings)."""

    def __init__(self, what: str, limits: Callable[[], Limits] = Limits) -> None:
        self.what = what
        self.limits = limits
        self._window = AddressWindow()
        self._refusing: set[str] = set()  # addresses refused now ("": all): one log line each

    def refusal(self, address: str, held: int) -> Refusal | None:
        """Why `address` may not start a record now (`held`: how many there are), or None."""
        limits = self.limits()
        if held >= limits.max_total:
            if "" not in self._refusing:
                self._refusing.add("")
                log.warning("%d %s held (the most allowed); refusing new ones", held, self.what)
            return Refusal(
                503, "the study cannot take anyone new right now; please try again later", 600
            )
        self._refusing.discard("")
        now = time.monotonic()
        wait = self._window.retry_after(address, now, limits.per_address, limits.window_s)
        if wait is None:
            self._refusing.discard(address)
            return None
        if address not in self._refusing:
            if len(self._refusing) > MAX_ADDRESSES:
                self._refusing.clear()  # bounded too; at worst a repeated log line
            self._refusing.add(address)
            log.warning(
                "%d new %s from %s within %g s; refusing more for %.0f s "
                "(behind a proxy, serve with --proxy-headers)",
                limits.per_address, self.what, address, limits.window_s, wait,
            )  # fmt: skip
        message = f"too many new {self.what} from your address; please try again later"
        return Refusal(429, message, int(wait) + 1)

    def started(self, address: str) -> None:
        self._window.started(address, time.monotonic(), self.limits().per_address)
