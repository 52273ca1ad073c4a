"""An ITT study folder: browser judges' labels are read beside the pipeline's (AI) labels."""

from __future__ import annotations

from pathlib import Path

from turinglab.itt.dataset import Response, save_dataset
from turinglab.itt.judgements import JudgementRow, save_judgements
from turinglab.itt.metrics import grouped
from turinglab.itt.study import HUMAN_JUDGEMENTS, JUDGEMENTS, RESPONSES, load_study


def label(judge: str, kind: str, source: str, value: str) -> JudgementRow:
    model = "smollm2" if source == "machine" else None
    return JudgementRow.model_validate(
        {"judge": judge, "judge_type": kind, "item": f"{source}-1", "source": source,
         "model": model, "label": value}
    )  # fmt: skip


def test_human_judges_are_read_beside_ai_judges(tmp_path: Path) -> None:
    responses = [
        Response.model_validate(
            {"item": f"{source}-1", "task": "word-association", "stimulus_id": "cue-1",
             "stimulus": "dog", "source": source, "agent": agent, "text": "cat"}
        )
        for source, agent in (("human", "p1"), ("machine", "smollm2"))
    ]  # fmt: skip
    save_dataset(tmp_path / RESPONSES, responses)
    ai = [label("svm", "ai", "human", "H"), label("svm", "ai", "machine", "M")]
    people = [label("j1", "human", "human", "M"), label("j1", "human", "machine", "M")]
    save_judgements(tmp_path / JUDGEMENTS, ai)
    save_judgements(tmp_path / HUMAN_JUDGEMENTS, people)
    study = load_study(tmp_path)
    assert len(study.judgements) == 4
    by_type = grouped(study.judgements, lambda r: r.judge_type)
    assert by_type["ai"].detectability == 1.0  # both right
    assert by_type["human"].detectability == 0.5  # p(H|H) = 0, p(M|M) = 1
