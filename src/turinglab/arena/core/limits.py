"""Per-connection limits: a token bucket on frames and a cap on frame size.

A browser that floods the server gets clear error frames, and is disconnected only when it
keeps going (a stuck key, a script), so an honest fast typist never loses their game.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from turinglab.arena.core.modes import ArenaSettings

STRIKES_BEFORE_CLOSE = 20


@dataclass
class FrameLimiter:
    rate: float  # frames per second, sustained
    burst: int
    max_bytes: int
    tokens: float = field(init=False)
    last: float | None = field(default=None, init=False)
    strikes: int = field(default=0, init=False)

    def __post_init__(self) -> None:
        self.tokens = float(self.burst)

    @classmethod
    def from_settings(cls, s: ArenaSettings) -> FrameLimiter:
        return cls(s.frames_per_s, s.frame_burst, s.max_frame_bytes)

    def check(self, size: int, now: float) -> str | None:
        """None when the frame may go through; else why not, in words for the person."""
        if self.last is not None:
            self.tokens = min(self.burst, self.tokens + (now - self.last) * self.rate)
        self.last = now
        if size > self.max_bytes:
            self.strikes += 1
            return f"That was too large (over {self.max_bytes} bytes)."
        if self.tokens < 1:
            self.strikes += 1
            return "You are sending too fast; slow down a little."
        self.tokens -= 1
        return None

    @property
    def exhausted(self) -> bool:
        return self.strikes >= STRIKES_BEFORE_CLOSE
