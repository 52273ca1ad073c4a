"""A rich progress bar for a run: trials done/total, failed attempts (this invocation's and
earlier ones'), running, API calls, tokens and cost, ETA.

The numbers are read when rich redraws (4 Hz, its own thread), not when a trial ends: calls and
tokens move with every call. The ETA comes from the finished trials' own durations (how long a
trial takes, times the rounds of `max_in_flight` left), so it means nothing until one trial has
finished and says so. The count comes first and the bar is short, so an 80-column terminal
still shows done/total.
"""

from __future__ import annotations

import math

from rich.console import Console
from rich.progress import BarColumn, Progress, ProgressColumn, Task, TaskID, TextColumn
from rich.text import Text

from turinglab.agents.retry import CallStats
from turinglab.runner.scheduler import RunCounters


def compact(n: float) -> str:
    """12, 3.4k, 12k, 1.2M: a number in at most five characters."""
    for limit, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if n >= limit:
            value = n / limit
            return f"{value:.1f}{suffix}" if value < 10 else f"{value:.0f}{suffix}"
    return f"{n:.0f}"


def eta_seconds(c: RunCounters) -> float | None:
    """Seconds left: the mean finished trial's duration times the rounds of slots left."""
    if c.trials_timed == 0:
        return None
    left = max(0, c.planned - c.done)
    rounds = math.ceil(left / max(1, c.max_in_flight))
    return rounds * c.trial_seconds / c.trials_timed


def clock(seconds: float) -> str:
    s = round(seconds)
    h, rest = divmod(s, 3600)
    return f"{h}:{rest // 60:02d}:{rest % 60:02d}" if h else f"{rest // 60}:{rest % 60:02d}"


def status_line(c: RunCounters, s: CallStats) -> str:
    """Everything after the bar, read live."""
    eta = eta_seconds(c)
    failed = f"{c.failed_attempts} failed"
    if c.failed_before:
        failed += f" (+{c.failed_before} before)"
    # Most needed first: a narrow terminal cuts the end of the line.
    parts = ["ETA " + ("–" if eta is None else clock(eta)), failed, f"{compact(s.calls)} calls"]
    parts.append(f"{compact(s.tokens_in + s.tokens_out)} tok")
    if s.cost_usd or c.spent_before_usd:
        parts.append(f"${c.spent_before_usd + s.cost_usd:.2f}")
    parts.append(f"{c.running} running")
    return " · ".join(parts)


class _Count(ProgressColumn):
    def __init__(self, view: RichProgress) -> None:
        super().__init__()
        self.view = view

    def render(self, task: Task) -> Text:
        c = self.view.counters
        done, total = (c.done, c.planned) if c else (0, 0)
        return Text(f"{done}/{total}", style="progress.download", no_wrap=True)


class _Status(ProgressColumn):
    def __init__(self, view: RichProgress) -> None:
        super().__init__()
        self.view = view

    def render(self, task: Task) -> Text:
        c, s = self.view.counters, self.view.stats
        if c is None or s is None:
            return Text("")
        return Text(status_line(c, s), overflow="ellipsis", no_wrap=True)


class RichProgress:
    """Rendered by rich's own refresh thread (4 Hz); updates only set numbers, so they are cheap."""

    def __init__(self, console: Console | None = None, label: str = "trials") -> None:
        self.label = label
        self.counters: RunCounters | None = None
        self.stats: CallStats | None = None
        self._progress = Progress(
            TextColumn("[bold]{task.description}"),
            _Count(self),
            BarColumn(bar_width=5),
            _Status(self),
            console=console,
            refresh_per_second=4,
        )
        self._task: TaskID | None = None

    def start(self, counters: RunCounters, stats: CallStats) -> None:
        self.counters, self.stats = counters, stats
        label = self.label if len(self.label) <= 10 else self.label[:9] + "…"
        self._task = self._progress.add_task(label, total=counters.planned, completed=counters.done)
        self._progress.start()

    def update(self) -> None:
        if self._task is None or self.counters is None:
            return
        c = self.counters
        self._progress.update(self._task, completed=c.done, total=c.planned)

    def stop(self) -> None:
        self.update()
        self._progress.stop()
