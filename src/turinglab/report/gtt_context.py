"""What every section of the GTT report reads: the report's options and the run being reported.

Its own module so that the section modules (gtt_models, gtt_fd_section) and the report that
calls them import it without importing each other.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from matplotlib.figure import Figure

from turinglab.analysis.gtt import MissingPolicy, OpeningPolicy, ScoreEstimator, TrialPolicy
from turinglab.analysis.gtt_scores import ScoreReport
from turinglab.report import figures
from turinglab.report.html import Page, Section
from turinglab.store.database import RunInfo, Store


@dataclass(frozen=True)
class ReportOptions:
    missing: MissingPolicy = "wrong"
    opening: OpeningPolicy = "count"
    estimator: ScoreEstimator = "paper"  # of the Turing scores (gtt module note)
    epsilon: float = 0.005  # the paper's threshold for the relation graphs
    level: float = 0.95
    n_boot: int = 2000
    seed: int = 0
    # External rankings: {source name: a CSV path or a parsed table (rank_agreement)}.
    leaderboards: Mapping[str, Any] = field(default_factory=dict)
    transcripts: bool = True
    max_transcripts: int | None = None  # cap on embedded transcripts (page size)
    # Transcripts gzip-compressed in the page, inflated by the browser on demand (False: plain
    # JSON, several times bigger).
    compress_transcripts: bool = True

    @property
    def policy(self) -> TrialPolicy:
        return TrialPolicy(self.missing, self.opening)


@dataclass
class ReportContext:
    store: Store
    run: RunInfo
    rows: list[dict[str, Any]]
    options: ReportOptions
    out_dir: Path
    page: Page
    figure_files: dict[str, dict[str, Path]] = field(default_factory=dict)
    scores: dict[str, ScoreReport] = field(default_factory=dict)  # per variant, for Table 1

    def rows_of(self, *variants: str) -> list[dict[str, Any]]:
        return [r for r in self.rows if r.get("variant", "gtt") in variants]

    def agents_of(self, rows: Iterable[Mapping[str, Any]]) -> list[str]:
        """Agents in these rows, in the config's universe order first."""
        seen = {r[k] for r in rows for k in ("actor", "distinguisher", "target")}
        universe = self.run.config.get("experiment", {}).get("universe") or []
        ordered = [a for a in universe if a in seen]
        return ordered + sorted(seen - set(ordered))

    def figure(self, section: Section, fig: Figure, name: str, caption: str) -> None:
        files = figures.save_figure(fig, self.out_dir, name)
        self.figure_files[name] = files
        section.figure(figures.figure_svg(fig, id_prefix=name), caption, files)
