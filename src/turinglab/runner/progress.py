"""A rich progress bar for a run: trials done / failed / running, ETA, API calls and tokens."""

from __future__ import annotations

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from turinglab.agents.retry import CallStats
from turinglab.runner.scheduler import RunCounters


class RichProgress:
    """Rendered by rich's own refresh thread (4 Hz); updates only set numbers, so they are cheap."""

    def __init__(self, console: Console | None = None, label: str = "trials") -> None:
        self.label = label
        self._progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn(
                "[red]{task.fields[failed]} failed[/] · {task.fields[running]} running · "
                "{task.fields[calls]} calls · {task.fields[tokens]} tokens"
            ),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=console,
            refresh_per_second=4,
        )
        self._task: TaskID | None = None
        self._counters: RunCounters | None = None
        self._stats: CallStats | None = None

    def start(self, counters: RunCounters, stats: CallStats) -> None:
        self._counters, self._stats = counters, stats
        self._task = self._progress.add_task(
            self.label,
            total=counters.planned,
            completed=counters.done,
            failed=0,
            running=0,
            calls=0,
            tokens=0,
        )
        self._progress.start()

    def update(self) -> None:
        if self._task is None or self._counters is None or self._stats is None:
            return
        c, s = self._counters, self._stats
        self._progress.update(
            self._task,
            completed=c.done,
            failed=c.failed_attempts,
            running=c.running,
            calls=s.calls,
            tokens=s.tokens_in + s.tokens_out,
        )

    def stop(self) -> None:
        self.update()
        self._progress.stop()
