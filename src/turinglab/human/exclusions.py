"""Exclusion rules of SPEC §2, applied per game and reported with every analysis.

Rules (a game is dropped whole — both rows of a three-party game go together):
  prior_participation  — the interrogator took part in a similar experiment before;
  few_messages         — the interrogator sent fewer than `min_messages` messages to a witness
                         (three-party: to either witness);
  not_finished         — the game gave no usable verdict (a person left it, an AI witness
                         failed): rows with an `excluded_reason`, set aside by validation
                         (human/schema.py) and listed with their reasons.
Unknown values (NaN) never exclude; how many games had them is reported, so a reader can see
when a rule could not be checked.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import pandas as pd


@dataclass(frozen=True)
class RuleCount:
    rule: str
    description: str
    games: int  # games failing this rule (a game may fail several)
    rows: int
    games_unknown: int  # games where the rule could not be checked (missing values)


@dataclass(frozen=True)
class ExclusionReport:
    games_before: int
    rows_before: int
    games_after: int
    rows_after: int
    rules: tuple[RuleCount, ...]

    @property
    def games_excluded(self) -> int:
        return self.games_before - self.games_after

    @property
    def rows_excluded(self) -> int:
        return self.rows_before - self.rows_after

    def as_dict(self) -> dict[str, object]:
        return {
            "games_before": self.games_before,
            "rows_before": self.rows_before,
            "games_after": self.games_after,
            "rows_after": self.rows_after,
            "rules": [asdict(r) for r in self.rules],
        }

    def summary(self) -> str:
        parts = [
            f"Exclusions: {self.games_excluded} of {self.games_before} games "
            f"({self.rows_excluded} of {self.rows_before} rows) removed; "
            f"{self.games_after} games kept."
        ]
        for r in self.rules:
            note = f", {r.games_unknown} games unchecked (missing)" if r.games_unknown else ""
            parts.append(f"  {r.rule}: {r.games} games / {r.rows} rows — {r.description}{note}")
        return "\n".join(parts)


def apply_exclusions(
    df: pd.DataFrame, *, min_messages: int = 2, exclude_prior: bool = True
) -> tuple[pd.DataFrame, ExclusionReport]:
    """Drop excluded games; return the kept rows and the per-rule counts."""
    games = df["game"]
    prior = df["prior_participation"].astype("boolean")
    prior_bad = prior.fillna(False).astype(bool).groupby(games).transform("any")
    prior_unknown = prior.isna().groupby(games).transform("any") & ~prior_bad

    messages = df["interrogator_messages"].astype(float)
    short = (messages < min_messages).groupby(games).transform("any")
    short_unknown = messages.isna().groupby(games).transform("any") & ~short

    rules = [
        _count(
            "few_messages",
            f"interrogator sent fewer than {min_messages} messages to a witness",
            short,
            short_unknown,
            games,
        )
    ]
    drop = short
    if exclude_prior:
        rules.insert(
            0,
            _count(
                "prior_participation",
                "interrogator took part in a similar experiment before",
                prior_bad,
                prior_unknown,
                games,
            ),
        )
        drop = drop | prior_bad
    kept = df.loc[~drop].reset_index(drop=True)
    unfinished: dict[str, str] = dict(df.attrs.get("excluded_games") or {})
    if unfinished:
        rules.append(_not_finished(unfinished))
    report = ExclusionReport(
        games_before=int(games.nunique()) + len(unfinished),
        rows_before=len(df),
        games_after=int(kept["game"].nunique()),
        rows_after=len(kept),
        rules=tuple(rules),
    )
    return kept, report


def _not_finished(reasons: dict[str, str]) -> RuleCount:
    """Games set aside before analysis, described by how many gave each reason."""
    counts: dict[str, int] = {}
    for reason in reasons.values():
        counts[reason] = counts.get(reason, 0) + 1
    listed = "; ".join(f"{n}× {reason}" for reason, n in sorted(counts.items()))
    return RuleCount(
        rule="not_finished",
        description=f"no usable verdict: {listed}",
        games=len(reasons),
        rows=0,
        games_unknown=0,
    )


def _count(
    rule: str, description: str, bad: pd.Series, unknown: pd.Series, games: pd.Series
) -> RuleCount:
    return RuleCount(
        rule=rule,
        description=description,
        games=int(games[bad].nunique()),
        rows=int(bad.sum()),
        games_unknown=int(games[unknown].nunique()),
    )
