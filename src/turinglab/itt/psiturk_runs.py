"""Runs within one psiTurk participant record of the kreimanlab conversation task.

A participant who reloads the task in the same session gets one record holding every run: the
trial counter starts again at 1 and the end-of-task tallies in questiondata (`correct_humanai`,
`total_humanai`, `correct_topics`) count the last run only. So the last run is the one scored,
and a run that never reached the end-of-task questionnaire (`postquestionnaire`) did not finish:
the 2025 task sends anyone who answers its first catch trial (position 5) wrong to a quit page
and records `failed_catch_trial`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def last_run(entries: Sequence[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """The entries of the last run (a run starts where a TEST trial's number does not follow
    the previous one's) and how many TEST trials the earlier runs held."""
    start, previous, tests_before = 0, 0, 0
    for i, entry in enumerate(entries):
        data = entry.get("trialdata") or {}
        if data.get("phase") != "TEST":
            continue
        number = int(data.get("trial", previous + 1))
        if number <= previous:
            tests_before += sum(
                1 for e in entries[start:i] if (e.get("trialdata") or {}).get("phase") == "TEST"
            )
            start = _run_start(entries, start, i)
        previous = number
    return list(entries[start:]), tests_before


def _run_start(entries: Sequence[dict[str, Any]], after: int, first_test: int) -> int:
    """Where the run whose first TEST trial is at first_test begins: its own instructions and
    pre-questionnaire go with it (the last non-TEST entries before it)."""
    start = first_test
    while start > after and (entries[start - 1].get("trialdata") or {}).get("phase") != "TEST":
        start -= 1
    return start


def stopped_early(run: Sequence[dict[str, Any]], questions: dict[str, Any]) -> str:
    """'' for a run that reached the end-of-task questionnaire; else why it did not."""
    phases = [(e.get("trialdata") or {}).get("phase") for e in run]
    if "postquestionnaire" in phases:
        return ""
    tests = [e["trialdata"] for e in run if (e.get("trialdata") or {}).get("phase") == "TEST"]
    last = tests[-1] if tests else {}
    failed_last_catch = bool(last.get("isCatch")) and last.get("Aclass") != last.get("trueLabel")
    if questions.get("failed_catch_trial") and failed_last_catch:
        return "were stopped by the task at a failed catch trial"
    return "quit before the end of the task"
