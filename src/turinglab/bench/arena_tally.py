"""What one client process of the arena benchmark saw, merged across client processes.

Every person-to-person message carries a tag: its id (`p<person>r<round>m<k>`) and the time
it was scheduled to be sent, so the person who receives it measures the relay latency from
that scheduled moment (an open-loop measure: a client that fell behind adds its lateness,
it does not hide it), and the run counts what was lost or shown twice.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field, fields
from typing import Any

TAG = re.compile(r"^(p\d+r\d+m\d+)@(\d+\.\d+)")


def tag(mid: str, at: float) -> str:
    return f"{mid}@{at:.3f}"


def parse_tag(text: str) -> tuple[str, float] | None:
    found = TAG.match(text)
    return None if found is None else (found.group(1), float(found.group(2)))


def unspoken(frame: dict[str, Any]) -> dict[str, Any]:
    """A frame without what the people and the AI said in it: their words are theirs; the
    arena's own lines (sender "game") and every other field are the arena's."""

    def blank(m: dict[str, Any]) -> dict[str, Any]:
        return m if m.get("sender") in (None, "game") else {**m, "text": ""}

    out = blank(frame) if frame["type"] == "message" else frame
    if frame.get("messages"):
        out = {**out, "messages": [blank(m) for m in frame["messages"]]}
    return out


@dataclass
class Tally:
    # (scheduled send, ms) of each person-to-person message, at the person it reached
    relay_ms: list[tuple[float, float]] = field(default_factory=list)
    # (scheduled send, ms): a person's own message shown back to them as sent (stored)
    ack_ms: list[tuple[float, float]] = field(default_factory=list)
    # (game, round, join due, game shown): each person's join, scheduled and answered
    joins: list[tuple[str, int, float, float]] = field(default_factory=list)
    lobby_ms: list[float] = field(default_factory=list)  # arrival -> consent, socket, lobby
    received: Counter[str] = field(default_factory=Counter)  # message frames, by message id
    # (id, game) of each acknowledged person-to-person message in a game that was not flagged
    expected: list[tuple[str, str]] = field(default_factory=list)
    acked: list[str] = field(default_factory=list)  # every id shown back to its sender
    games: list[tuple[float, float]] = field(default_factory=list)  # interrogators' games
    outcomes: Counter[str] = field(default_factory=Counter)  # per person and game
    errors: Counter[str] = field(default_factory=Counter)  # error frames, by code
    failures: Counter[str] = field(default_factory=Counter)  # scripts that broke, by why
    left: dict[str, float] = field(default_factory=dict)  # game -> when a person abandoned it
    told: dict[str, float] = field(default_factory=dict)  # game -> when the other was told
    leavers: Counter[str] = field(default_factory=Counter)  # game -> how many abandoned it
    # game -> when a page in it was last told its game is moving (its owner died: a takeover)
    moved: dict[str, float] = field(default_factory=dict)
    # game -> when its talk ended as a page saw it (its deadline until then)
    talk_ends: dict[str, float] = field(default_factory=dict)
    # person -> [played, total, state]: their round book as the last status they got showed it
    books: dict[str, list[Any]] = field(default_factory=dict)
    # Frames before a game's reveal that held a word the people's script hides (who, game,
    # the word, the frame's type): a seat's kind or the AI's name shown too early
    leaks: list[dict[str, Any]] = field(default_factory=list)
    # The longest wait for an owed frame: [s, what, when it began (epoch s), who]
    longest_owed: list[Any] = field(default_factory=lambda: [0.0, "", 0.0, ""])
    # People who waited over 15 s for a frame: their page's state at the end (arena_link.py)
    long_waits: list[dict[str, Any]] = field(default_factory=list)
    # The longest an input took to be answered, notices or not: [s, what, began (epoch), who]
    longest_input: list[Any] = field(default_factory=lambda: [0.0, "", 0.0, ""])
    # Frames a page did not expect mid-game (another game's snapshot, a lobby status): who,
    # which game, what came, when (epoch s), and where their socket was, for the trace
    odd_frames: list[dict[str, Any]] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)  # reconnects, resends, typing, ...
    # People left waiting: (join sent, epoch s; round; the statuses they got after it; who)
    stuck: list[tuple[float, int, list[str], str]] = field(default_factory=list)
    max_late_s: float = 0.0  # how far the client ran behind its schedule at worst
    cpu_s: float = 0.0

    def owed(self, seconds: float, what: str, since: float = 0.0, who: str = "") -> None:
        if seconds > self.longest_owed[0]:
            self.longest_owed = [seconds, what, since, who]

    def took(self, seconds: float, what: str, since: float = 0.0, who: str = "") -> None:
        if seconds > self.longest_input[0]:
            self.longest_input = [seconds, what, since, who]

    def book(self, who: str, frame: dict[str, Any]) -> dict[str, Any]:
        """Keep a person's round book as a status shows it (the last one they got stays; a
        "no-match" shows none: the one they waited with, no game since, is their last)."""
        if frame["type"] == "status" and frame.get("rounds"):
            rounds = frame["rounds"]
            self.books[who] = [rounds["played"], rounds["total"], frame["state"]]
        elif frame["type"] == "status" and frame["state"] == "no-match" and who in self.books:
            self.books[who][2] = "no-match"
        return frame

    def look(self, who: str, game: str, frame: dict[str, Any], hidden: tuple[str, ...]) -> None:
        """Note any of the `hidden` words in a frame of `game` taken before its reveal."""
        if frame["type"] == "reveal" or frame.get("reveal"):
            return
        shown = json.dumps(unspoken(frame))
        self.leaks += [
            {"tag": who, "game": game, "word": w, "frame": frame["type"]}
            for w in hidden
            if w in shown
        ]

    def merge(self, other: Tally) -> None:
        for f in fields(self):
            mine, theirs = getattr(self, f.name), getattr(other, f.name)
            if f.name == "longest_owed":
                self.owed(*theirs)
            elif f.name == "longest_input":
                self.took(*theirs)
            elif f.name == "max_late_s":
                self.max_late_s = max(mine, theirs)
            elif isinstance(mine, Counter | dict):
                mine.update(theirs)
            elif isinstance(mine, list):
                mine += theirs
            else:
                setattr(self, f.name, mine + theirs)

    def to_json(self) -> str:
        return json.dumps({f.name: getattr(self, f.name) for f in fields(self)})

    @classmethod
    def from_json(cls, text: str) -> Tally:
        data = json.loads(text)
        out = cls()
        for f in fields(out):
            value = data[f.name]
            current = getattr(out, f.name)
            if isinstance(current, Counter):
                value = Counter(value)
            elif f.name in ("relay_ms", "ack_ms", "joins", "games", "expected"):
                value = [tuple(v) for v in value]
            setattr(out, f.name, value)
        return out

    # ---- what it adds up to -------------------------------------------------------------------

    def lost(self) -> list[str]:
        """Acknowledged person-to-person messages that never reached the other person, in
        games both stayed in (one who left less than the abandon grace before the end leaves
        a game that still finishes)."""
        return [m for m, game in self.expected if self.received[m] == 0 and game not in self.left]

    def duplicated(self) -> int:
        """Messages shown twice to the person they were for."""
        return sum(1 for c in self.received.values() if c > 1)

    def concurrency(self) -> dict[str, float | int]:
        """Games in progress (an interrogator between game and end): the most at one moment,
        and the time-average over the span of the run that had games, and over its middle half
        (people arriving and leaving excluded)."""
        if not self.games:
            return {"peak": 0, "mean": 0.0, "mean_middle_half": 0.0}
        edges = sorted([(a, 1) for a, _ in self.games] + [(b, -1) for _, b in self.games])
        first, last = edges[0][0], edges[-1][0]
        lo, hi = first + (last - first) / 4, last - (last - first) / 4
        live = peak = 0
        area = middle = 0.0
        prev = first
        for at, step in edges:
            area += live * (at - prev)
            middle += live * max(0.0, min(at, hi) - max(prev, lo))
            live += step
            peak = max(peak, live)
            prev = at
        span = max(last - first, 1e-9)
        return {
            "peak": peak,
            "mean": round(area / span, 1),
            "mean_middle_half": round(middle / max(hi - lo, 1e-9), 1),
        }

    def match_ms(self) -> list[float]:
        """Per game: from the later of its two people's joins to the game shown to them (the
        arena's part of joining; the earlier person's wait for a partner is not)."""
        by_game: dict[str, list[tuple[float, float]]] = {}
        for game, _, due, shown in self.joins:
            by_game.setdefault(game, []).append((due, shown))
        out = []
        for pair in by_game.values():
            later = max(due for due, _ in pair)
            out += [(shown - later) * 1000 for _, shown in pair]
        return out

    def told_after_abandon_s(self) -> list[tuple[float, str]]:
        """(seconds until the other person was told, game) for each game someone left."""
        return sorted((self.told[g] - at, g) for g, at in self.left.items() if g in self.told)
