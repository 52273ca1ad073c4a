"""The HTML report of a human-judged Turing-test study: `build_study_report`.

Sections live in human_rates / human_models / human_codes; each calls the analysis modules
(turinglab.human.*, the shared statistics and tagging modules), adds tables and figures to a
`Page`, and writes every figure as PNG + SVG next to the HTML. A section skips (a one-line
note) only when an analysis says there is not enough data (`NotEnoughData`); any other error is
a bug and fails the report.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from turinglab.analysis.errors import NotEnoughData
from turinglab.report.html import Page, Section
from turinglab.report.human_codes import (
    audit_section,
    codes_section,
    criteria_section,
    strong_section,
)
from turinglab.report.human_context import (
    REPORT_FILE,
    StudyContext,
    TaggerRun,
    game_correctness,
    mark_stand_ins,
    stand_in_note,
)
from turinglab.report.human_games import browser_section
from turinglab.report.human_models import (
    confidence_section,
    regressions_section,
    survey_section,
    trial_order_section,
)
from turinglab.report.human_rates import chance_tests_section, summary_section, win_rates_section

__all__ = ["REPORT_FILE", "SECTIONS", "build_study_report", "game_correctness"]


SECTIONS: tuple[tuple[str, str, Callable[[StudyContext, Section], None]], ...] = (
    ("Study summary and exclusions", "summary", summary_section),
    ("Win rates", "win-rates", win_rates_section),
    ("Tests against chance", "chance", chance_tests_section),
    ("Witnesses vs ELIZA and the mixed model", "regressions", regressions_section),
    ("Trial order", "trial-order", trial_order_section),
    ("Confidence and calibration", "confidence", confidence_section),
    ("Strategies and reasons", "codes", codes_section),
    ("Strong Turing Test", "stt", strong_section),
    ("Pass criteria", "criteria", criteria_section),
    ("Design audit and power", "audit", audit_section),
    ("Exploratory survey regressions", "survey", survey_section),
    ("Game browser", "games", browser_section),
)


Progress = Callable[[str], None]


def _run_section(
    ctx: StudyContext, title: str, anchor: str, build: Callable[..., None], progress: Progress
) -> None:
    section = ctx.page.section(title, anchor)
    started = time.perf_counter()
    try:
        build(ctx, section)
    except NotEnoughData as err:  # the documented case; anything else is a bug and propagates
        section.note(f"Skipped: {err}.")
    progress(f"  {title}: {time.perf_counter() - started:.1f} s")


def stderr_progress(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def build_study_report(
    df: pd.DataFrame,
    out_dir: Path | str,
    *,
    title: str | None = None,
    stt: pd.DataFrame | None = None,
    alpha: float = 0.05,
    seed: int = 0,
    tagger: TaggerRun | None = None,
    validated: bool = False,
    progress: Progress | None = None,
) -> Path:
    """Write `out_dir`/report.html (self-contained) and every figure as PNG + SVG beside it;
    return the HTML path. `df` is a study table (rows.txt §2), validated here (ValueError if
    bad) unless `validated` says it comes from `load_study`/`validate_study` already; `stt` an
    optional STT preference table; `tagger` optional codes from a tagger run,
    {"strategies" | "reasons": {game: codes} or [TagResult]}. `progress` gets one line per
    step with its time (long studies take a while)."""
    from turinglab.human.exclusions import apply_exclusions
    from turinglab.human.schema import validate_study

    say = progress or (lambda _line: None)
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie in (0, 1), not {alpha}")
    started = time.perf_counter()
    study = df if validated else validate_study(df)
    if study.empty:
        raise ValueError("the study has no rows (a header only?): nothing to report")
    study = mark_stand_ins(study)
    kept, exclusions = apply_exclusions(study)
    if kept.empty:
        raise ValueError(
            f"every game was excluded ({exclusions.games_before} games): nothing to report"
        )
    say(f"  validation and exclusions: {time.perf_counter() - started:.1f} s")
    out = Path(out_dir)
    studies = ", ".join(sorted(kept["study"].unique()))
    page = Page(
        title or f"Turing-test study report — {studies}",
        metadata={
            "studies": studies,
            **({"simulated": note} if (note := stand_in_note(study)) else {}),
            "games": kept["game"].nunique(),
            "interrogators": kept["interrogator"].nunique(),
            "α": alpha,
            "seed": seed,
        },
    )
    ctx = StudyContext(study, kept, exclusions, out, page, alpha, seed, stt, tagger)
    for title_, anchor, build in SECTIONS:
        _run_section(ctx, title_, anchor, build, say)
    return page.write(out / REPORT_FILE)
