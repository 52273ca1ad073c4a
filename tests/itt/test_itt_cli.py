"""`turinglab itt` commands, datasets, the chitchat source, and the full offline demo."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from turinglab.cli.itt import itt_app
from turinglab.itt.dataset import conversations, load_dataset
from turinglab.itt.tables import RowError

app = typer.Typer()
app.add_typer(itt_app, name="itt")
runner = CliRunner()

JUDGEMENTS = """judge,judge_type,item,source,model,label,length,gender
p1,human,c1:A,human,,H,3,f
p1,human,c2:A,machine,smollm2,M,3,f
p2,human,c1:B,human,,M,6,m
p2,human,c2:B,machine,gemma3-base,H,6,m
svm,ai,c1:A,human,,H,3,
svm,ai,c2:B,machine,gemma3-base,M,3,
"""


def test_score_json_by_hand(tmp_path: Path) -> None:
    path = tmp_path / "j.csv"
    path.write_text(JUDGEMENTS)
    result = runner.invoke(app, ["itt", "score", str(path), "--json", "--group-by", "gender"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    human = out["per_judge_type"]["human"]
    # humans: p(H|H) = 1/2, p(M|M) = 1/2 → 0.5; ai: 1/1 and 1/1 → 1.0
    assert (human["p_H_given_H"], human["p_M_given_M"], human["detectability"]) == (0.5, 0.5, 0.5)
    assert out["per_judge_type"]["ai"]["detectability"] == 1.0
    # per model, never pooled: the people's table shares their human row; the AI judge's has its own
    people = out["per_model"]["gemma3-base"]["human judges"]["(no task)"]
    assert people["counts"] == {"hh": 1, "hm": 1, "mh": 1, "mm": 0}
    assert out["per_model"]["gemma3-base"]["svm"]["(no task)"]["counts"] == {
        "hh": 1, "hm": 0, "mh": 0, "mm": 1,
    }  # fmt: skip
    assert set(out["per_model"]["smollm2"]) == {"human judges"}
    assert set(out["per_length"]) == {"3", "6"}
    assert set(out["per_judge_group"]["gender"]) == {"f", "m"}
    table = runner.invoke(app, ["itt", "score", str(path)])
    assert table.exit_code == 0 and "Per judge (never pooled)" in table.output


def test_score_refuses_a_bad_row_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "j.csv"
    path.write_text(JUDGEMENTS.replace("p2,human,c1:B,human,,M", "p2,human,c1:B,alien,,M"))
    result = runner.invoke(app, ["itt", "score", str(path)])
    assert result.exit_code == 2
    assert f"error: {path}:4: column 'source'" in result.output
    assert len(result.output.strip().splitlines()) == 1


def dataset_csv(tmp_path: Path) -> Path:
    lines = ["item,task,stimulus_id,source,agent,text,conversation,turn,speaker,topic"]
    for c, (a, b) in enumerate([("human", "human"), ("machine", "machine")] * 3):
        for t in range(4):
            src = a if t % 2 == 0 else b
            agent = "p" if src == "human" else "smollm2"
            lines.append(
                f"c{c}-{t},conversation,c{c},{src},{agent},hello {c} {t},c{c},{t},"
                f"{'AB'[t % 2]},music"
            )
    path = tmp_path / "d.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_dataset_check_convert_and_batch(tmp_path: Path) -> None:
    path = dataset_csv(tmp_path)
    rows = load_dataset(path)
    convs = conversations(rows)
    assert len(convs) == 6 and convs[0].kind == "H-H" and convs[1].kind == "M-M"
    assert convs[0].transcript(2) == "A: hello 0 0\nB: hello 0 1"
    check = runner.invoke(app, ["itt", "dataset", "check", str(path)])
    assert check.exit_code == 0 and "24 responses" in check.output
    out = tmp_path / "d.jsonl"
    conv = runner.invoke(app, ["itt", "dataset", "convert", str(path), str(out)])
    assert conv.exit_code == 0 and load_dataset(out) == rows
    drawn = runner.invoke(app, ["itt", "batch", str(path), "--judge", "p9", "--size", "4"])
    assert drawn.exit_code == 0, drawn.output
    trials = json.loads(drawn.output)["trials"]
    assert sorted(t["source"] for t in trials) == ["human", "human", "machine", "machine"]


def test_dataset_errors_name_line_and_column(tmp_path: Path) -> None:
    path = dataset_csv(tmp_path)
    text = path.read_text().splitlines()
    text[3] = text[3].replace(",conversation,", ",dancing,")
    path.write_text("\n".join(text) + "\n")
    with pytest.raises(RowError) as err:
        load_dataset(path)
    assert (err.value.line, err.value.column) == (4, "task")
    text = dataset_csv(tmp_path).read_text().splitlines()
    text.append(text[1])
    path.write_text("\n".join(text) + "\n")
    with pytest.raises(RowError, match="duplicate item id 'c0-0'"):
        load_dataset(path)


def test_chitchat_rows_name_where_they_come_from() -> None:
    from turinglab.itt.human_sources import chitchat_conversations

    rows = chitchat_conversations(2, 6, seed=1)
    assert len(rows) == 12 and all(r.source == "human" for r in rows)
    assert rows == chitchat_conversations(2, 6, seed=1)
    ref = rows[0].model_extra["source_ref"]  # type: ignore[index]
    assert ref.startswith("chitchat-dataset dataset.json[") and ref.endswith(".messages[0]")
    assert {r.speaker for r in rows[:6]} == {"A", "B"}


@pytest.mark.slow
def test_full_offline_demo_generates_judges_and_reports(tmp_path: Path) -> None:
    """Generate machine conversations with the embedded models, take human ones from
    chitchat-dataset, train and evaluate AI judges (incl. an LLM judge), write the report."""
    from turinglab.itt.judgements import load_judgements
    from turinglab.report.itt_report import itt_report

    study = tmp_path / "study"
    result = runner.invoke(
        app,
        [
            "itt",
            "demo",
            str(study),
            # One machine conversation per model pairing and two for the LLM judge: the
            # models' tokens are the test's cost (6 and 4 took 70 CPU-seconds, these 43).
            "--machine",
            "3",
            "--human",
            "6",
            "--exchanges",
            "4",
            "--folds",
            "5",
            "--llm-judge",
            "smollm2",
            "--llm-limit",
            "2",
            "--report",
            str(tmp_path / "report"),
        ],
    )
    assert result.exit_code == 0, result.output
    facts = json.loads((study / "study.json").read_text())
    assert facts["conversations"]["human"] == 6
    assert facts["conversations"]["machine"] + facts["conversations"]["machine_flagged"] == 3
    judged = load_judgements(study / "judgements.csv")
    families = {j.judge.split("/")[0] for j in judged}
    assert {"svm-minilm-sentence", "svm-minilm-side@2", "svm-minilm-side@4"} <= families
    assert (
        any(j.judge.startswith("smollm2/") for j in judged)
        or facts["llm_judges"]["0-shot"]["unparsed"]
    )
    assert facts["ai_judges"]["embeddings_per_second"] > 0
    assert set(facts["extrapolation"]) == {"train-one", "leave-one-out"}
    html = (tmp_path / "report" / "itt_report.html").read_text()
    for part in (
        "Confusion matrices",
        "Detectability per model",
        "Length curves",
        "Extrapolation",
        "Text statistics",
        "<svg",
    ):
        assert part in html
    scored = runner.invoke(app, ["itt", "score", str(study / "judgements.csv"), "--json"])
    assert scored.exit_code == 0 and json.loads(scored.output)["per_judge_type"]["ai"]["n"] > 0
    assert itt_report(study, tmp_path / "again.html").is_file()


@pytest.mark.slow
def test_judge_command_on_captions_and_quality_section(tmp_path: Path) -> None:
    """`itt judge` on a captioning dataset (grouped by image) and the report's BLEU/CIDEr part."""
    from turinglab.report.itt_report import itt_report

    human = [
        "a man walks his dog along the beach at sunset",
        "two kids play football in a muddy field",
        "an old woman reads a newspaper on a bench",
        "a red bus drives down a busy city street",
        "a cat sleeps on a pile of warm laundry",
        "three friends share a pizza at a wooden table",
    ]
    lines = ["item,task,stimulus_id,source,agent,text,reference"]
    for i, text in enumerate(human):
        lines.append(f"h{i},captioning,img{i},human,p{i},{text},")
        for model, template in (
            ("literal", "{}"),
            ("verbose", "This picture shows that {} indeed"),
            ("terse", "scene with things"),
        ):
            lines.append(
                f"{model}{i},captioning,img{i},machine,{model},{template.format(text)},{text}"
            )
    path = tmp_path / "captions.csv"
    path.write_text("\n".join(lines) + "\n")
    study = tmp_path / "study"
    result = runner.invoke(
        app, ["itt", "judge", str(path), "--out", str(study), "--folds", "3", "--seeds", "2"]
    )
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["ai_judgements"] == 2 * 24 and summary["texts_embedded"] == 24
    html = itt_report(study, tmp_path / "r.html").read_text()
    assert "Quality metrics and detectability" in html and "Spearman" in html
    assert "literal" in html and "100.0" in html  # a verbatim copy of the reference: BLEU 100
