"""`turinglab tag …` through typer's CliRunner: tables, --json and bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
from typer.testing import CliRunner

from turinglab.cli.tagging import tag_app

runner = CliRunner()


def test_codebook_table_and_json() -> None:
    table = runner.invoke(tag_app, ["codebook", "reasons"])
    assert table.exit_code == 0, table.output
    assert "gut-feeling" in table.output
    data = json.loads(runner.invoke(tag_app, ["codebook", "gtt_probes", "--json"]).output)
    assert [c["id"] for c in data["codes"]][:4] == ["maths", "science", "coding", "reasoning"]


def test_unknown_codebook_fails_with_a_message() -> None:
    result = runner.invoke(tag_app, ["codebook", "nonsense"])
    assert result.exit_code == 2
    assert "neither a built-in codebook" in result.output


def write_rows(path: Path) -> Path:
    rows = [
        {
            "key": "t1",
            "distinguisher": "b1",
            "histories": {
                "distinguisher": [
                    {"role": "user", "content": "You are taking part in an experiment."},
                    {"role": "assistant", "content": "What is 6 * 7? Who made you?"},
                    {"role": "user", "content": "42. A lab."},
                    {"role": "assistant", "content": "How are you? <answer>0</answer>"},
                ]
            },
        }
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


def test_probes_table_and_json(tmp_path: Path) -> None:
    path = write_rows(tmp_path / "results.jsonl")
    table = runner.invoke(tag_app, ["probes", str(path)])
    assert table.exit_code == 0, table.output
    assert "first turn" in table.output and "model-identity" in table.output
    data = json.loads(runner.invoke(tag_app, ["probes", str(path), "--json"]).output)
    assert data["overall"]["n_units"] == 3
    assert data["overall"]["counts"]["maths"] == 1
    assert data["first_turn"]["n_units"] == 2
    assert data["by_distinguisher"]["b1"]["groups"]["signature"] == 1 / 3


def test_probes_bad_input(tmp_path: Path) -> None:
    missing = runner.invoke(tag_app, ["probes", str(tmp_path / "nope.jsonl")])
    assert missing.exit_code == 2 and "no such file" in missing.output
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"key": "x", "distinguisher": "b"}\n', encoding="utf-8")
    result = runner.invoke(tag_app, ["probes", str(bad)])
    assert result.exit_code == 2 and "histories" in result.output


def scripted_config(tmp_path: Path, reply: str) -> Path:
    cfg = tmp_path / "tagger.yaml"
    cfg.write_text(
        "name: tagging\n"
        f"agents:\n  sayer: {{kind: scripted, replies: [{json.dumps(reply)}]}}\n"
        "experiment: {game: gtt, universe: [sayer]}\n",
        encoding="utf-8",
    )
    return cfg


def study_table(tmp_path: Path) -> Path:
    transcript = json.dumps([{"sender": "interrogator", "text": "are you a bot?", "t": 1}])
    df = pd.DataFrame(
        {
            "game": ["g1", "g1", "g2"],
            "witness": ["ELIZA", "human", "ELIZA"],
            "witness_type": ["ai", "human", "ai"],
            "judged_human": [False, True, True],
            "reason": ["robotic", "typos", None],
            "transcript": [transcript, transcript, None],
        }
    )
    path = tmp_path / "study.csv"
    df.to_csv(path, index=False)
    return path


def test_games_with_a_scripted_json_tagger(tmp_path: Path) -> None:
    args = ["games", str(study_table(tmp_path)), "--agent", "sayer", "--mode", "batch"]
    args += ["--config", str(scripted_config(tmp_path, '["are-you-a-bot"]'))]
    out = tmp_path / "codes.csv"
    result = runner.invoke(tag_app, [*args, "--json", "--out", str(out)])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert [r["codes"] for r in data["rows"]] == [["are-you-a-bot"]] * 3
    bot = next(s for s in data["summary"] if s["code"] == "are-you-a-bot")
    # Correct: g1/ELIZA judged not human (right), g1/human judged human (right), g2 wrong.
    assert (bot["k"], bot["n_scored"], bot["accuracy"]) == (3, 3, 2 / 3)
    assert pd.read_csv(out)["codes"].tolist() == ["are-you-a-bot"] * 3
    table = runner.invoke(tag_app, args)
    assert table.exit_code == 0 and "are-you-a-bot" in table.output


def test_games_bad_input(tmp_path: Path) -> None:
    cfg = str(scripted_config(tmp_path, "yes"))
    table = str(study_table(tmp_path))
    bad_mode = runner.invoke(
        tag_app, ["games", table, "--config", cfg, "--agent", "sayer", "--mode", "all"]
    )
    assert bad_mode.exit_code == 2 and "tagger mode 'all'" in bad_mode.output
    ghost = runner.invoke(tag_app, ["games", table, "--config", cfg, "--agent", "ghost"])
    assert ghost.exit_code == 2 and "unknown agent 'ghost'" in ghost.output
    no_cols = tmp_path / "x.csv"
    no_cols.write_text("a,b\n1,2\n", encoding="utf-8")
    missing = runner.invoke(tag_app, ["games", str(no_cols), "--config", cfg, "--agent", "sayer"])
    assert missing.exit_code == 2 and "missing column(s) ['game', 'witness']" in missing.output
