"""Arena-size studies and large-n statistics stay fast and give the same answers."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binomtest

from turinglab.analysis import intervals, stats
from turinglab.analysis.binomial import exact_binomial_test
from turinglab.human.schema import load_study, validate_study
from turinglab.human.simulate import simulate_study
from turinglab.human.winrates import cluster_bootstrap_ci
from turinglab.report import human_report
from turinglab.report.human_context import SectionSkipped


def test_exact_test_agrees_with_scipy_at_large_n() -> None:
    for k, n, p in [(50_400, 100_000, 0.5), (1_234, 200_000, 0.006), (7, 300_000, 1e-5)]:
        assert exact_binomial_test(k, n, p) == pytest.approx(binomtest(k, n, p).pvalue, rel=1e-9)


def test_binomial_summary_at_ten_million_is_fast() -> None:
    started = time.process_time()  # CPU seconds: the cost, not the neighbours' load
    summary = stats.binomial_summary(5_000_000, 10_000_000)
    elapsed = time.process_time() - started
    assert summary.p_two_sided == 1.0
    low, high = summary.ci["clopper-pearson"]
    for method in ("blaker", "sterne"):  # both lie inside Clopper–Pearson, close to it
        b_low, b_high = summary.ci[method]
        assert low <= b_low < 0.5 < b_high <= high
        assert b_low - low < 1e-6 and high - b_high < 1e-6
    assert elapsed < 20, elapsed  # ~1–2 s on an idle machine (42–80 s before)


def test_large_n_sets_agree_with_a_dense_scan() -> None:
    """At n = 20,000 a direct scan of the p-value on a fine grid is still affordable."""
    k, n, alpha = 9_870, 20_000, 0.05
    grid = np.linspace(0.48, 0.51, 3001)
    sterne = intervals.compatible_p(k, n, alpha)
    accepted = [p for p in grid if binomtest(k, n, p).pvalue > alpha]
    assert sterne[0][0] <= min(accepted) and max(accepted) <= sterne[-1][1]
    assert min(accepted) - sterne[0][0] < 2e-5 and sterne[-1][1] - max(accepted) < 2e-5


def test_cluster_bootstrap_matches_the_generic_bootstrap() -> None:
    rng = np.random.default_rng(3)
    rows = pd.DataFrame(
        {
            "interrogator": rng.integers(0, 300, size=1200).astype(str),
            "judged_human": rng.random(1200) < 0.4,
        }
    )
    per = rows.groupby("interrogator")["judged_human"].agg(["sum", "count"])
    units = per.to_numpy(dtype=float)

    def pooled(sample: np.ndarray) -> float:
        sample = np.asarray(sample, dtype=float).reshape(-1, 2)
        return float(sample[:, 0].sum() / sample[:, 1].sum())

    expected = stats.bootstrap_ci(units, pooled, n_boot=500, seed=7)
    assert cluster_bootstrap_ci(rows, n_boot=500, seed=7) == pytest.approx(expected, abs=1e-12)


def test_validation_of_a_large_study_is_linear(tmp_path: Path) -> None:
    study = simulate_study({"a": 0.6, "b": 0.3}, 5_000, 2, seed=2)  # 20,000 rows
    path = tmp_path / "study.csv"
    study.to_csv(path, index=False)
    started = time.process_time()  # CPU seconds: the cost, not the neighbours' load
    loaded = load_study(path)
    elapsed = time.process_time() - started
    assert len(loaded) == 20_000
    assert set(loaded["format"]) == {"three-party"}
    assert elapsed < 20, elapsed  # ~1.5 s on an idle machine (28 s for the report before)
    again = validate_study(loaded)  # validating twice changes nothing
    pd.testing.assert_frame_equal(again, loaded)


def test_inconsistent_games_are_still_reported(tmp_path: Path) -> None:
    rows = [
        ("g1", "i1", "a", "ai", "true"),
        ("g1", "i2", "h", "human", "false"),  # a game with two interrogators
        ("g2", "i3", "a", "ai", "true"),
        ("g2", "i3", "h", "human", "true"),  # both judged human
        ("g3", "i4", "a", "ai", "true"),
        ("g3", "i4", "b", "ai", "false"),  # cannot infer the format
    ]
    path = tmp_path / "bad.csv"
    path.write_text(
        "game,interrogator,witness,witness_type,judged_human\n"
        + "\n".join(",".join(r) for r in rows)
        + "\n"
    )
    with pytest.raises(ValueError) as err:
        load_study(path)
    text = str(err.value)
    assert "line 2, column 'interrogator': differs between the rows of game 'g1'" in text
    assert "must have exactly one witness judged human, has 2" in text
    assert "game 'g3' has 2 rows; cannot infer its format" in text


def test_only_not_enough_data_skips_a_section(tmp_path: Path, monkeypatch) -> None:
    study = simulate_study({"a": 0.6}, 40, 2, seed=1)

    def broken(ctx, section) -> None:
        raise KeyError("a bug")

    def thin(ctx, section) -> None:
        raise SectionSkipped("too few games")

    sections = (("Thin", "thin", thin), ("Broken", "broken", broken))
    monkeypatch.setattr(human_report, "SECTIONS", sections)
    with pytest.raises(KeyError, match="a bug"):
        human_report.build_study_report(study, tmp_path / "r")
    monkeypatch.setattr(human_report, "SECTIONS", sections[:1])
    html = human_report.build_study_report(study, tmp_path / "r").read_text()
    assert "Skipped: too few games." in html


def test_glmm_at_arena_size_recovers_the_truth() -> None:
    """50,000 interrogators with a random intercept (SD 0.8) and one binary fixed effect:
    the sparse/diagonal path fits it, and the estimates land near the values simulated."""
    from turinglab.analysis.glmm import fit_logistic_glmm

    rng = np.random.default_rng(11)
    people, per_person = 50_000, 4
    person = np.repeat(np.arange(people), per_person)
    x = rng.integers(0, 2, size=person.size).astype(float)
    eta = -0.4 + 0.9 * x + 0.8 * rng.standard_normal(people)[person]
    y = (rng.random(person.size) < 1 / (1 + np.exp(-eta))).astype(float)
    design = np.column_stack([np.ones_like(x), x])
    started = time.process_time()  # CPU seconds: the cost, not the neighbours' load
    fit = fit_logistic_glmm(
        design, y, {"interrogator": person.astype(str)}, coef_names=["(Intercept)", "x"]
    )
    assert time.process_time() - started < 120
    assert fit.estimates[0] == pytest.approx(-0.4, abs=0.06)
    assert fit.estimates[1] == pytest.approx(0.9, abs=0.06)
    assert fit.random_sd["interrogator"] == pytest.approx(0.8, abs=0.15)


def test_glmm_refuses_a_dense_block_it_cannot_hold() -> None:
    from turinglab.analysis.glmm import MAX_DENSE_LEVELS, GlmmTooLarge, fit_logistic_glmm

    n = 2 * (MAX_DENSE_LEVELS + 1)
    rng = np.random.default_rng(0)
    groups = {
        "a": (np.arange(n) % (MAX_DENSE_LEVELS + 2)).astype(str),
        "b": (np.arange(n) % (MAX_DENSE_LEVELS + 1)).astype(str),
    }
    with pytest.raises(GlmmTooLarge, match="allows at most"):
        fit_logistic_glmm(np.ones((n, 1)), rng.integers(0, 2, n).astype(float), groups)
