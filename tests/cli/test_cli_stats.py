"""`turinglab stats` sub-commands through typer's CliRunner: text, --json and bad input."""

from __future__ import annotations

import json

import pytest
from scipy.stats import binomtest
from statsmodels.stats.multitest import multipletests
from typer.testing import CliRunner

from turinglab.cli.stats import stats_app

runner = CliRunner()


def test_binomial_text_output() -> None:
    result = runner.invoke(stats_app, ["binomial", "--successes", "13", "--trials", "16"])
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "p two-sided  0.0213" in out  # 2·697/65536
    assert "blaker           [0.5656, 0.9469]" in out  # contingencytables' Ligarden example
    assert "clopper-pearson  [0.5435, 0.9595]" in out
    assert "Compatible p" in out


def test_binomial_json_output() -> None:
    result = runner.invoke(
        stats_app,
        ["binomial", "-k", "7", "-n", "40", "--chance", "0.3", "--alpha", "0.01", "--json"],
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["p_two_sided"] == pytest.approx(binomtest(7, 40, 0.3).pvalue)
    assert data["p_greater"] == pytest.approx(binomtest(7, 40, 0.3, alternative="greater").pvalue)
    assert set(data["ci"]) == {"clopper-pearson", "wilson", "jeffreys", "blaker", "sterne"}
    expected_cp = binomtest(7, 40).proportion_ci(confidence_level=0.99)
    assert data["ci"]["clopper-pearson"] == pytest.approx([expected_cp.low, expected_cp.high])
    assert data["compatible_p"] == [
        data["compatible_p_intervals"][0][0],
        data["compatible_p_intervals"][-1][1],
    ]
    assert isinstance(data["wald_z"], float)


def test_binomial_json_reports_null_wald_at_the_boundary() -> None:
    result = runner.invoke(stats_app, ["binomial", "-k", "0", "-n", "10", "--json"])
    data = json.loads(result.stdout)
    assert data["wald_z"] is None and data["wald_p_two_sided"] is None
    assert "undefined" in data["wald_note"]
    text = runner.invoke(stats_app, ["binomial", "-k", "10", "-n", "10"]).stdout
    assert "Wald z undefined" in text


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-k", "17", "-n", "16"], "cannot exceed"),
        (["-k", "-3", "-n", "16"], "negative"),
        (["-k", "0", "-n", "0"], "at least 1"),
        (["-k", "3", "-n", "16", "--chance", "1.5"], "chance"),
        (["-k", "3", "-n", "16", "--alpha", "0"], "alpha"),
    ],
)
def test_binomial_bad_input(args: list[str], message: str) -> None:
    result = runner.invoke(stats_app, ["binomial", *args])
    assert result.exit_code != 0
    assert "error:" in result.stderr and message in result.stderr


def test_adjust_text_and_json() -> None:
    pvalues = ["0.01", "0.04", "0.03"]
    text = runner.invoke(stats_app, ["adjust", "--method", "holm", *pvalues])
    assert text.exit_code == 0 and "0.0600" in text.stdout
    result = runner.invoke(stats_app, ["adjust", "--method", "fdr_bh", "--json", *pvalues])
    data = json.loads(result.stdout)
    assert data["adjusted"] == pytest.approx(
        list(multipletests([0.01, 0.04, 0.03], method="fdr_bh")[1])
    )
    reverse = runner.invoke(
        stats_app, ["adjust", "--method", "reverse-bonferroni", "--json", "0.3", "0.9"]
    )
    assert json.loads(reverse.stdout)["adjusted"] == pytest.approx([0.15, 0.45])


def test_adjust_bad_input() -> None:
    result = runner.invoke(stats_app, ["adjust", "--method", "holm", "0.5", "1.5"])
    assert result.exit_code != 0 and "[0, 1]" in result.stderr
    assert runner.invoke(stats_app, ["adjust", "--method", "nope", "0.5"]).exit_code != 0


def test_humanness_three_party() -> None:
    args = [
        "humanness",
        "--design",
        "three-party",
        "--machine-judged-human",
        "73",
        "--games",
        "100",
    ]
    text = runner.invoke(stats_app, args)
    assert text.exit_code == 0 and "Degree of humanness (rate ÷ 0.5): 1.460" in text.stdout
    data = json.loads(runner.invoke(stats_app, [*args, "--json"]).stdout)
    assert data["design"] == "three-party" and data["humanness"] == pytest.approx(1.46)
    assert [level["alpha"] for level in data["levels"]] == [0.05, 0.01]
    assert data["levels"][0]["absolute_criterion_compatible"] is False


def test_humanness_two_party() -> None:
    args = [
        "humanness",
        "--design",
        "two-party",
        "--machine-judged-human",
        "54",
        "--machine-games",
        "100",
        "--human-judged-human",
        "67",
        "--human-games",
        "100",
    ]
    text = runner.invoke(stats_app, args)
    assert text.exit_code == 0 and "Koopman score interval" in text.stdout
    assert "machine range ÷ observed human rate" in text.stdout
    data = json.loads(runner.invoke(stats_app, [*args, "--json"]).stdout)
    assert data["humanness"] == pytest.approx(54 / 67)
    assert len(data["levels"][0]["humanness_koopman"]) == 2


def test_humanness_missing_or_bad_options() -> None:
    result = runner.invoke(
        stats_app, ["humanness", "--design", "two-party", "--machine-judged-human", "5"]
    )
    assert result.exit_code != 0 and "--machine-games" in result.stderr
    result = runner.invoke(
        stats_app, ["humanness", "--design", "three-party", "--machine-judged-human", "5"]
    )
    assert result.exit_code != 0 and "--games" in result.stderr
    result = runner.invoke(
        stats_app,
        ["humanness", "--design", "three-party", "--machine-judged-human", "11", "--games", "10"],
    )
    assert result.exit_code != 0 and "cannot exceed" in result.stderr
