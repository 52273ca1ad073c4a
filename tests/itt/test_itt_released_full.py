"""The whole released export of the paper's 2025 Prolific conversation task
(data/released/new_results_prolific.csv, every record of kreimanlab/TuringTest's file, IPs
emptied and Prolific ids pseudonymised): it reads whole, agrees with itself, holds no one's
address or Prolific id, and imports and scores to counts derived by hand.

Hand count (plain Python over the psiTurk JSON, not Turing Lab code; data/released/README.md):
61 records; 10 with an empty datastring (never started); 6 stopped by the task at the failed
catch trial of position 5 (5 TEST trials, no end-of-task questionnaire); 45 finished, one of
them after a restart (a first run of 5 trials ended at a failed catch, then 31 trials: the
tallies count the 31). 45 × 31 TEST trials, 3 catch each (135; 123 right: all 45 at position
5, 40 at 12, 38 at 23; the 12 wrong from 10 judges) → 1260 scored. One finisher has topic
accuracy 19/31 (0.61 < 0.75): 44 left, 1232 trials, 92 with the wrong topic (the task's key)
→ 1140. Per speaker (HH→H,H; HAI→H,M; AIH→M,H; AIAI→M,M): all 1260: hh 839 hm 421 mh 824
mm 436; paper rules (1140): hh 764 hm 381 mh 737 mm 398; and without the 16 feedback trials
(570): hh 416 hm 207 mh 334 mm 183.

prolific_may30.csv (the same task on the paper's original conversation set, /static/dataset/,
32 trials, catch trials at 5, 11 and 21, no fixed trials): 75 records; 14 empty; 12 stopped at
the catch of position 5 (two of them after restarts: 15 TEST trials of earlier runs); 49
finished: 49 × 32 TEST, 147 catch (131 right: 49 at 5, 42 at 11, 40 at 21; the 16 wrong from
13 judges) → 1421 scored: hh 990 hm 431 mh 888 mm 533. One finisher has topic accuracy 20/32
(0.625: the task's own rule, ≥ 20, says qualified; the paper's 0.75 does not): 48 left, 1392
trials, 87 with the wrong topic → 1305: hh 925 hm 400 mh 798 mm 487; without feedback trials
(677): hh 474 hm 182 mh 439 mm 259."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from turinglab.cli import app
from turinglab.itt.psiturk import import_psiturk
from turinglab.itt.psiturk_runs import last_run

RELEASED = Path(__file__).parents[2] / "data" / "released"
FULL = RELEASED / "new_results_prolific.csv"
MAY = RELEASED / "prolific_may30.csv"
# file: (records, with data, empty, study id) by hand
FILES = {
    FULL: (61, 51, 10, "683b83b98410abe41a31898e"),
    MAY: (75, 61, 14, "68279aea9fe7922711b028d7"),
}
CODES = ("HH", "HAI", "AIH", "AIAI")
runner = CliRunner()


def _records(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


@pytest.mark.parametrize("path", list(FILES), ids=lambda p: p.name)
def test_the_file_reads_whole_and_every_datastring_parses(path: Path) -> None:
    records, with_data, empty, _ = FILES[path]
    text = path.read_bytes().decode("utf-8")
    assert text.count("\r\n") >= records and text.endswith("\r\n")  # CRLF row ends kept
    rows = _records(path)
    assert len(rows) == records
    parsed = [json.loads(r["datastring"]) for r in rows if r["datastring"]]
    assert len(parsed) == with_data
    assert sum(1 for r in rows if not r["datastring"] and r["status"] == "1") == empty
    assert all(r["mode"] == "debug" for r in rows)  # real Prolific people, marked so


@pytest.mark.parametrize("path", list(FILES), ids=lambda p: p.name)
def test_the_redaction_holds(path: Path) -> None:
    rows = _records(path)
    ipv4 = re.compile(r"\d{1,3}(?:\.\d{1,3}){3}")
    assert not any(ipv4.search(r["ipaddress"]) for r in rows)
    assert all(r["ipaddress"] == "" for r in rows)
    text = path.read_text(encoding="utf-8")
    ids = re.findall(r'""(?:prolific_pid|session_id)"": ""([^"]*)""', text)
    assert len(ids) >= 2 * 50 and all(re.fullmatch(r"[0-9a-f]{12}", i) for i in ids)
    # a Prolific participant or session id is 24 hex digits; the only one left is the study's
    assert set(re.findall(r"\b[0-9a-f]{24}\b", text)) == {FILES[path][3]}


def _consistency_problems(data: dict[str, Any], row: dict[str, str]) -> list[str]:
    """The export's redundancy (a transcription typo of the same length shows here): ids, the
    response string, the path vs hit/hit_len, times, trial numbers and the end tallies."""
    uid, bad = row["uniqueid"], []
    if uid != f"{row['workerid']}:{row['assignmentid']}" or data["id"] != uid:
        bad.append("ids")
    if (data["workerId"], data["assignmentId"]) != (row["workerid"], row["assignmentid"]):
        bad.append("ids")
    last_time = 0
    for i, entry in enumerate(data["data"]):
        if entry["uniqueid"] != uid or entry["current_trial"] != i:
            bad.append(f"entry {i}")
        if entry["dateTime"] < last_time:
            bad.append(f"time order {i}")
        last_time = entry["dateTime"]
        t = entry["trialdata"]
        if t.get("phase") != "TEST":
            continue
        if not 0 <= entry["dateTime"] - t["submitTime"] <= 10:  # saved within ms of submit
            bad.append(f"submitTime {i}")
        if t["response"] != "___".join((t["Aclass"], t["Agender"], t["Bgender"], t["topic"])):
            bad.append(f"response {i}")
        found = re.search(r"conv(\d+)(?:_len(\d+))?\.html$", t["conversationID"])
        if not found or int(found.group(1)) != t["hit"]:
            bad.append(f"hit {i}")
        elif found.group(2) and int(found.group(2)) != t["hit_len"]:
            bad.append(f"hit_len {i}")
        if t["Aclass"] not in CODES or t["trueLabel"] not in CODES:
            bad.append(f"codes {i}")
        if t["isCatch"] != ("/catch/" in t["conversationID"]):
            bad.append(f"catch {i}")
    run, _ = last_run(data["data"])
    tests = [e["trialdata"] for e in run if e["trialdata"].get("phase") == "TEST"]
    if [t["trial"] for t in tests] != list(range(1, len(tests) + 1)):
        bad.append("trial numbers of the last run")
    q = data["questiondata"]
    if "correct_humanai" in q:
        right = sum(t["Aclass"] == t["trueLabel"] for t in tests)
        if (q["total_humanai"], q["correct_humanai"]) != (len(tests), right):
            bad.append("4-way tally")
    if not {t["hit"] for t in tests if t["isCatch"]} <= set(q["catch_trials"]):
        bad.append("catch ids")
    for position, hit in (q.get("fixed_trials") or {}).items():
        if int(position) < len(tests) and tests[int(position)]["hit"] != hit:
            bad.append(f"fixed {position}")
    return bad


@pytest.mark.parametrize("path", list(FILES), ids=lambda p: p.name)
def test_every_record_agrees_with_itself(path: Path) -> None:
    checked = 0
    for row in _records(path):
        if row["datastring"]:
            assert _consistency_problems(json.loads(row["datastring"]), row) == [], row["uniqueid"]
            checked += 1
    assert checked == FILES[path][1]


def test_the_consistency_check_catches_a_same_length_typo() -> None:
    row = next(r for r in _records(FULL) if r["datastring"])
    data = json.loads(row["datastring"])
    trial = next(e["trialdata"] for e in data["data"] if e["trialdata"].get("phase") == "TEST")
    trial["hit"] += 1  # one digit off, as a misread page would give
    assert any(p.startswith("hit ") for p in _consistency_problems(data, row))


def test_the_whole_export_imports_to_the_hand_count() -> None:
    counts = import_psiturk(FULL).facts["counts"]
    assert counts["participants without data (did not start)"] == 10
    assert counts["participants"] == 51
    stopped = "participants who were stopped by the task at a failed catch trial (left out)"
    assert counts[stopped] == 6
    assert counts["participants who restarted (last run kept)"] == 1
    assert counts["TEST trials of earlier runs (left out)"] == 5
    assert counts["participants scored"] == 45 and counts["trials scored"] == 1260
    assert (counts["catch trials (excluded)"], counts["catch trials answered right"]) == (135, 123)
    paper = import_psiturk(FULL, qualified_only=True, drop_wrong_topic=True).facts["counts"]
    assert paper["participants below the topic-accuracy rule"] == 1
    assert paper["participants whose recorded topic tally the key reproduces"] == 44
    assert paper["trials with the wrong topic (excluded)"] == 92
    assert (paper["participants scored"], paper["trials scored"]) == (44, 1140)
    strict = import_psiturk(FULL, drop_failed_catch=True).facts["counts"]
    # the 12 wrong catch answers of finishers come from 10 judges (2 missed both 12 and 23)
    assert strict["participants with a catch trial answered wrong (left out)"] == 10
    assert strict["participants scored"] == 35


def test_the_may30_export_imports_to_the_hand_count() -> None:
    counts = import_psiturk(MAY).facts["counts"]
    assert counts["participants without data (did not start)"] == 14
    assert (
        counts["participants who were stopped by the task at a failed catch trial (left out)"] == 12
    )
    assert counts["participants who restarted (last run kept)"] == 2
    assert counts["TEST trials of earlier runs (left out)"] == 15
    assert counts["participants scored"] == 49 and counts["trials scored"] == 1421
    assert (counts["catch trials (excluded)"], counts["catch trials answered right"]) == (147, 131)
    paper = import_psiturk(MAY, qualified_only=True, drop_wrong_topic=True).facts["counts"]
    assert paper["participants below the topic-accuracy rule"] == 1  # 20/32: the task said yes
    assert paper["participants whose recorded topic tally the key reproduces"] == 48
    assert paper["trials with the wrong topic (excluded)"] == 87
    assert (paper["participants scored"], paper["trials scored"]) == (48, 1305)
    strict = import_psiturk(MAY, drop_failed_catch=True).facts["counts"]
    assert strict["participants with a catch trial answered wrong (left out)"] == 13
    assert strict["participants scored"] == 36


def test_the_restarted_participant_is_scored_on_the_last_run() -> None:
    got = import_psiturk(FULL)
    restarted = [t for t in got.trials if t["judge"] == "debugZZw7z:debugkXsSY"]
    assert [t["trial"] for t in restarted] == list(range(1, 32))
    assert restarted[0]["conversation"] == "conv100"  # the second run's first conversation
    assert sum(t["correct"] for t in restarted) == 6  # the task's own tally: 6 of 31


PAPER = ["--qualified-only", "--drop-wrong-topic"]


@pytest.mark.parametrize(
    ("path", "flags", "counts"),
    [
        (FULL, [], {"hh": 839, "hm": 421, "mh": 824, "mm": 436}),
        (FULL, PAPER, {"hh": 764, "hm": 381, "mh": 737, "mm": 398}),
        (FULL, [*PAPER, "--drop-feedback"], {"hh": 416, "hm": 207, "mh": 334, "mm": 183}),
        (MAY, [], {"hh": 990, "hm": 431, "mh": 888, "mm": 533}),
        (MAY, PAPER, {"hh": 925, "hm": 400, "mh": 798, "mm": 487}),
        (MAY, [*PAPER, "--drop-feedback"], {"hh": 474, "hm": 182, "mh": 439, "mm": 259}),
    ],
)
def test_the_score_of_the_whole_export(
    tmp_path: Path, path: Path, flags: list[str], counts: dict[str, int]
) -> None:
    out = tmp_path / "paper"
    done = runner.invoke(app, ["itt", "import", str(path), "--out", str(out), *flags])
    assert done.exit_code == 0, done.output
    scored = runner.invoke(
        app, ["itt", "score", str(out / "judgements.csv"), "--json", "--replicates", "100"]
    )
    assert scored.exit_code == 0, scored.output
    people = json.loads(scored.stdout)["per_judge_type"]["human"]
    assert people["counts"] == counts
    n_h, n_m = counts["hh"] + counts["hm"], counts["mh"] + counts["mm"]
    assert people["detectability"] == round((counts["hh"] / n_h + counts["mm"] / n_m) / 2, 4)


def test_a_short_run_without_the_questionnaire_is_left_out(tmp_path: Path) -> None:
    """A finisher's record cut after trial 10 (as a closed browser leaves it) is not scored."""
    rows = _records(FULL)
    row = next(r for r in rows if r["datastring"] and "correct_humanai" in r["datastring"])
    data = json.loads(row["datastring"])
    tests = [i for i, e in enumerate(data["data"]) if e["trialdata"].get("phase") == "TEST"]
    data["data"] = data["data"][: tests[9] + 1]
    row["datastring"] = json.dumps(data)
    cut = tmp_path / "cut.csv"
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows([row, rows[1]])
    cut.write_text(buffer.getvalue(), encoding="utf-8")
    counts = import_psiturk(cut).facts["counts"]
    assert counts["participants who quit before the end of the task (left out)"] == 1
    assert counts["participants scored"] == 1
