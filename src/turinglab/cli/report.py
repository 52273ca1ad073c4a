"""`turinglab report`: a run's GTT tables or HTML report, a human-style run's study report,
the report of a study file of human verdicts, or of an ITT study folder."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from turinglab.cli.errors import fail
from turinglab.cli.options import StoreOption, check_out_folder
from turinglab.cli.printing import console, print_game_outcomes
from turinglab.cli.stores import find_run, open_store

if TYPE_CHECKING:
    import pandas as pd

    from turinglab.store.database import RunInfo, Store

STUDY_SUFFIXES = (".csv", ".jsonl", ".ndjson", ".txt")


def report(
    run_ref: Annotated[
        str,
        typer.Argument(
            metavar="RUN|STUDY",
            help="a run id, id prefix or name — or a study file (.csv/.jsonl) of human verdicts",
        ),
    ],
    store: StoreOption = None,
    out: Annotated[
        Path | None, typer.Option(help="write the HTML report and figures (PNG, SVG) here")
    ] = None,
    missing: Annotated[
        str,
        typer.Option(help="how trials without a verdict enter p̂: wrong | exclude | as-0 | as-1"),
    ] = "wrong",
    epsilon: Annotated[float, typer.Option(help="threshold ε of the comparator A ≥ε B")] = 0.005,
    estimator: Annotated[
        str,
        typer.Option(
            help="Turing scores: paper (Proposition 2: D(A) = mean over B ≠ A of p̂(B, A), each "
            "cell's own trials) | pooled (ŝ_A pooled over every cell, self-pair included)"
        ),
    ] = "paper",
    as_json: Annotated[
        bool, typer.Option("--json", help="GTT run: print the pair table and scores as JSON")
    ] = False,
    leaderboard: Annotated[
        list[str] | None,
        typer.Option(help="NAME=CSV external leaderboard for rank agreement (repeatable)"),
    ] = None,
    stt: Annotated[
        Path | None, typer.Option(help="Strong Turing Test preferences to add to a study report")
    ] = None,
    tags: Annotated[
        list[str] | None,
        typer.Option(
            help="CODEBOOK=CSV codes from `turinglab tag games --out` for a study report "
            "(strategies or reasons; repeatable)"
        ),
    ] = None,
    max_transcripts: Annotated[
        int | None, typer.Option(help="embed at most this many transcripts (page size)")
    ] = None,
    plain_transcripts: Annotated[
        bool, typer.Option(help="embed transcripts as plain JSON (a bigger page)")
    ] = False,
    anova: Annotated[
        list[str] | None,
        typer.Option(
            help="ITT study: a judge demographic column for the two-way ANOVA (give two; "
            "default: the first two of gender, age_group, education, english with 2+ levels)"
        ),
    ] = None,
) -> None:
    """Print the GTT tables of a run, or write the full HTML report with --out.

    Given a study file of human verdicts instead of a run, writes the study report (--out)."""
    if not run_ref.strip():
        raise fail(
            "RUN|STUDY is empty; give a run id, id prefix or name (see `turinglab runs`), "
            "a study file or an ITT study folder"
        )
    if leaderboard and out is None:
        raise fail(
            "--leaderboard goes into the HTML report: give --out DIR too (the tables printed "
            "without --out have no rank agreement)"
        )
    if max_transcripts is not None and max_transcripts < 0:
        raise fail(f"--max-transcripts must be 0 or more, not {max_transcripts}")
    if out is not None:
        check_out_folder(out)
    if _itt_judgement_file(Path(run_ref)):
        run_ref = str(Path(run_ref).parent)  # an ITT study's judgements: report its folder
    if Path(run_ref).is_dir():
        # An ITT study folder (responses.csv, judgements.csv, study.json) or an `itt import`.
        from turinglab.report.itt_report import itt_report

        if anova and len(anova) != 2:
            raise fail(f"--anova takes two demographic columns (give it twice), not {len(anova)}")
        try:
            written = itt_report(Path(run_ref), out or Path("report"), anova=anova)
        except (OSError, ValueError) as err:
            raise fail(str(err)) from None
        console.print(f"wrote {written}", markup=False)
        return
    if Path(run_ref).suffix.lower() in STUDY_SUFFIXES:
        # A file name is never taken for a run name (a typo must not open, or create, a store).
        study = Path(run_ref)
        if not study.is_file():
            raise fail(f"study file {study}: no such file")
        study_report(study, out or Path("report"), stt, tags or [])
        return
    if missing not in ("wrong", "exclude", "as-0", "as-1"):
        raise fail(f"--missing must be wrong, exclude, as-0 or as-1, not {missing!r}")
    if estimator not in ("paper", "pooled"):
        raise fail(f"--estimator must be paper or pooled, not {estimator!r}")
    if not 0 <= epsilon < 1:
        raise fail(f"--epsilon must be in [0, 1), not {epsilon:g}")
    db = open_store(store)
    info = find_run(db, run_ref)
    if info.game != "gtt":
        if as_json:
            raise fail("--json reports GTT runs; this run is a human-style game")
        if out is None:
            # Nothing is written without --out: the outcomes, and the command for the report.
            print_game_outcomes(db, info.id, info.game, title=f"{info.name} ({info.id})")
            return
        # A human-style run is reported through its study file, as an arena study would be.
        study_run_report(db, info, out, tags or [])
        return
    if out is not None:
        from turinglab.report.gtt_report import build_gtt_report

        boards = _leaderboards(leaderboard or [])  # read first: a bad one writes no figure
        try:
            written = build_gtt_report(
                db,
                info.id,
                out,
                missing=missing,
                estimator=estimator,
                epsilon=epsilon,
                leaderboards=boards,
                max_transcripts=max_transcripts,
                compress_transcripts=not plain_transcripts,
            )
        except (OSError, ValueError) as err:
            raise fail(str(err)) from None
        if not as_json:
            console.print(f"wrote {written} (figures as PNG and SVG beside it)", markup=False)
            return
    from turinglab.report.console import gtt_json, print_gtt_report  # scipy: once needed
    from turinglab.store.lookup import shown_status
    from turinglab.store.records import analysis_rows

    universe = info.config.get("experiment", {}).get("universe")
    rows = analysis_rows(db.results(info.id))
    if as_json:
        import json

        payload = {"run": info.id, "name": info.name, "status": shown_status(info)}
        payload |= gtt_json(
            rows,
            planned=info.n_planned,
            universe=universe,
            missing=missing,  # type: ignore[arg-type]  # checked above
            estimator=estimator,  # type: ignore[arg-type]
        )
        if out is not None:
            payload["report"] = str(written)
        typer.echo(json.dumps(payload, indent=2, ensure_ascii=False, allow_nan=False))
        return
    print_gtt_report(
        console,
        rows,
        title=f"{info.name} ({info.id}, {shown_status(info)})",
        planned=info.n_planned,
        universe=universe,
        missing=missing,  # type: ignore[arg-type]  # checked above
        estimator=estimator,  # type: ignore[arg-type]  # checked above
    )


def _leaderboards(items: list[str]) -> dict[str, pd.DataFrame]:
    """Each NAME=CSV read and checked, before the report writes anything."""
    from turinglab.analysis.rank_agreement import load_leaderboard

    boards = {}
    for item in items:
        name, sep, csv_path = item.partition("=")
        if not sep or not name or not csv_path:
            raise fail(f"--leaderboard takes NAME=CSV, not {item!r}")
        try:
            boards[name] = load_leaderboard(Path(csv_path))
        except (OSError, ValueError) as err:
            raise fail(f"--leaderboard {item}: {err}") from None
    return boards


def study_run_report(db: Store, info: RunInfo, out: Path, tags: list[str]) -> None:
    """Export a human-style run as its study file into `out`, then report that file."""
    from turinglab.study_export import NotAStudyRun, export_study

    try:
        done = export_study(db, info, out)
    except NotAStudyRun as err:
        raise fail(f"{err}; `turinglab itt` reports conversation runs") from None
    console.print(
        f"wrote {done.path}: {done.rows} rows from {done.games} finished games", markup=False
    )
    if done.games == done.skipped:  # every row (if any) an exclusion
        raise fail(f"run {info.id} has no game with a usable verdict to report")
    if done.kind == "stt":
        # The study report needs verdict rows; an STT-only run gets its preference tables.
        from turinglab.human.strong import load_stt, stt_scores

        for score in stt_scores(load_stt(done.path)):
            console.print(str(score), highlight=False)
        return
    study_report(done.path, out, None, tags)


def study_report(path: Path, out: Path, stt_path: Path | None, tags: list[str]) -> None:
    import time

    from turinglab.human.schema import load_study

    started = time.perf_counter()
    try:
        study = load_study(path)
        # The report's modules (scipy, statsmodels, matplotlib) only for a study that loaded.
        from turinglab.human.strong import load_stt
        from turinglab.report.human_report import build_study_report, stderr_progress

        stderr_progress(f"read {path}: {len(study)} rows in {time.perf_counter() - started:.1f} s")
        preferences = load_stt(stt_path) if stt_path is not None else None
        tagger = {book: load_game_codes(Path(csv)) for book, csv in map(_split_tags, tags)}
        written = build_study_report(
            study,
            out,
            stt=preferences,
            tagger=tagger or None,
            validated=True,
            progress=stderr_progress,
        )
    except UnicodeDecodeError as err:
        raise fail(f"{path}: not UTF-8 text (byte offset {err.start}); save it as UTF-8") from None
    except (OSError, ValueError) as err:
        raise fail(str(err)) from None
    console.print(
        f"wrote {written} (figures as PNG and SVG beside it) in "
        f"{time.perf_counter() - started:.1f} s"
    )


def _itt_judgement_file(path: Path) -> bool:
    """An ITT judgements file (its header names judge_type and label), not a verdict file."""
    if path.suffix.lower() != ".csv" or not path.is_file():
        return False
    with path.open(encoding="utf-8-sig") as fh:
        header = fh.readline().strip().split(",")
    return {"judge_type", "label", "item"} <= set(header)


def _split_tags(item: str) -> tuple[str, str]:
    book, sep, csv = item.partition("=")
    if not sep or book not in ("strategies", "reasons") or not csv:
        raise ValueError(f"--tags takes strategies=CSV or reasons=CSV, not {item!r}")
    return book, csv


def load_game_codes(path: Path) -> dict[str, set[str]]:
    """Codes per game from `turinglab tag games --out` (one row per judgement; a three-party
    game's two conversations are pooled, as a game is what the shares count)."""
    import pandas as pd

    table = pd.read_csv(path, dtype=str, keep_default_na=False)
    if not {"game", "codes"} <= set(table.columns):
        raise ValueError(f"{path}: expected columns game and codes (from `turinglab tag games`)")
    codes: dict[str, set[str]] = {}
    for game, joined in zip(table["game"], table["codes"], strict=True):
        codes.setdefault(game, set()).update(c for c in joined.split(";") if c)
    return codes
