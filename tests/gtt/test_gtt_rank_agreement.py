"""Leaderboard loading and rank agreement against scipy and hand-counted cases."""

from __future__ import annotations

import io
import math

import pandas as pd
import pytest
from scipy.stats import kendalltau, spearmanr

from turinglab.analysis.rank_agreement import (
    LeaderboardError,
    load_leaderboard,
    parse_leaderboard,
    rank_agreement,
    rank_table,
)

OURS = {"gpt": 0.80, "claude": 0.75, "llama": 0.60, "gemma": 0.40, "eliza": 0.10}


def test_load_with_mapping_column(tmp_path) -> None:
    path = tmp_path / "arena.csv"
    path.write_text(
        "Model,Score,our_name\n"
        "GPT-4o,1280,gpt\n"
        "Claude 3.5,1270,claude\n"
        "Llama-3-70B,1200,llama\n"
        "gemma,1100,\n"  # blank mapping keeps the leaderboard name
        "mistral,1150,\n"
    )
    board = load_leaderboard(path, mapping_column="our_name")
    assert board["agent"].tolist() == ["gpt", "claude", "llama", "gemma", "mistral"]
    assert board["score"].tolist() == [1280, 1270, 1200, 1100, 1150]
    result = rank_agreement(OURS, board)
    assert (
        result.n == 4 and result.only_ours == ["eliza"] and result.only_leaderboard == ["mistral"]
    )
    # Same order on both sides: τ = ρ = 1.
    assert result.kendall_tau == pytest.approx(1.0) and result.spearman_rho == pytest.approx(1.0)
    assert result.table["agent"].tolist() == ["gpt", "claude", "llama", "gemma"]
    assert result.table["leaderboard_rank"].tolist() == [1.0, 2.0, 3.0, 4.0]


def test_against_scipy_on_raw_scores() -> None:
    board = parse_leaderboard(
        pd.DataFrame({"agent": list(OURS), "score": [3, 5, 1, 2, 2]})  # gpt … eliza
    )
    result = rank_agreement(OURS, board)
    names = sorted(OURS)
    ours = [OURS[a] for a in names]
    theirs = [dict(zip(board["agent"], board["score"], strict=True))[a] for a in names]
    tau = kendalltau(ours, theirs)  # rank-invariant, so raw scores must give the same answer
    rho = spearmanr(ours, theirs)
    assert result.kendall_tau == pytest.approx(tau.statistic)
    assert result.kendall_p == pytest.approx(tau.pvalue)
    assert result.spearman_rho == pytest.approx(rho.statistic)
    assert result.spearman_p == pytest.approx(rho.pvalue)
    # Hand count: concordant 6 (gpt and claude above llama, gemma, eliza), discordant 3
    # (gpt–claude, llama–gemma, llama–eliza), gemma–eliza tied on the leaderboard only:
    # τ_b = (6 − 3) / √(10 · 9).
    assert result.kendall_tau == pytest.approx(3 / math.sqrt(90))


def test_lower_is_better_reverses_the_leaderboard() -> None:
    board = pd.DataFrame({"model": ["gpt", "claude", "llama"], "elo_error": [1.0, 2.0, 3.0]})
    parsed = parse_leaderboard(board, score_column="elo_error")
    assert rank_agreement(OURS, parsed, higher_is_better=False).kendall_tau == pytest.approx(1)
    assert rank_agreement(OURS, parsed).kendall_tau == pytest.approx(-1)


def test_rank_table_for_heatmap() -> None:
    table = rank_table(
        {"T": {"a": 0.9, "b": 0.5, "c": math.nan}, "arena": {"a": 2.0, "b": 1.0, "c": 3.0}},
        lower_is_better=frozenset({"arena"}),
    )
    assert list(table.columns) == ["T", "arena"] and list(table.index) == ["a", "b", "c"]
    assert table.loc["a", "T"] == 1 and table.loc["b", "T"] == 2 and math.isnan(table.loc["c", "T"])
    assert table["arena"].tolist() == [2.0, 1.0, 3.0]


@pytest.mark.parametrize(
    ("text", "kwargs", "message"),
    [
        ("agent,elo\ngpt,1\n", {}, "no score column"),
        ("who,score\ngpt,1\n", {}, "no name column"),
        ("agent,score\ngpt,high\nclaude,2\n", {}, "non-numeric"),
        ("agent,score\ngpt,1\ngpt,2\n", {}, "more than once"),
        ("agent,score\n,1\n", {}, "empty model name"),
        ("agent,score\n", {}, "no rows"),
        ("agent,score\ngpt,1\n", {"mapping_column": "alias"}, "mapping column 'alias'"),
    ],
)
def test_leaderboard_validation(text, kwargs, message) -> None:
    with pytest.raises(LeaderboardError, match=message):
        load_leaderboard(io.StringIO(text), **kwargs)


def test_missing_file_and_too_few_common_agents(tmp_path) -> None:
    with pytest.raises(LeaderboardError, match="not found"):
        load_leaderboard(tmp_path / "nope.csv")
    board = load_leaderboard(io.StringIO("agent,score\ngpt,1\nclaude,2\nunknown,3\n"))
    with pytest.raises(ValueError, match="at least 3"):
        rank_agreement(OURS, board)
