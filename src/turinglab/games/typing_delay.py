"""How long an AI witness 'types' before its message appears (Jones & Bergen, eq. 1).

delay = base + N(μ_c, σ_c)·n_char + N(μ_p, σ_p)·n_char_prev + Γ(shape, scale)   (seconds)

The first term is a minimum delay, the second typing (~0.3 s per character sent), the third
reading (~0.03 s per character of the message being answered), the last a right-skewed
thinking time. Every draw comes from a generator seeded by the caller (never the global RNG).

A game draws each reply's typing from its own generator (`reply_draw`), keyed by what its stored
messages determine: the game's seed, the witness's seat, and how many replies that witness has
said on its channel. A game rebuilt from any prefix of its messages (another process taking a
live game over) so draws what the uninterrupted game would have drawn next, and one witness's
typing never depends on when another witness answered (the order the process ran them in).
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from turinglab.games.control_log import Draws
from turinglab.games.transcript import TranscriptMessage


class TypingDelay(BaseModel):
    """The delay formula's parameters; the defaults are the paper's."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    base_s: float = Field(default=1.0, ge=0)
    per_char_mean: float = Field(default=0.3, ge=0)
    per_char_sd: float = Field(default=0.03, ge=0)
    per_prev_char_mean: float = Field(default=0.03, ge=0)
    per_prev_char_sd: float = Field(default=0.003, ge=0)
    think_shape: float = Field(default=2.5, gt=0)
    think_scale: float = Field(default=0.25, gt=0)

    def seconds(self, n_char: int, n_char_prev: int, rng: random.Random) -> float:
        typing = rng.gauss(self.per_char_mean, self.per_char_sd) * n_char
        reading = rng.gauss(self.per_prev_char_mean, self.per_prev_char_sd) * n_char_prev
        thinking = rng.gammavariate(self.think_shape, self.think_scale)
        # A normal draw can be negative in principle; a message never arrives before it is due.
        return max(self.base_s, self.base_s + typing + reading + thinking)


def reply_draw(seed: int, seat: str, messages: Sequence[TranscriptMessage]) -> random.Random:
    """The generator of `seat`'s next reply's typing: draw n of the stream "typing:<seat>"
    (control_log.Draws), n being the replies `seat` has said on its own channel so far."""
    said = sum(1 for m in messages if m.sender == seat and m.channel == seat)
    return Draws(seed, f"typing:{seat}", said).next()
