"""The command line as a user runs it: real processes, real files, exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

CONFIG = {
    "name": "cli-test",
    "agents": {
        "judge": {"kind": "scripted", "replies": ["Hi?", "Sure. <answer>1</answer>"]},
        "mimic": {"kind": "scripted", "replies": ["Hello", "<answer>0</answer>"]},
    },
    "experiment": {"game": "gtt", "universe": ["judge", "mimic"], "trials_per_pair": 2},
}


def turinglab(*args: str, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "turinglab", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
    )


def write_config(tmp_path: Path, data: dict) -> Path:
    path = tmp_path / "exp.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_run_report_runs_export(tmp_path: Path) -> None:
    cfg = write_config(tmp_path, CONFIG)
    done = turinglab("run", str(cfg), "--no-progress", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "New run" in done.stdout and "8 trials planned" in done.stdout
    assert "finished: 8 trials finished now (8/8 in all)" in done.stdout
    assert "Turing scores" in done.stdout
    assert (tmp_path / "turinglab.db").exists()  # the default store, in the working directory

    again = turinglab("run", str(cfg), "--no-progress", cwd=tmp_path)
    assert "Resuming run" in again.stdout and "0 trials finished now" in again.stdout

    runs = turinglab("runs", cwd=tmp_path)
    assert "cli-test" in runs.stdout and "finished" in runs.stdout

    report = turinglab("report", "cli-test", cwd=tmp_path)
    assert report.returncode == 0
    # judge always says 1: right on its self trials, wrong on actor ones → p̂ = 0.5, d̂ = 0.
    line = next(ln for ln in report.stdout.splitlines() if "mimic" in ln and "judge" in ln)
    assert "0.50" in line and "+0.00" in line

    export = turinglab("export", "cli-test", "--format", "jsonl", "--out", "ex", cwd=tmp_path)
    assert export.returncode == 0, export.stderr
    results = next(iter((tmp_path / "ex").glob("*-results.jsonl")))
    assert len(results.read_text().splitlines()) == 8
    transcripts = next(iter((tmp_path / "ex").glob("*-transcripts.jsonl")))
    first = json.loads(transcripts.read_text().splitlines()[0])
    assert first["histories"]["distinguisher"][1] == {"role": "assistant", "content": "Hi?"}


def test_bad_config_is_a_clear_error(tmp_path: Path) -> None:
    bad = {**CONFIG, "experiment": {**CONFIG["experiment"], "universe": ["judge", "ghost"]}}
    done = turinglab("run", str(write_config(tmp_path, bad)), cwd=tmp_path)
    assert done.returncode == 2
    assert "experiment.universe[1]: unknown agent 'ghost'" in done.stderr
    assert not (tmp_path / "turinglab.db").exists()  # nothing ran, nothing stored


def test_missing_api_key_is_a_clear_error(tmp_path: Path) -> None:
    cfg = {
        **CONFIG,
        "agents": {
            **CONFIG["agents"],
            "hosted": {"kind": "openai", "model": "m", "api_key_env": "TURINGLAB_TEST_NO_SUCH_KEY"},
        },
        "experiment": {**CONFIG["experiment"], "universe": ["judge", "hosted"]},
    }
    done = turinglab("run", str(write_config(tmp_path, cfg)), cwd=tmp_path)
    assert done.returncode == 2
    assert "TURINGLAB_TEST_NO_SUCH_KEY" in done.stderr


def test_unknown_run_and_format(tmp_path: Path) -> None:
    done = turinglab("report", "nope", cwd=tmp_path)
    # no store here yet: a read-only command says so, and creates none
    assert done.returncode == 2 and "store turinglab.db does not exist" in done.stderr
    assert not (tmp_path / "turinglab.db").exists()
    done = turinglab("export", "nope", "--format", "xls", cwd=tmp_path)
    assert done.returncode == 2 and "--format" in done.stderr


def test_agents_lists_embedded_and_configured(tmp_path: Path) -> None:
    done = turinglab("agents", "--config", str(write_config(tmp_path, CONFIG)), cwd=tmp_path)
    assert done.returncode == 0
    for name in ("eliza", "smollm2", "gemma3-base", "judge", "mimic"):
        assert name in done.stdout


def test_chat_reads_stdin_one_reply_per_line(tmp_path: Path) -> None:
    done = turinglab(
        "chat",
        "eliza",
        cwd=tmp_path,
        stdin="Men are all alike.\nThey're always bugging us about something or other.\n",
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["IN WHAT WAY", "CAN YOU THINK OF A SPECIFIC EXAMPLE"]


def test_chat_unknown_agent(tmp_path: Path) -> None:
    done = turinglab("chat", "hal9000", cwd=tmp_path, stdin="hi\n")
    assert done.returncode == 2 and "unknown agent 'hal9000'" in done.stderr


def test_html_reports_from_the_command_line(tmp_path: Path) -> None:
    cfg = write_config(tmp_path, CONFIG)
    assert turinglab("run", str(cfg), "--no-progress", cwd=tmp_path).returncode == 0
    done = turinglab("report", "cli-test", "--out", "rep", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    html = (tmp_path / "rep" / "report.html").read_text()
    assert (
        "GTT report: cli-test" in html and (tmp_path / "rep" / "gtt-advantage-heatmap.png").exists()
    )

    example = Path(__file__).parents[2] / "examples" / "three_party_example.csv"
    done = turinglab("report", str(example), "--out", "study", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "GPT-4.5-PERSONA" in (tmp_path / "study" / "report.html").read_text()

    bad = tmp_path / "bad.csv"
    bad.write_text("game,interrogator,witness,witness_type,judged_human\ng1,i1,ELIZA,robot,yes\n")
    done = turinglab("report", str(bad), "--out", "x", cwd=tmp_path)
    assert done.returncode == 2 and "witness_type" in done.stderr and "line 2" in done.stderr


def test_stats_and_tag_are_wired(tmp_path: Path) -> None:
    done = turinglab(
        "stats", "binomial", "--successes", "7", "--trials", "10", "--json", cwd=tmp_path
    )
    assert done.returncode == 0
    assert json.loads(done.stdout)["p_two_sided"] == pytest.approx(0.34375)
    done = turinglab("stats", "binomial", "--successes", "11", "--trials", "10", cwd=tmp_path)
    assert done.returncode == 2
    done = turinglab("tag", "codebook", "gtt_probes", "--json", cwd=tmp_path)
    assert done.returncode == 0 and "model-identity" in done.stdout


def test_study_report_takes_tagger_codes(tmp_path: Path) -> None:
    import pandas as pd

    example = Path(__file__).parents[2] / "examples" / "three_party_example.csv"
    games = sorted(pd.read_csv(example, comment="#")["game"].unique())
    codes = tmp_path / "codes.csv"
    pd.DataFrame(
        {
            "game": games,
            "witness": ["ai"] * len(games),
            "codes": ["humour" if i % 2 else "are-you-a-bot;weather" for i in range(len(games))],
        }
    ).to_csv(codes, index=False)
    done = turinglab(
        "report", str(example), "--out", "s", "--tags", f"strategies={codes}", cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    html = (tmp_path / "s" / "report.html").read_text()
    start = html.index('id="codes"')
    section = html[start : html.index('id="stt"')]
    assert "Skipped" not in section and "Humour" in section
    done = turinglab("report", str(example), "--tags", "colours=x.csv", cwd=tmp_path)
    assert done.returncode == 2 and "--tags takes" in done.stderr
