"""The paper's own judges: a psiTurk export of the kreimanlab/TuringTest conversation-judging
task (one CSV row per participant, everything in the `datastring` JSON column) as Turing Lab
judgements.

Each TEST trial shows one conversation cut to `hit_len` exchanges and asks for one of four
answers (`Aclass`): HH, HAI, AIH or AIAI — speaker A first, then B. `trueLabel` is the truth in
the same code. One trial gives two judgements, one per speaker, so `itt score` computes the
per-speaker p(H|H), p(M|M) and detectability; the 4-way answer is kept in trials.csv.

Catch trials (`isCatch`) check attention and are excluded from scores (counted in study.json).
Rows marked `mode=debug` are kept: the released Prolific data has real participants marked so
(their questiondata carries Prolific ids). Optional: the paper's qualification rule (at least
15 of 20 topics right, i.e. topic accuracy ≥ 0.75, from questiondata), the 3 s rule, and the
paper's removal of trials whose topic question was answered wrong (`drop_wrong_topic`; the export
keeps only the topic chosen, the right one comes from the task's own key in psiturk_topics.py).

Whole exports (psiturk_runs.py splits a record into runs): rows with an empty datastring
never started; a participant whose run ended before the end-of-task questionnaire (the 2025
task stops anyone who fails its catch trial at position 5) is left out; one who restarted in
the same session is scored on the last run only, as the task's own tallies are. Optional:
`drop_feedback` leaves out the trials after which the right answer was shown (the 2025 task's
first 16; the paper's Methods: no feedback was given), `drop_failed_catch` the participants
who answered any catch trial wrong."""

from __future__ import annotations

import csv
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from turinglab.itt.judgements import JudgementRow, save_judgements
from turinglab.itt.psiturk_runs import last_run, stopped_early
from turinglab.itt.psiturk_topics import checked_topic_key, topic_right
from turinglab.itt.tables import RowError, csv_dicts

CODES = {"HH": ("H", "H"), "HAI": ("H", "M"), "AIH": ("M", "H"), "AIAI": ("M", "M")}
DEMOGRAPHICS = ("age", "gender", "education", "country", "native", "aiuse")
QUALIFYING_TOPIC_ACCURACY = 0.75  # "at least 15 topics out of 20" (Methods, Conversation)
MACHINE = "AI"  # the export does not say which model wrote a machine side
TRIAL_COLUMNS = (
    "judge", "trial", "conversation", "length", "truth", "answer", "correct", "rt", "topic",
    "fixed", "feedback", "catch", "topic_right",
)  # fmt: skip


@dataclass
class PsiturkImport:
    judgements: list[JudgementRow] = field(default_factory=list)
    trials: list[dict[str, Any]] = field(default_factory=list)  # every TEST trial, catch too
    facts: dict[str, Any] = field(default_factory=dict)


def _conversation(trial: dict[str, Any]) -> str:
    """conv245_len21.html and .../conv273.html are conversation 245 and 273: the unit of
    resampling is the conversation, whatever length it was cut to."""
    if "hit" in trial:
        return f"conv{trial['hit']}"
    found = re.search(r"conv(\d+)", str(trial.get("conversationID", "")))
    if not found:
        raise ValueError("no hit or conversationID")
    return f"conv{found.group(1)}"


def _trial_row(judge: str, t: dict[str, Any]) -> dict[str, Any]:
    truth, answer = str(t.get("trueLabel", "")), str(t.get("Aclass", ""))
    for name, code in (("trueLabel", truth), ("Aclass", answer)):
        if code not in CODES:
            raise ValueError(f"{name} {code!r} is not one of {', '.join(CODES)}")
    return {
        "judge": judge,
        "trial": int(t["trial"]),
        "conversation": _conversation(t),
        "length": int(t["hit_len"]),
        "truth": truth,
        "answer": answer,
        "correct": int(truth == answer),
        "rt": round(float(t["rt"]) / 1000, 3),
        "topic": t.get("topic", ""),
        "fixed": int(bool(t.get("isFixed"))),
        "feedback": int(bool(t.get("hasFeedback"))),
        "catch": int(bool(t.get("isCatch"))),
    }


def _judgements(trial: dict[str, Any], demographics: dict[str, str]) -> list[JudgementRow]:
    out = []
    for side, truth, said in zip("AB", CODES[trial["truth"]], CODES[trial["answer"]], strict=True):
        out.append(
            JudgementRow.model_validate(
                {
                    "judge": trial["judge"],
                    "judge_type": "human",
                    "item": f"{trial['conversation']}@{trial['length']}#{trial['trial']}:{side}",
                    "source": "human" if truth == "H" else "machine",
                    "model": None if truth == "H" else MACHINE,
                    "label": said,
                    "task": "conversation",
                    "length": trial["length"],
                    "unit": trial["conversation"],
                    "rt": trial["rt"],
                    "trial": trial["trial"],
                    "side": side,
                    **demographics,
                }
            )
        )
    return out


def import_psiturk(
    path: Path,
    *,
    qualified_only: bool = False,
    min_rt: float | None = None,
    drop_wrong_topic: bool = False,
    drop_feedback: bool = False,
    drop_failed_catch: bool = False,
) -> PsiturkImport:
    if not path.is_file():
        raise ValueError(f"{path}: no such file")
    header, rows = csv_dicts(path)
    if "datastring" not in header:
        raise RowError(path, 1, None, "no datastring column (is this a psiTurk export?)")
    out = PsiturkImport()
    seen: Counter[str] = Counter()
    for line, raw in rows:
        if not (raw.get("datastring") or "").strip():
            seen["participants without data (did not start)"] += 1
            continue
        try:
            data = json.loads(raw["datastring"])
        except json.JSONDecodeError as err:
            raise RowError(path, line, "datastring", f"not JSON: {err.msg}") from None
        judge = str(raw.get("uniqueid") or data.get("id") or f"line{line}")
        questions = data.get("questiondata") or {}
        seen["participants"] += 1
        seen["rows marked mode=debug (kept)"] += raw.get("mode") == "debug"
        run, earlier = last_run(data.get("data", []))
        if earlier:
            seen["participants who restarted (last run kept)"] += 1
            seen["TEST trials of earlier runs (left out)"] += earlier
        tests = [d["trialdata"] for d in run if d["trialdata"].get("phase") == "TEST"]
        if not tests:
            seen["participants without TEST trials"] += 1
            continue
        why = stopped_early(run, questions)
        if why:
            seen[f"participants who {why} (left out)"] += 1
            continue
        missed = [t for t in tests if t.get("isCatch") and t.get("Aclass") != t.get("trueLabel")]
        if drop_failed_catch and missed:
            seen["participants with a catch trial answered wrong (left out)"] += 1
            continue
        if qualified_only:
            accuracy = float(questions.get("topic_accuracy") or 0)
            if accuracy < QUALIFYING_TOPIC_ACCURACY:
                seen["participants below the topic-accuracy rule"] += 1
                continue
        demographics = {k: str(questions[k]) for k in DEMOGRAPHICS if questions.get(k)}
        scored_before = len(out.judgements)
        key = None
        if drop_wrong_topic:
            try:
                key = checked_topic_key(tests, questions)
            except ValueError as err:
                raise RowError(path, line, "datastring", f"{judge}: {err}") from None
            checked = "correct_topics" in questions
            seen["participants whose recorded topic tally the key reproduces"] += checked
            seen["participants without a recorded topic tally (key unchecked)"] += not checked
        for t in tests:
            try:
                trial = _trial_row(judge, t)
            except (KeyError, TypeError, ValueError) as err:
                raise RowError(path, line, "datastring", f"{judge}: TEST trial: {err}") from None
            trial["topic_right"] = "" if key is None else int(topic_right(key, t))
            out.trials.append(trial)
            if trial["catch"]:
                seen["catch trials (excluded)"] += 1
                seen["catch trials answered right"] += trial["correct"]
                continue
            if drop_feedback and trial["feedback"]:
                seen["trials shown with feedback (excluded)"] += 1
                continue
            if trial["topic_right"] == 0:
                seen["trials with the wrong topic (excluded)"] += 1
                continue
            if min_rt is not None and trial["rt"] <= min_rt:
                seen[f"trials answered in {min_rt:g} s or less (excluded)"] += 1
                continue
            seen["trials scored"] += 1
            out.judgements += _judgements(trial, demographics)
        # who is in the scores: not those whose every trial was a catch or too fast
        seen["participants scored"] += len(out.judgements) > scored_before
    if not out.judgements:
        raise ValueError(f"{path}: no TEST trial left to score ({dict(seen)})")
    out.facts = {
        "kind": "psiturk-import",
        "source": str(path),
        "qualified_only": qualified_only,
        "min_rt_seconds": min_rt,
        "drop_wrong_topic": drop_wrong_topic,
        "drop_feedback": drop_feedback,
        "drop_failed_catch": drop_failed_catch,
        "machine_model": f"{MACHINE!r}: the export does not name the model of a machine side",
        "counts": dict(seen),
        "true_labels": dict(Counter(t["truth"] for t in out.trials if not t["catch"])),
    }
    return out


def save_import(result: PsiturkImport, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    save_judgements(out / "judgements.csv", result.judgements)
    with (out / "trials.csv").open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=TRIAL_COLUMNS)
        writer.writeheader()
        writer.writerows(result.trials)
    (out / "study.json").write_text(json.dumps(result.facts, indent=2) + "\n")
