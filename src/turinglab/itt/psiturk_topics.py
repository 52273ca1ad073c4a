"""The right answer to the kreimanlab conversation task's topic question, which its psiTurk
export does not store: a TEST trial keeps only the topic the judge chose (`topic`, "1"–"5").

The task decided "right" in the browser from the conversation number alone
(`checkTopicCorrect` in the task's static/js/task.js), with one key per conversation set:
`/static/dataset/` (the original set, conversations 1–300, the same ranges as the paper's
plotting notebook) and `/static/dataset_new/` (the 2025 set). Anything else — catch trials
included — counted as topic "3". The task then stored the judge's tally in questiondata
(`correct_topics`), so a key is only used where it reproduces that tally: a wrong key (another
task version) is refused, never applied silently."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

# (first, last, topic) ranges of conversation numbers, as in each set's task.js
ORIGINAL_SET = (
    (1, 25, "1"), (26, 50, "2"), (51, 75, "3"), (76, 100, "4"), (101, 125, "5"),
    (126, 150, "1"), (151, 160, "2"), (161, 170, "1"), (171, 180, "2"), (181, 190, "3"),
    (191, 200, "4"), (201, 210, "5"), (211, 220, "1"), (221, 230, "2"), (231, 240, "3"),
    (241, 250, "4"), (251, 260, "5"), (261, 270, "1"), (271, 280, "2"), (281, 290, "3"),
    (291, 300, "4"),
)  # fmt: skip
NEW_SET = (
    (65, 109, "1"), (110, 173, "2"), (174, 223, "3"), (224, 273, "4"), (274, 284, "5"),
    (34, 63, "5"),
)  # fmt: skip
KEYS = {"dataset": ORIGINAL_SET, "dataset_new": NEW_SET}
OTHERWISE = "3"  # the task's default, catch conversations included


def right_topic(key: Sequence[tuple[int, int, str]], conversation: int) -> str:
    for first, last, topic in key:
        if first <= conversation <= last:
            return topic
    return OTHERWISE


def topic_right(key: Sequence[tuple[int, int, str]], trial: dict[str, Any]) -> bool:
    return str(trial.get("topic", "")) == right_topic(key, int(trial["hit"]))


def conversation_set(trial: dict[str, Any]) -> str:
    """The folder under /static/ a trial's conversation came from ('dataset_new', …)."""
    found = re.search(r"/static/([^/]+)/", str(trial.get("conversationID", "")))
    return found.group(1) if found else ""


def checked_topic_key(
    tests: Sequence[dict[str, Any]], questions: dict[str, Any]
) -> Sequence[tuple[int, int, str]]:
    """The key of this participant's conversation set, after checking that it gives the
    participant's own recorded tally; ValueError (one line) when it cannot be trusted."""
    sets = {conversation_set(t) for t in tests}
    if len(sets) != 1 or next(iter(sets)) not in KEYS:
        names = ", ".join(sorted(s or "(no folder)" for s in sets))
        raise ValueError(
            f"--drop-wrong-topic: no topic key for conversation set {names} "
            f"(known: {', '.join(KEYS)})"
        )
    key = KEYS[next(iter(sets))]
    recorded = questions.get("correct_topics")
    if recorded is not None:
        derived = sum(topic_right(key, t) for t in tests)
        if derived != int(recorded):
            raise ValueError(
                f"--drop-wrong-topic: the task's topic key gives {derived} right topics but "
                f"the export records {recorded}; this export's topics cannot be checked"
            )
    return key
