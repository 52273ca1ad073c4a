"""Studies are never silently replaced, odd encodings get one line naming file and line, and a
small LLM-judge budget still sees every kind of conversation."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from typer.testing import CliRunner

from turinglab.cli import app
from turinglab.itt.dataset import conversations, load_dataset
from turinglab.itt.judgements import load_judgements
from turinglab.itt.llm_judges import stratified

runner = CliRunner()
JUDGEMENTS = (
    "judge,judge_type,item,source,model,label\np1,human,i1,human,,H\np1,human,i2,machine,m,M\n"
)


def test_a_bom_csv_reads_like_any_other(tmp_path: Path) -> None:
    path = tmp_path / "excel.csv"
    path.write_bytes(b"\xef\xbb\xbf" + JUDGEMENTS.encode())
    assert [r.judge for r in load_judgements(path)] == ["p1", "p1"]
    done = runner.invoke(app, ["itt", "score", str(path), "--json", "--replicates", "100"])
    assert done.exit_code == 0, done.output


def test_a_non_utf8_file_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "latin1.csv"
    path.write_bytes((JUDGEMENTS + "p2,human,caf\xe9,human,,H\n").encode("latin-1"))
    done = runner.invoke(app, ["itt", "score", str(path)])
    assert done.exit_code == 2
    assert done.output.strip() == (
        f"error: {path}:4: not UTF-8 (byte 0xe9); save the file as UTF-8"
    )


def test_judge_refuses_to_replace_a_study(tmp_path: Path) -> None:
    study = tmp_path / "study"
    study.mkdir()
    (study / "judgements.csv").write_text(JUDGEMENTS)
    before = (study / "judgements.csv").read_bytes()
    data = tmp_path / "d.csv"
    data.write_text("item,task,stimulus_id,source,agent,text\n")
    done = runner.invoke(app, ["itt", "judge", str(data), "--out", str(study)])
    assert done.exit_code == 2
    assert done.output.strip() == (
        f"error: {study} already holds a study (judgements.csv); choose a new --out "
        "(nothing overwritten)"
    )
    assert (study / "judgements.csv").read_bytes() == before
    llm = runner.invoke(
        app, ["itt", "llm-judge", str(data), "--agent", "x", "--out", str(study / "judgements.csv")]
    )
    assert llm.exit_code == 2 and "exists; choose a new --out" in llm.output
    assert (study / "judgements.csv").read_bytes() == before


def conversation_dataset(tmp_path: Path) -> Path:
    # 12 human-human conversations first (the old --limit took only these), then 4 M-M, 4 H-M
    lines = ["item,task,stimulus_id,source,agent,text,conversation,turn,speaker"]
    kinds = [("human", "human")] * 12 + [("machine", "machine")] * 4 + [("human", "machine")] * 4
    for c, (a, b) in enumerate(kinds):
        for t, src in enumerate((a, b)):
            agent = "p" if src == "human" else "smollm2"
            lines.append(
                f"c{c:02}-{t},conversation,c{c:02},{src},{agent},hi {t},c{c:02},{t},{'AB'[t]}"
            )
    path = tmp_path / "convs.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_limit_draws_across_kinds_reproducibly(tmp_path: Path) -> None:
    convs = conversations(load_dataset(conversation_dataset(tmp_path)))
    six = stratified(convs, 6, seed=1)
    assert Counter(c.kind for c in six) == {"H-H": 2, "H-M": 2, "M-M": 2}
    assert stratified(convs, 6, seed=1) == six
    assert {c.id for c in stratified(convs, 6, seed=2)} != {c.id for c in six}  # seeded draw
    # a budget larger than a kind takes all of it and fills up from the others
    many = stratified(convs, 14, seed=0)
    assert len(many) == 14 and Counter(c.kind for c in many)["M-M"] == 4
    assert len(stratified(convs, 100)) == len(convs)


def test_the_report_shows_the_4_way_answers(tmp_path: Path) -> None:
    from turinglab.report.itt_report import itt_report

    study = tmp_path / "study"
    study.mkdir()
    (study / "responses.csv").write_text(conversation_dataset(tmp_path).read_text())
    lines = ["judge,judge_type,item,source,model,label,length"]
    for conv, a, b in [("c00", "human", "human"), ("c12", "machine", "machine"),
                       ("c16", "human", "machine")]:  # fmt: skip
        for side, src in zip("AB", (a, b), strict=True):
            model = "smollm2" if src == "machine" else ""
            lines.append(f"p1,human,{conv}:{side},{src},{model},H,2")
    (study / "judgements.csv").write_text("\n".join(lines) + "\n")
    html = itt_report(study, tmp_path / "r.html").read_text()
    assert "4-way answers (conversations)" in html
    assert "human judges: 4-way answers" in html and "3 trials with both speakers judged" in html
