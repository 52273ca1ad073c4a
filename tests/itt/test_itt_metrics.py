"""Detectability and confusion matrices against hand-computed examples; judgements files."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from turinglab.itt.judgements import JudgementRow, load_judgements, save_judgements
from turinglab.itt.metrics import confusion, judge_family, per_model, score, wilson
from turinglab.itt.tables import RowError


def row(source: str, label: str, model: str | None = None, **extra: object) -> JudgementRow:
    data = {
        "judge": "j1",
        "judge_type": "human",
        "item": "i",
        "source": source,
        "model": model,
        "label": label,
        **extra,
    }
    return JudgementRow.model_validate(data)


def test_confusion_and_detectability_by_hand() -> None:
    # 10 human responses: 7 labelled H; 10 machine responses: 4 labelled H (fooled).
    rows = [row("human", "H")] * 7 + [row("human", "M")] * 3
    rows += [row("machine", "H", "m1")] * 4 + [row("machine", "M", "m1")] * 6
    c = confusion(rows)
    assert (c.hh, c.hm, c.mh, c.mm) == (7, 3, 4, 6)
    assert c.p_h_given_h == pytest.approx(0.7)
    assert c.p_m_given_h == pytest.approx(0.3)
    assert c.p_h_given_m == pytest.approx(0.4)
    assert c.p_m_given_m == pytest.approx(0.6)
    assert c.detectability == pytest.approx(0.65)  # ½(0.7 + 0.6)
    lo, hi = c.detectability_ci()
    assert lo < 0.65 < hi and hi - lo < 0.5


def test_detectability_ignores_the_mix_of_sources() -> None:
    # Same rates, 10× more machine responses: balanced accuracy is unchanged.
    rows = [row("human", "H")] * 7 + [row("human", "M")] * 3
    rows += [row("machine", "H", "m1")] * 40 + [row("machine", "M", "m1")] * 60
    assert confusion(rows).detectability == pytest.approx(0.65)


def test_perfect_imitator_and_trivial_detection() -> None:
    coin = [
        row("human", "H"),
        row("human", "M"),
        row("machine", "H", "m"),
        row("machine", "M", "m"),
    ]
    assert confusion(coin).detectability == pytest.approx(0.5)
    trivial = [row("human", "H"), row("machine", "M", "m")]
    assert confusion(trivial).detectability == pytest.approx(1.0)
    assert math.isnan(confusion([row("human", "H")]).detectability)


def test_wilson_interval_matches_known_values() -> None:
    lo, hi = wilson(7, 10)  # the textbook Wilson interval for 7/10
    assert lo == pytest.approx(0.3968, abs=1e-3)
    assert hi == pytest.approx(0.8922, abs=1e-3)


def test_per_model_shares_the_human_row() -> None:
    rows = [row("human", "H")] * 3 + [row("human", "M")]
    rows += [row("machine", "M", "a")] * 2 + [row("machine", "H", "b")] * 2
    models = per_model(rows)
    assert models["a"].detectability == pytest.approx(0.5 * (0.75 + 1.0))
    assert models["b"].detectability == pytest.approx(0.5 * (0.75 + 0.0))


def test_score_groups_by_length_type_and_demographics() -> None:
    rows = [
        row("human", "H", length=3, gender="f"),
        row("machine", "M", "a", length=3, gender="m"),
        row("human", "M", length=6, gender="f"),
        row("machine", "H", "a", length=6, gender="m"),
    ]
    out = score(rows, group_by=["gender"])
    assert out["per_length"]["3"]["detectability"] == 1.0
    assert out["per_length"]["6"]["detectability"] == 0.0
    assert set(out["per_judge_group"]["gender"]) == {"f", "m"}
    with pytest.raises(ValueError, match="no judgement has a 'age' column"):
        score(rows, group_by=["age"])


def test_judge_family_folds_seeds_and_lengths() -> None:
    ai = JudgementRow(
        judge="svm-minilm-side@6/seed2", judge_type="ai", item="x", source="human", label="H"
    )
    assert judge_family(ai) == "svm-minilm-side"
    assert judge_family(row("human", "H")) == "human judges"


def test_judgements_roundtrip_csv_and_jsonl(tmp_path: Path) -> None:
    rows = [
        row("human", "H", task="conversation", length=3, age="30"),
        row("machine", "M", "smollm2", task="conversation"),
    ]
    for name in ("j.csv", "j.jsonl"):
        save_judgements(tmp_path / name, rows)
        back = load_judgements(tmp_path / name)
        assert [r.label for r in back] == ["H", "M"]
        assert back[0].demographics == {"age": "30"}
        assert back[1].model == "smollm2" and back[0].model is None


def test_bad_rows_are_refused_with_line_and_column(tmp_path: Path) -> None:
    csv_file = tmp_path / "bad.csv"
    csv_file.write_text(
        "judge,judge_type,item,source,model,label\n"
        "j1,human,i1,human,,H\n"
        "j1,human,i2,machine,m1,maybe\n"
    )
    with pytest.raises(RowError) as err:
        load_judgements(csv_file)
    assert err.value.line == 3 and err.value.column == "label"
    assert str(err.value).startswith(f"{csv_file}:3: column 'label'")

    missing_model = tmp_path / "bad2.csv"
    missing_model.write_text("judge,judge_type,item,source,model,label\nj,ai,i,machine,,M\n")
    with pytest.raises(RowError, match=r":2: .*machine response needs its model"):
        load_judgements(missing_model)

    jsonl = tmp_path / "bad.jsonl"
    good = {"judge": "j", "judge_type": "human", "item": "i", "source": "human", "label": "H"}
    jsonl.write_text(json.dumps(good) + "\n" + json.dumps({**good, "judge_type": "robot"}) + "\n")
    with pytest.raises(RowError) as err2:
        load_judgements(jsonl)
    assert (err2.value.line, err2.value.column) == (2, "judge_type")
    jsonl.write_text("{not json\n")
    with pytest.raises(RowError, match=r":1: not JSON"):
        load_judgements(jsonl)
