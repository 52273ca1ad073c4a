"""Study reports of batch runs tell the whole truth (issue 17): the transcript travels with the
study file, stand-ins are named as such, separated fits are called not estimable, no criterion
passes on too few games, nothing prints `nan`, durations come from the game clock and the
report is titled after the run. Each case runs the real command line."""

from __future__ import annotations

import base64
import html
import json
import re
import zlib
from pathlib import Path

import pandas as pd

from test_cli_errors import files, turinglab, write_config

# A two-party interrogator: four messages (it waits for each answer: the witness types on the
# game clock), then its verdict and confidence.
JUDGE = ["hello there", "where are you from?", "favourite food?", "and today?"]
JUDGE += ["human", "Confidence: 80\nReason: typed like a person"]
PERSON = ["hey", "lol idk, ohio", "pizza obviously", "nothing much tbh"]
RUN_NAME = "tp-truth"


def two_party(n: int = 2) -> dict:
    return {
        "name": RUN_NAME,
        "agents": {
            "judge": {"kind": "scripted", "replies": JUDGE, "cycle": True},
            "person": {"kind": "scripted", "replies": PERSON, "cycle": True},
        },
        "experiment": {
            "game": "two-party",
            "interrogators": ["judge"],
            "ai_witnesses": [{"agent": "eliza", "persona": "none"}],
            "human_witnesses": ["person"],
            "stand_ins": ["person"],
            "n": n,
            "max_interrogator_messages": 4,
            "typing_delay": True,
        },
    }


def page_text(path: Path) -> str:
    return html.unescape(re.sub(r"<[^>]+>", " ", path.read_text()))


def played(tmp_path: Path) -> Path:
    cfg = write_config(tmp_path, two_party())
    done = turinglab("run", str(cfg), "--no-progress", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    return cfg


def test_study_export_of_a_batch_run_carries_transcripts_and_clock_time(tmp_path: Path) -> None:
    played(tmp_path)
    done = turinglab("export", RUN_NAME, "--format", "study", "--out", "ex", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    study = pd.read_csv(tmp_path / "ex" / "study.csv")
    assert len(study) == 4 and set(study["study"]) == {RUN_NAME}
    for row in study.itertuples():
        said = json.loads(row.transcript)
        assert said, row  # the game browser and `tag games` get the conversation
        senders = [m["sender"] for m in said]
        assert senders.count("interrogator") == row.interrogator_messages
        assert senders.count("witness") == row.witness_messages
        # Times are seconds into the game on its own (simulated) clock, and the game lasted.
        assert row.duration_s > 0
        assert all(0 <= m["t"] <= row.duration_s for m in said), said
    assert set(study["witness_kind"]) == {"stand-in", "agent"}


def test_study_report_of_a_batch_run_names_stand_ins_and_the_run(tmp_path: Path) -> None:
    played(tmp_path)
    done = turinglab("report", RUN_NAME, "--out", "rep", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    page = tmp_path / "rep" / "report.html"
    text = page_text(page)
    assert f"Turing-test study report — {RUN_NAME}" in text
    assert "default" not in re.findall(r"<title>(.*?)</title>", page.read_text())[0]
    assert "are stand-ins: agents replaying lines people wrote, not people" in text
    assert "judged by an AI interrogator" in text
    assert " nan" not in text.lower() and "+nan" not in text.lower()
    records = browser_records(page)
    sides = sorted((r["witness"], r["human_witness"]) for r in records)
    # Two-party: two games with the stand-in (named so), two with ELIZA (no human side).
    assert sides == [("ELIZA", None)] * 2 + [("stand-in", "stand-in")] * 2, sides
    conversations = {m["conversation"] for r in records for m in r["messages"]}
    assert conversations == {"stand-in (human)", "ELIZA (ai)"}
    # The win-rate table's human row, and the comparison, say stand-in too.
    assert "stand-in human witnesses" in text


def browser_records(page: Path) -> list[dict]:
    """The game browser's records as embedded in the page (plain JSON or gzip blocks)."""
    source = page.read_text()
    found = []
    for blob in re.findall(r'<script type="application/json"[^>]*>(.*?)</script>', source, re.S):
        data = json.loads(blob)
        found += _records_in(data)
    return found


def _records_in(data: object) -> list[dict]:
    if isinstance(data, dict):
        if "human_witness" in data and "messages" in data:
            return [data]
        return [r for v in data.values() for r in _records_in(v)]
    if isinstance(data, list):
        return [r for v in data for r in _records_in(v)]
    if isinstance(data, str) and len(data) > 40 and re.fullmatch(r"[A-Za-z0-9+/=]+", data):
        try:
            raw = zlib.decompress(base64.b64decode(data), 31)
        except (ValueError, zlib.error):
            return []
        return _records_in(json.loads(raw))
    return []


def test_report_of_a_run_without_out_writes_nothing(tmp_path: Path) -> None:
    played(tmp_path)
    before = files(tmp_path)
    done = turinglab("report", RUN_NAME, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert f"{RUN_NAME} (" in done.stdout and "4 finished games" in done.stdout
    assert "--out DIR" in done.stdout  # how to get the report
    assert files(tmp_path) == before  # no ./report/ written behind the user's back


def _study_csv(path: Path, rows: list[dict]) -> Path:
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def test_separated_fits_are_reported_not_estimable(tmp_path: Path) -> None:
    """ELIZA judged AI in every game: the ELIZA-baseline logit has no finite estimate."""
    rows = []
    for g in range(12):
        for witness, judged in (("ELIZA", False), ("GPT", g % 3 == 0)):
            rows.append(
                {
                    "game": f"g{g}-{witness}",
                    "interrogator": f"p{g % 4}",
                    "witness": witness,
                    "witness_type": "ai",
                    "judged_human": judged,
                    "format": "two-party",
                    "persona": "PERSONA" if witness == "GPT" else "NO-PERSONA",
                    "model": witness.lower(),
                }
            )
    study = _study_csv(tmp_path / "sep.csv", rows)
    done = turinglab("report", str(study), "--out", "rep", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    text = page_text(tmp_path / "rep" / "report.html")
    assert "witness_vs_baseline: not estimable (complete separation)" in text
    assert "every game of the reference level was judged AI (0/12)" in text
    assert "persona_mixed_model: not estimable (complete separation)" in text
    assert "nan" not in text.lower().split()


def test_one_game_study_passes_nothing_and_prints_no_nan(tmp_path: Path) -> None:
    rows = [
        {"game": "g1", "interrogator": "p1", "witness": "GPT", "witness_type": "ai",
         "judged_human": False, "format": "three-party"},
        {"game": "g1", "interrogator": "p1", "witness": "human", "witness_type": "human",
         "judged_human": True, "format": "three-party"},
    ]  # fmt: skip
    study = _study_csv(tmp_path / "one.csv", rows)
    done = turinglab("report", str(study), "--out", "rep", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    text = page_text(tmp_path / "rep" / "report.html")
    assert "not decided (n = 1 <" in text
    assert not re.search(r"\bpass\b", text.split("Pass criteria", 1)[1].split("Design audit")[0])
    assert not re.search(r"[+-]?\bnan\b", text, re.I), re.findall(r".{40}nan.{40}", text, re.I)
    assert "Wald z" in text and "undefined" in text


def test_win_rate_figure_labels_stand_ins() -> None:
    from turinglab.report.human_figures import win_rate_plot

    fig = win_rate_plot(
        ["ELIZA"],
        [0.25],
        [(0.1, 0.5)],
        [8],
        human_rate=(0.5, (0.2, 0.8), 8),
        human_label="stand-in human witnesses",
    )
    ax = fig.axes[0]
    ticks = [t.get_text() for t in ax.get_yticklabels()]
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "stand-in human witnesses  (n=8)" in ticks
    assert "stand-in human witnesses, 95% exact CI" in legend
