"""What every section of the study report shares: the data, the page, cached analyses, and
`SectionSkipped` — the documented "not enough data" case, the only one a section may skip for."""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
from matplotlib.figure import Figure

from turinglab.analysis.errors import NotEnoughData
from turinglab.report import figures
from turinglab.report.html import Page, Section

REPORT_FILE = "report.html"
LEVEL = 0.95
# codebook name → the study-table column holding people's codes for it (rows.txt §2)
CODE_COLUMNS = {"strategies": "strategies", "reasons": "reason_codes"}
# A tagger run: {codebook name: {game id: codes}} or {codebook name: [TagResult, ...]}.
TaggerRun = Mapping[str, Mapping[str, Collection[str]] | Sequence[Any]]


STAND_IN = "stand-in"  # the witness label of a human-side witness played by an agent


UNDEFINED = "undefined"  # a value the data cannot give (an SD of one game, no reference rate)


def shown(x: float | None, spec: str) -> str:
    """`x` formatted with `spec`, or "undefined" where it is not a number (never "nan")."""
    if x is None or not math.isfinite(x):
        return UNDEFINED
    return format(x, spec)


def mark_stand_ins(study: pd.DataFrame) -> pd.DataFrame:
    """The study with each stand-in's witness label "stand-in" instead of "human", so that
    every table, figure and browser entry that names a witness says what it was. A stand-in is
    a human-side row whose `witness_kind` (written by `turinglab export --format study`) says
    so; it stays a human witness (`witness_type`) for the analysis."""
    if "witness_kind" not in study.columns:
        return study
    stand_in = (study["witness_type"] == "human") & (study["witness_kind"] == STAND_IN)
    if not stand_in.any():
        return study
    marked = study.copy()
    marked.loc[stand_in, "witness"] = STAND_IN
    return marked


def stand_in_note(study: pd.DataFrame) -> str | None:
    """One sentence on who played which side when it was not only people, or None."""
    parts = []
    if "witness_kind" in study.columns:
        humans = study[study["witness_type"] == "human"]
        n = int((humans["witness_kind"] == STAND_IN).sum())
        if n:
            parts.append(
                f"{n} of {len(humans)} human-witness rows are stand-ins: agents replaying lines "
                "people wrote, not people"
            )
    if "interrogator_kind" in study.columns:
        kinds = study.drop_duplicates("game")["interrogator_kind"]
        n = int(kinds.isin(["agent", STAND_IN]).sum())
        if n:
            parts.append(f"{n} of {len(kinds)} games were judged by an AI interrogator")
    if not parts:
        return None
    return "Simulated study: " + "; ".join(parts) + "."


class SectionSkipped(NotEnoughData):
    """The data cannot support a section (a column is absent or empty); the message says why."""


@dataclass
class StudyContext:
    study: pd.DataFrame  # validated, before exclusions
    df: pd.DataFrame  # after exclusions: what every analysis uses
    exclusions: Any
    out_dir: Path
    page: Page
    alpha: float
    seed: int
    stt: pd.DataFrame | None
    tagger: TaggerRun | None
    figure_files: dict[str, dict[str, Path]] = field(default_factory=dict)
    _regressions: Any = None
    _win_rates: list[Any] | None = None

    def win_rates(self) -> list[Any]:
        """winrates.win_rates on the kept rows, computed once (the bootstrap is the slow part)."""
        if self._win_rates is None:
            from turinglab.human.winrates import win_rates

            self._win_rates = win_rates(self.df, seed=self.seed)
        return self._win_rates

    def regressions(self) -> Any:
        """all_regressions on the kept rows, fitted once (the GLMM is the slow part)."""
        if self._regressions is None:
            from turinglab.human.regressions import all_regressions

            self._regressions = all_regressions(self.df)
        return self._regressions

    @property
    def human_label(self) -> str:
        """What the human-side witnesses are: people, or stand-ins (agents replaying people's
        lines) — never to be mistaken for people (see `mark_stand_ins`)."""
        humans = self.df[self.df["witness_type"] == "human"]
        stand_ins = int((humans["witness"] == STAND_IN).sum()) if len(humans) else 0
        if stand_ins == 0:
            return "human witnesses"
        if stand_ins == len(humans):
            return "stand-in human witnesses"
        return "human witnesses (some stand-ins)"

    def figure(self, section: Section, fig: Figure, name: str, caption: str) -> None:
        name = re.sub(r"[^A-Za-z0-9_.-]+", "-", name)
        files = figures.save_figure(fig, self.out_dir, name)
        self.figure_files[name] = files
        section.figure(figures.figure_svg(fig, id_prefix=name), caption, files)

    def need(self, column: str) -> pd.Series:
        """The non-missing values of a column, or SectionSkipped naming it."""
        if column not in self.df.columns or self.df[column].isna().all():
            raise SectionSkipped(f"the study has no values in column {column!r}")
        return self.df[column]


def exact_ci(k: int, n: int) -> tuple[float, float]:
    from turinglab.analysis import stats

    if n == 0:
        return (math.nan, math.nan)
    low, high = stats.binomial_ci(k, n, level=LEVEL, method="clopper-pearson")
    return (float(low), float(high))


def game_correctness(df: pd.DataFrame) -> pd.Series:
    """Per game: was the interrogator right? (Three-party: right iff the AI was not picked.)"""
    right = df["judged_human"] == (df["witness_type"] == "human")
    # Both rows of a three-party game agree, so any row of a game gives its correctness.
    return right.groupby(df["game"], sort=False).first()
