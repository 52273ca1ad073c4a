"""An AI witness's typing indicator on a person's timeline, with the model's generation inside.

A person who is sent a message reads it and thinks (no indicator), then types in bursts, and
their browser sends a typing frame on a keystroke at most once every 2 s (arena.js). So the
interrogator sees: a pause of a few seconds, then frames a little over 2 s apart, with longer
gaps where the person stopped to think. An AI witness shows the same:

* the reading/thinking pause and the typing time come from the paper's delay model
  (typing_delay.py: base + reading·n_prev + Γ thinking, then ~0.3 s per character typed);
* keystrokes are drawn in bursts with jittered intervals and pauses (`Typist`), and frames
  are taken from them by the browser's own rule (`throttled`);
* the model generates while the "person" reads and types; its message appears when the planned
  typing is over, or — when the model is slower than that — a few characters' typing after it
  is done, the indicator going on meanwhile as a slow typist's would.

So a generation within the plan changes nothing an interrogator can time. A late one is the
only way generation time shows (the onset and the frames' rhythm are still the plan's; a reply
cannot be shown before it exists): `serve` refuses a study witness for which lateness is the
rule rather than a rare event (arena/core/witness_preflight.py), and the per-message deadline flags
a game whose witness never answers.
"""

from __future__ import annotations

import asyncio
import math
import random
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

from turinglab.games.clock import Clock
from turinglab.games.typing_delay import TypingDelay

FRAME_EVERY_S = 2.0  # arena.js TYPING_SEND_MS: a browser sends typing at most this often
FINISH_CHARS = 10  # after a slow model: the last characters still to "type" once it is done


class Typist(BaseModel):
    """How a person's keystrokes fall: bursts of keys at a jittered pace, broken by pauses
    (log-normal, as inter-key intervals are). About 0.26 s per key on average."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    key_median_s: float = Field(default=0.16, gt=0)
    key_sigma: float = Field(default=0.45, ge=0)
    pause_p: float = Field(default=0.05, ge=0, le=1)  # after any key, the typist stops a while
    pause_median_s: float = Field(default=1.2, gt=0)
    pause_sigma: float = Field(default=0.8, ge=0)

    def keystrokes(self, rng: random.Random, start: float) -> Iterator[float]:
        """Key times from `start` on, without end (the caller stops when the message is sent)."""
        t = start
        while True:
            yield t
            t += rng.lognormvariate(math.log(self.key_median_s), self.key_sigma)
            if rng.random() < self.pause_p:
                t += rng.lognormvariate(math.log(self.pause_median_s), self.pause_sigma)


def throttled(keys: Iterable[float], every: float = FRAME_EVERY_S) -> Iterator[float]:
    """The typing frames a browser sends for these keystrokes: one on a key when more than
    `every` seconds have passed since the last one it sent (arena.js)."""
    last = -math.inf
    for t in keys:
        if t - last > every:
            last = t
            yield t


@dataclass(frozen=True)
class TypingPlan:
    """One reply's timeline, drawn as the interrogator's message arrives."""

    reading_s: float  # from the message to the first keystroke
    per_char_s: float  # typing pace of this reply
    seed: int  # the keystrokes' own generator

    @classmethod
    def draw(cls, delay: TypingDelay, n_prev: int, rng: random.Random) -> TypingPlan:
        per_char = max(0.0, rng.gauss(delay.per_char_mean, delay.per_char_sd))
        reading = rng.gauss(delay.per_prev_char_mean, delay.per_prev_char_sd) * n_prev
        thinking = rng.gammavariate(delay.think_shape, delay.think_scale)
        return cls(delay.base_s + max(0.0, reading + thinking), per_char, rng.getrandbits(32))

    def typing_s(self, n_char: int) -> float:
        return self.per_char_s * n_char


class ShownTyping:
    """Shows the plan's typing frames (via `show`) from the end of reading until stopped."""

    def __init__(
        self,
        plan: TypingPlan,
        clock: Clock,
        show: Callable[[], None],
        typist: Typist | None = None,
    ) -> None:
        self.plan = plan
        self.clock = clock
        self.started = clock.now()
        self._show = show
        self._typist = typist or Typist()
        self._task = asyncio.ensure_future(self._run())

    async def _run(self) -> None:
        first_key = self.started + self.plan.reading_s
        keys = self._typist.keystrokes(random.Random(self.plan.seed), first_key)
        for at in throttled(keys):
            await self.clock.sleep(at - self.clock.now())
            self._show()

    async def finish(self, n_char: int) -> None:
        """Wait until the message of `n_char` characters is typed: the planned time, or a few
        characters' more typing when the model took longer than planned."""
        planned = self.started + self.plan.reading_s + self.plan.typing_s(n_char)
        late = self.clock.now() + self.plan.typing_s(min(n_char, FINISH_CHARS))
        await self.clock.sleep(max(planned, late) - self.clock.now())

    def stop(self) -> None:
        self._task.cancel()
