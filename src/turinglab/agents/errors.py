"""Typed agent errors. The runner's single retry loop decides what to do from the class alone."""

from __future__ import annotations


class AgentError(Exception):
    """Base class. `kind` is what gets stored with a failed attempt."""

    kind = "fatal"

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class RateLimited(AgentError):
    """HTTP 429 (or a provider's equivalent). `retry_after` is in seconds when the server said."""

    kind = "rate_limited"

    def __init__(
        self, message: str, *, status: int | None = 429, retry_after: float | None = None
    ) -> None:
        super().__init__(message, status=status)
        self.retry_after = retry_after


class TransientError(AgentError):
    """Worth retrying: 5xx, 408, connection resets, timeouts, truncated or malformed bodies."""

    kind = "transient"

    def __init__(
        self, message: str, *, status: int | None = None, retry_after: float | None = None
    ) -> None:
        super().__init__(message, status=status)
        self.retry_after = retry_after


class FatalError(AgentError):
    """Not worth retrying: bad request, auth, unknown model, missing key, local model crash."""

    kind = "fatal"
