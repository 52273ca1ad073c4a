"""Agreement between Turing-score rankings and external leaderboards (SPEC §1, rank heatmap).

A leaderboard is a CSV with a name column ("agent", "model" or "name", or one you name) and a
score column ("score", or one you name). An optional mapping column gives, per line, the agent
name used in our runs when the leaderboard calls the model something else; blank cells keep the
leaderboard name. Rank 1 is the best; `higher_is_better=False` is for error-like scores.
Kendall's τ (τ-b, ties allowed) and Spearman's ρ with their p-values come from scipy.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import pandas as pd
from scipy.stats import kendalltau, spearmanr

NAME_COLUMNS = ("agent", "model", "name")


class LeaderboardError(ValueError):
    """A leaderboard file or table that cannot be used, with the reason."""


def _find_column(
    frame: pd.DataFrame, wanted: str | None, defaults: tuple[str, ...], role: str
) -> Hashable:
    lowered = {str(c).strip().lower(): c for c in frame.columns}
    if wanted is not None:
        if wanted in frame.columns:
            return wanted
        if wanted.lower() in lowered:
            return lowered[wanted.lower()]
        raise LeaderboardError(
            f"{role} column {wanted!r} not found; columns: {list(frame.columns)}"
        )
    for name in defaults:
        if name in lowered:
            return lowered[name]
    raise LeaderboardError(
        f"no {role} column: expected one of {list(defaults)}, columns: {list(frame.columns)}"
    )


def parse_leaderboard(
    frame: pd.DataFrame,
    *,
    name_column: str | None = None,
    score_column: str | None = None,
    mapping_column: str | None = None,
) -> pd.DataFrame:
    """Validate a leaderboard table; returns columns `agent` (our name) and `score`."""
    if frame.empty:
        raise LeaderboardError("the leaderboard has no rows")
    name_col = _find_column(frame, name_column, NAME_COLUMNS, "name")
    score_col = _find_column(frame, score_column, ("score",), "score")
    names = frame[name_col].astype("string").str.strip()
    if mapping_column is not None:
        mapped = frame[_find_column(frame, mapping_column, (), "mapping")].astype("string")
        mapped = mapped.str.strip()
        names = mapped.where(mapped.notna() & (mapped != ""), names)
    if names.isna().any() or (names == "").any():
        lines = [int(i) + 2 for i in names.index[names.isna() | (names == "")]]
        raise LeaderboardError(f"empty model name on line(s) {lines} of the leaderboard")
    scores = pd.to_numeric(frame[score_col], errors="coerce")
    bad = scores.isna()
    if bad.any():
        shown = [f"{names[i]}={frame[score_col][i]!r}" for i in frame.index[bad]]
        raise LeaderboardError(f"non-numeric or missing score(s) in {score_col!r}: {shown}")
    duplicated = sorted(set(names[names.duplicated()]))
    if duplicated:
        raise LeaderboardError(f"agent(s) listed more than once: {duplicated}")
    return pd.DataFrame({"agent": names.astype(str).to_list(), "score": scores.astype(float)})


def load_leaderboard(
    source: str | Path | IO[str],
    *,
    name_column: str | None = None,
    score_column: str | None = None,
    mapping_column: str | None = None,
) -> pd.DataFrame:
    """Read a leaderboard CSV (a path or an open text file) and validate it."""
    if isinstance(source, str | Path) and not Path(source).is_file():
        raise LeaderboardError(f"leaderboard file not found: {source}")
    try:
        frame = pd.read_csv(source)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise LeaderboardError(f"cannot read leaderboard {source}: {exc}") from exc
    return parse_leaderboard(
        frame, name_column=name_column, score_column=score_column, mapping_column=mapping_column
    )


def ranks(scores: Mapping[str, float], *, higher_is_better: bool = True) -> pd.Series:
    """Rank 1 = best; ties share the mean rank; NaN scores are left out."""
    series = pd.Series(dict(scores), dtype=float).dropna()
    return series.rank(ascending=not higher_is_better, method="average")


@dataclass(frozen=True)
class RankAgreement:
    n: int  # agents on both sides
    kendall_tau: float
    kendall_p: float
    spearman_rho: float
    spearman_p: float
    table: pd.DataFrame  # agent, our_score, our_rank, leaderboard_score, leaderboard_rank
    only_ours: list[str]  # agents without a leaderboard entry
    only_leaderboard: list[str]


def rank_agreement(
    our_scores: Mapping[str, float],
    leaderboard: pd.DataFrame,
    *,
    higher_is_better: bool = True,
) -> RankAgreement:
    """Kendall τ and Spearman ρ between our ranking and the leaderboard's, on common agents.

    Ranks are recomputed over the common agents only, so both sides rank the same set.
    """
    ours = {a: s for a, s in our_scores.items() if not math.isnan(s)}
    theirs = dict(zip(leaderboard["agent"], leaderboard["score"], strict=True))
    common = sorted(ours.keys() & theirs.keys())
    if len(common) < 3:
        raise LeaderboardError(
            f"need at least 3 agents both scored and on the leaderboard, found {common}"
        )
    our_rank = ranks({a: ours[a] for a in common})
    their_rank = ranks({a: theirs[a] for a in common}, higher_is_better=higher_is_better)
    table = pd.DataFrame(
        {
            "agent": common,
            "our_score": [ours[a] for a in common],
            "our_rank": [our_rank[a] for a in common],
            "leaderboard_score": [theirs[a] for a in common],
            "leaderboard_rank": [their_rank[a] for a in common],
        }
    ).sort_values(["our_rank", "agent"], ignore_index=True)
    tau = kendalltau(table["our_rank"], table["leaderboard_rank"])
    rho = spearmanr(table["our_rank"], table["leaderboard_rank"])
    return RankAgreement(
        n=len(common),
        kendall_tau=float(tau.statistic),
        kendall_p=float(tau.pvalue),
        spearman_rho=float(rho.statistic),
        spearman_p=float(rho.pvalue),
        table=table,
        only_ours=sorted(ours.keys() - theirs.keys()),
        only_leaderboard=sorted(theirs.keys() - ours.keys()),
    )


def rank_table(
    rankings: Mapping[str, Mapping[str, float]],
    *,
    lower_is_better: frozenset[str] = frozenset(),
) -> pd.DataFrame:
    """Rank heatmap input: index agents, one column per source (e.g. "T", "F", "LMArena"),
    values the rank within that source (1 = best; NaN where the source lacks the agent)."""
    columns = {
        source: ranks(scores, higher_is_better=source not in lower_is_better)
        for source, scores in rankings.items()
    }
    table = pd.DataFrame(columns)
    table.index.name = "agent"
    return table.sort_index()
