"""The ITT report's two-way ANOVA over judge demographics: columns found among the common ones
(numeric age grouped into bands), or named with `report --anova`; skipped with the reason
when the judges do not show two columns with two levels each."""

from __future__ import annotations

import html as markup
import re
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from turinglab.cli import app
from turinglab.itt.dataset import Response
from turinglab.itt.demographics import age_group, anova_factors, with_age_groups
from turinglab.itt.judgements import JudgementRow
from turinglab.itt.study import Study
from turinglab.itt.textstats import demographics_anova
from turinglab.report.itt_report import itt_report

SECTION = "Judge demographics (two-way ANOVA)"


def judgements(**columns: Any) -> list[JudgementRow]:
    """16 human judges x 10 labels: accuracy rises with age (9/10 for judges over 45, 5/10
    under), gender alternates and does not matter; plus AI rows with no demographics."""
    rows = []
    for j in range(16):
        age = (24, 52)[(j // 2) % 2]
        demo = {"gender": ("female", "male")[j % 2], "age": age, "education": "master"}
        demo = {k: v for k, v in demo.items() if k in columns.get("keep", demo)}
        right = (9 if age > 45 else 5) + (0, 1, -1, 0)[j // 4]  # the same spread in each cell
        for k in range(10):
            source = "human" if k % 2 else "machine"
            label = ("H" if source == "human" else "M") if k < right else "HM"[k % 2]
            rows.append(
                JudgementRow.model_validate(
                    {"judge": f"j{j}", "judge_type": "human", "item": f"i{k}", "source": source,
                     "model": "m1" if source == "machine" else None, "label": label, **demo}
                )
            )  # fmt: skip
    rows.append(JudgementRow(judge="svm", judge_type="ai", item="i0", source="human", label="H"))
    return rows


def study(folder: Path, rows: list[JudgementRow], **facts: Any) -> Path:
    responses = [
        Response(item=f"i{k}", task="word-association", stimulus_id=f"c{k}", stimulus="sun",
                 source="human" if k % 2 else "machine", agent="p" if k % 2 else "m1",
                 text="moon")
        for k in range(10)
    ]  # fmt: skip
    Study(responses, rows, {"kind": "test", **facts}).save(folder)
    return folder


def section_text(html: str) -> str:
    start = html.index(SECTION + "</h2>")  # the section, not its entry in the contents
    return markup.unescape(re.sub(r"<[^>]+>", " ", html[start : html.index("<h2", start + 1)]))


def test_age_bands_and_factor_choice() -> None:
    assert [age_group(a) for a in ("18", "29", "30", "59", "60", "x", "12")] == [
        "18-29", "18-29", "30-44", "45-59", "60+", None, None,
    ]  # fmt: skip
    humans = with_age_groups([r for r in judgements() if r.judge_type == "human"])
    assert anova_factors(humans) == ("gender", "age_group")  # education has one level
    assert anova_factors(humans, ["age_group", "gender"]) == ("age_group", "gender")
    assert "fewer than two levels of 'education'" in str(
        anova_factors(humans, ["gender", "education"])
    )


def test_report_shows_the_anova_of_the_common_columns(tmp_path: Path) -> None:
    rows = judgements()
    html = itt_report(study(tmp_path / "s", rows), tmp_path / "r.html").read_text()
    text = section_text(html)
    humans = with_age_groups([r for r in rows if r.judge_type == "human"])
    expected = {r["term"]: r for r in demographics_anova(humans, "gender", "age_group")}
    assert expected["age_group"]["p"] < 0.001 and expected["gender"]["p"] > 0.5
    assert "~ gender + age_group" in text
    for term in ("gender", "age_group"):
        assert f"{term} {expected[term]['df']:g} {expected[term]['F']:.2f}" in " ".join(
            text.split()
        )


def test_report_skips_with_the_reason(tmp_path: Path) -> None:
    html = itt_report(
        study(tmp_path / "s", judgements(keep=("gender",))), tmp_path / "r.html"
    ).read_text()
    assert "Skipped: needs two demographic columns" in section_text(html)
    assert "gender (2), age_group (0)" in section_text(html)
    ai_only = [r for r in judgements() if r.judge_type == "ai"]
    html = itt_report(study(tmp_path / "a", ai_only), tmp_path / "a.html").read_text()
    assert "Skipped: no human judgements" in section_text(html)


def test_cli_names_the_columns_or_refuses_one(tmp_path: Path) -> None:
    folder = study(tmp_path / "s", judgements(), anova_factors=["gender", "education"])
    runner = CliRunner()
    out = tmp_path / "out"
    chosen = runner.invoke(app, ["report", str(folder), "--out", str(out), "--anova", "age_group",
                                 "--anova", "gender"])  # fmt: skip
    assert chosen.exit_code == 0, chosen.output
    assert "~ age_group + gender" in section_text((out / "itt_report.html").read_text())
    # Without --anova, study.json's columns are used (education has one level: skipped).
    again = runner.invoke(app, ["report", str(folder), "--out", str(tmp_path / "o2")])
    assert again.exit_code == 0, again.output
    skipped = section_text((tmp_path / "o2" / "itt_report.html").read_text())
    assert "fewer than two levels of 'education'" in skipped
    one = runner.invoke(app, ["report", str(folder), "--anova", "gender"])
    assert one.exit_code != 0 and "--anova takes two demographic columns" in one.output
