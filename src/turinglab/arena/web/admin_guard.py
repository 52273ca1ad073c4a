"""Admin password guesses, throttled per client address.

Five wrong passwords within a minute from one address, and that address is refused (429) until
the oldest of them is a minute old; one log line says so when it starts. A right password is
never counted. So that nobody can lock the admin out by guessing from the admin's address (a
shared NAT, the proxy), a browser that has logged in once carries a device cookie (an HMAC of
the password: valid in every process, void once the password changes) and is never throttled:
its password is checked as always (OWASP's "device cookies").
Behind a TLS proxy the address is the client's only when uvicorn trusts the
proxy's forwarded headers (`turinglab serve --proxy-headers --forwarded-allow-ips …`);
otherwise every guess seems to come from the proxy, and the limit applies to all together.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
from collections import deque

log = logging.getLogger(__name__)

MAX_WRONG = 5
WINDOW_S = 60.0
MAX_ADDRESSES = 10_000  # forget the oldest beyond this (no unbounded memory from scans)
DEVICE_COOKIE = "tl_admin_device"
DEVICE_MAX_AGE_S = 90 * 24 * 3600


def device_token(password: str) -> str:
    return hmac.new(password.encode(), b"turinglab admin device", hashlib.sha256).hexdigest()


def known_device(cookie: str | None, password: str) -> bool:
    return cookie is not None and hmac.compare_digest(
        cookie.encode(), device_token(password).encode()
    )


class GuessThrottle:
    def __init__(self, max_wrong: int = MAX_WRONG, window_s: float = WINDOW_S) -> None:
        self.max_wrong = max_wrong
        self.window_s = window_s
        self._wrong: dict[str, deque[float]] = {}

    def _recent(self, address: str, now: float) -> deque[float]:
        times = self._wrong.get(address, deque())
        while times and now - times[0] >= self.window_s:
            times.popleft()
        return times

    def retry_after(self, address: str, now: float) -> float | None:
        """Seconds until `address` may guess again; None when it may now."""
        times = self._recent(address, now)
        if len(times) < self.max_wrong:
            return None
        return max(1.0, self.window_s - (now - times[0]))

    def wrong(self, address: str, now: float) -> None:
        times = self._recent(address, now)
        times.append(now)
        self._wrong[address] = times
        if len(times) == self.max_wrong:
            log.warning(
                "admin: %d wrong passwords from %s within %g s; refusing it for up to %g s",
                self.max_wrong, address, self.window_s, self.window_s,
            )  # fmt: skip
        if len(self._wrong) > MAX_ADDRESSES:
            del self._wrong[next(iter(self._wrong))]
